//! Sandboxes a test keeps in a directory of its own (to stop and start again on the same data,
//! as a restart of the owner's machine would), alone or behind a [`FaultProxy`] on the PDS's
//! public port; and free loopback ports for them.

use std::path::Path;

use swdesk_devnet::{FaultProxy, SandboxPds, Storage};

/// The lowest port these choose: below it are the well-known and registered services.
const LOWEST: u16 = 10_000;

/// A port free when asked, for a server the test starts a moment later (a sandbox's PDS, its
/// PLC, a proxy). Chosen at random below the kernel's ephemeral range: a port bound to `:0`
/// comes from that range, and so does every outgoing connection's, so any connection made in
/// between (a parallel test's) could take it before the server listens (CI, stop 43: the PLC's
/// port taken so, `EADDRINUSE`). Below the range only another chooser can, and they pick at
/// random.
pub fn free_port() -> u16 {
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

/// The first port of the kernel's ephemeral range (`ip_local_port_range`).
fn ephemeral_range_start() -> Option<u16> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    range.split_whitespace().next()?.parse().ok()
}

/// Where a sandbox kept in `dir` lives, on free ports.
pub fn kept_storage(dir: &Path) -> Storage {
    Storage::Persistent {
        dir: dir.join("sandbox"),
        pds_port: free_port(),
        plc_port: free_port(),
    }
}

/// A sandbox PDS whose data is kept in `dir`, so it can be stopped and started again.
pub async fn sandbox_kept_in(dir: &Path) -> (Storage, SandboxPds) {
    let storage = kept_storage(dir);
    let pds = SandboxPds::start_with(&storage, &[])
        .await
        .expect("the kept sandbox PDS starts");
    (storage, pds)
}

/// A sandbox PDS kept in `dir` with a [`FaultProxy`] on its public port: every client reaches
/// the PDS through the proxy (its DID documents name the public port), so a test can make the
/// PDS fail on a schedule.
pub async fn pds_behind_proxy(dir: &Path) -> (Storage, SandboxPds, FaultProxy) {
    let storage = kept_storage(dir);
    let Storage::Persistent { pds_port, .. } = storage else {
        unreachable!("a kept sandbox is persistent");
    };
    let listen_port = free_port();
    let proxy = FaultProxy::start(pds_port, listen_port)
        .await
        .expect("the fault proxy starts");
    let pds = SandboxPds::start_listening_on(&storage, listen_port, &[])
        .await
        .expect("the sandbox PDS starts");
    (storage, pds, proxy)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_free_port_is_below_the_ephemeral_range_and_bindable() {
        let above = super::ephemeral_range_start().unwrap_or(32_768);
        let ports: Vec<u16> = (0..20).map(|_| super::free_port()).collect();
        for port in &ports {
            assert!(
                (super::LOWEST..above).contains(port),
                "{port} not below {above}"
            );
            std::net::TcpListener::bind(("127.0.0.1", *port)).expect("free when asked");
        }
        let distinct: std::collections::HashSet<_> = ports.iter().collect();
        assert!(distinct.len() > 15, "drawn at random: {ports:?}");
    }
}
