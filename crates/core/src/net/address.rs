//! Which hosts a URL someone else chose may point at: the public Internet only.
//!
//! These are checks on the host *as written*. A host name is not resolved here (the core has no resolver, and
//! a name checked now may resolve differently when fetched); stopping names that resolve to private addresses
//! is the runtime's job, with [`is_public_ip`] as the rule (see [`super`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::Host;

/// Whether `ip` is on the public Internet: not private (RFC 1918), loopback, link-local, shared/CGNAT,
/// "this network", benchmarking, documentation, multicast or reserved; for IPv6 also not unique-local,
/// site-local, NAT64 (which can reach private IPv4), IPv4-compatible, or an IPv4-mapped non-public address.
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

/// Whether a URL's host may be fetched: a public literal address, or a name other than `localhost` and
/// `*.localhost` (RFC 6761 reserves those for loopback). Names are not resolved.
pub fn is_public_host(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => is_public_v4(*ip),
        Host::Ipv6(ip) => is_public_v6(*ip),
        Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            !(name == "localhost" || name.ends_with(".localhost"))
        }
    }
}

/// Whether a URL's host is this machine as written: `127.0.0.0/8`, `::1` or `localhost` (with or without the
/// trailing dot). For a test or development server that a caller explicitly allows.
pub fn is_loopback_host(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
        Host::Domain(name) => name.strip_suffix('.').unwrap_or(name).eq_ignore_ascii_case("localhost"),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (first == 0x2001 && ip.segments()[1] == 0x0db8) // documentation
        || (first == 0x0064 && ip.segments()[1] == 0xff9b) // NAT64 can reach private IPv4
        || ip.segments()[..6].iter().all(|s| *s == 0)) // IPv4-compatible
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(url: &str) -> bool {
        let parsed = crate::net::parse_url(url).unwrap();
        is_public_host(&parsed.host().unwrap())
    }

    #[test]
    fn non_public_literal_addresses_are_refused() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.255",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::127.0.0.1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2001:db8::1",
            "fc00::1",
            "fd00::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
        ] {
            assert!(!is_public_ip(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "100.128.0.1", "2606:4700::1111", "::ffff:93.184.216.34"] {
            assert!(is_public_ip(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn hosts_are_judged_as_written_and_localhost_names_are_not_public() {
        for url in [
            "https://localhost/",
            "https://LOCALHOST./",
            "https://app.localhost/",
            "https://0x7f.1/",
            "https://2130706433/",
            "https://[::1]/",
        ] {
            assert!(!host(url), "{url}");
        }
        for url in ["https://example.org/", "https://localhost.example/", "https://93.184.216.34/"] {
            assert!(host(url), "{url}");
        }
    }

    #[test]
    fn loopback_is_127_slash_8_ipv6_one_and_localhost() {
        let loopback = |url: &str| is_loopback_host(&crate::net::parse_url(url).unwrap().host().unwrap());
        for url in
            ["http://127.0.0.1:8080/", "http://127.9.9.9/", "http://[::1]/", "http://localhost/", "http://LocalHost./"]
        {
            assert!(loopback(url), "{url}");
        }
        for url in ["http://10.0.0.1/", "http://[::ffff:127.0.0.1]/", "http://app.localhost/", "http://example.org/"] {
            assert!(!loopback(url), "{url}");
        }
    }
}
