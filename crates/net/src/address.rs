//! Which IP addresses are the public internet. Everything else (loopback, private, link-local,
//! carrier-grade NAT, multicast, unspecified, documentation and benchmark ranges, and the IPv6
//! forms that embed an IPv4 address) is refused to a peer, whatever name led to it.
//!
//! Invariant: an IPv6 address that carries an IPv4 one (mapped `::ffff:a.b.c.d`, compatible
//! `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is refused: a peer has no reason to
//! name one, and the IPv4 address inside is named in the reason when it is special.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not on the public internet, or `None` when it is.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let reason = match (a, b, c) {
        (0, _, _) => "an unspecified (0.0.0.0/8) address",
        (10, _, _) => "a private (10.0.0.0/8) address",
        (100, 64..=127, _) => "a carrier-grade NAT (100.64.0.0/10) address",
        (127, _, _) => "a loopback address",
        (169, 254, _) => "a link-local (169.254.0.0/16) address",
        (172, 16..=31, _) => "a private (172.16.0.0/12) address",
        (192, 0, 0) => "an IETF protocol (192.0.0.0/24) address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (192, 88, 99) => "a 6to4 relay (192.88.99.0/24) address",
        (192, 168, _) => "a private (192.168.0.0/16) address",
        (198, 18..=19, _) => "a benchmarking (198.18.0.0/15) address",
        (224..=239, _, _) => "a multicast address",
        (240..=255, _, _) => "a reserved (240.0.0.0/4) or broadcast address",
        _ => return None,
    };
    Some(reason)
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return Some(non_public_v4(v4).unwrap_or("an IPv6 address carrying an IPv4 one"));
    }
    let first = ip.segments()[0];
    let reason = match first {
        _ if ip.is_unspecified() => "the unspecified address (::)",
        _ if ip.is_loopback() => "a loopback address",
        0xfe80..=0xfebf => "a link-local (fe80::/10) address",
        0xfec0..=0xfeff => "a site-local (fec0::/10) address",
        0xfc00..=0xfdff => "a unique-local (fc00::/7) address",
        0xff00..=0xffff => "a multicast address",
        0x2001 if ip.segments()[1] == 0x0db8 => "a documentation (2001:db8::/32) address",
        0x2001 if ip.segments()[1] < 0x0200 => "an IETF protocol (2001::/23) address",
        0x0000..=0x1fff => "an address outside the global unicast range",
        0x4000..=0xfbff => "an address outside the global unicast range",
        _ => return None,
    };
    Some(reason)
}

/// The IPv4 address an IPv6 one carries, if any.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(low),
        [0, 0, 0, 0, 0, 0, _, _] if !ip.is_loopback() && !ip.is_unspecified() => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        [0x2002, high, low16, ..] => Some(Ipv4Addr::new(
            (high >> 8) as u8,
            high as u8,
            (low16 >> 8) as u8,
            low16 as u8,
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> bool {
        non_public(text.parse().expect("an address")).is_some()
    }

    #[test]
    fn every_special_range_is_refused() {
        for address in [
            "127.0.0.1",
            "127.255.0.9",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
            "192.0.2.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:0001::1",
            "2001:db8::1",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(refused(address), "{address} must be refused");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
        ] {
            assert!(!refused(address), "{address} is public");
        }
    }
}
