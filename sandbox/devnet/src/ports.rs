//! Free loopback ports for servers a sandbox starts a moment after choosing them (a PDS, its
//! PLC, a proxy, WebDriver). A port bound to `:0` and let go comes from the kernel's ephemeral
//! range, and so does the local port of every outgoing connection: any connection made in
//! between (a parallel test's) could take it before the server listens (CI, stop 43: a PLC's
//! port taken so, `EADDRINUSE`). These are drawn at random below that range instead, where only
//! another chooser could take one, and they draw at random too.

/// The lowest port drawn: below it are the well-known and registered services.
const LOWEST: u16 = 10_000;

/// A port free when asked, for a server started a moment later.
pub fn free_port() -> u16 {
    free_ports(1)[0]
}

/// `count` distinct ports, each free when asked.
pub fn free_ports(count: usize) -> Vec<u16> {
    let mut ports: Vec<u16> = Vec::with_capacity(count);
    while ports.len() < count {
        let port = one_free_port();
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    ports
}

fn one_free_port() -> u16 {
    let above = ephemeral_range_start().unwrap_or(32_768);
    if above <= LOWEST + 1_000 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        return listener.local_addr().expect("its address").port();
    }
    let random = std::hash::RandomState::new();
    (0u32..10_000)
        .map(|attempt| {
            let draw = std::hash::BuildHasher::hash_one(&random, attempt);
            LOWEST + u16::try_from(draw % u64::from(above - LOWEST)).unwrap_or(0)
        })
        .find(|&port| bindable(port))
        .unwrap_or_else(|| panic!("no free port between {LOWEST} and {above}"))
}

/// Whether nothing listens on `port`, on any address of either family.
fn bindable(port: u16) -> bool {
    let ipv4 = std::net::TcpListener::bind(("0.0.0.0", port)).is_ok();
    let ipv6 = std::net::TcpListener::bind(("::", port));
    ipv4 && (ipv6.is_ok() || ipv6.is_err_and(|error| error.kind() != std::io::ErrorKind::AddrInUse))
}

/// The first port of the kernel's ephemeral range (`ip_local_port_range`), where it can be read.
pub fn ephemeral_range_start() -> Option<u16> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    range.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn free_ports_are_distinct_below_the_ephemeral_range_and_bindable() {
        let above = super::ephemeral_range_start().unwrap_or(32_768);
        let ports = super::free_ports(20);
        for port in &ports {
            assert!(
                (super::LOWEST..above).contains(port),
                "{port} not below {above}"
            );
            std::net::TcpListener::bind(("127.0.0.1", *port)).expect("free when asked");
        }
        let distinct: std::collections::HashSet<_> = ports.iter().collect();
        assert_eq!(distinct.len(), 20, "distinct: {ports:?}");
        let again: Vec<u16> = (0..20).map(|_| super::free_port()).collect();
        assert_ne!(ports, again, "drawn at random");
    }
}
