//! Which address a request comes from, for the native HTTP server to put in `CF-Connecting-IP` (where the login
//! throttle and the registration limit read it, as they read Cloudflare's on Workers).
//!
//! The socket's peer, unless the peer is this machine and the operator named the header a reverse proxy on it
//! writes the client's address in (`TRUSTED_PROXY_HEADER`). Only a loopback peer is believed: anyone else could
//! write the header themselves. From a list (`X-Forwarded-For: client, proxy1, proxy2`) the right-most entry is
//! taken, the one the proxy talking to us appended; entries to its left were written by whoever sent the
//! request and prove nothing.

use std::net::IpAddr;

/// The address to count a request under: from `trusted_header` (a lowercase header name) when `peer` is
/// loopback and the header's right-most entry is an IP address, else `peer`. Several lines of the header count
/// as one list, in order (RFC 9110 §5.3).
pub fn client_address(peer: IpAddr, headers: &http::HeaderMap, trusted_header: Option<&str>) -> IpAddr {
    let Some(name) = trusted_header else { return peer };
    if !is_loopback(peer) {
        return peer;
    }
    let last_line = headers.get_all(name).iter().next_back().and_then(|v| v.to_str().ok());
    last_line.and_then(|line| line.rsplit(',').next()).and_then(parse_entry).unwrap_or(peer)
}

/// One entry of the list: an address, IPv6 possibly in brackets. Anything else (a port, `unknown`, an
/// obfuscated identifier) is not an address.
fn parse_entry(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    let bare = entry.strip_prefix('[').and_then(|e| e.strip_suffix(']')).unwrap_or(entry);
    bare.parse().ok()
}

/// Whether an address is this machine's (an IPv4-mapped loopback address included).
pub fn is_loopback(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(lines: &[(&str, &str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in lines {
            map.append(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        map
    }

    const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    const XFF: Option<&str> = Some("x-forwarded-for");

    #[test]
    fn the_right_most_entry_of_a_loopback_peers_header_is_the_client() {
        let h = headers(&[("x-forwarded-for", "198.51.100.1, 203.0.113.7")]);
        assert_eq!(client_address(LOCAL, &h, XFF), "203.0.113.7".parse::<IpAddr>().unwrap());
        let h = headers(&[("x-forwarded-for", "10.0.0.1"), ("x-forwarded-for", "198.51.100.1,2001:db8::1")]);
        assert_eq!(client_address(LOCAL, &h, XFF), "2001:db8::1".parse::<IpAddr>().unwrap(), "the last line");
        let h = headers(&[("x-real-ip", " [2001:db8::2] ")]);
        assert_eq!(
            client_address("::1".parse().unwrap(), &h, Some("x-real-ip")),
            "2001:db8::2".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn otherwise_the_socket_peer_is_the_client() {
        let spoofed = headers(&[("x-forwarded-for", "203.0.113.7")]);
        let remote: IpAddr = "198.51.100.9".parse().unwrap();
        assert_eq!(client_address(remote, &spoofed, XFF), remote, "only a loopback peer is believed");
        assert_eq!(client_address(LOCAL, &spoofed, None), LOCAL, "only when a header is configured");
        assert_eq!(client_address(LOCAL, &headers(&[]), XFF), LOCAL, "a request without it");
        for junk in ["203.0.113.7:8080", "unknown", "", "203.0.113.7, ", "_hidden"] {
            assert_eq!(client_address(LOCAL, &headers(&[("x-forwarded-for", junk)]), XFF), LOCAL, "{junk:?}");
        }
    }

    #[test]
    fn loopback_addresses_are_recognised_and_nothing_else() {
        for raw in ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(raw.parse().unwrap()), "{raw}");
        }
        for raw in ["203.0.113.7", "2001:db8::1", "::ffff:203.0.113.7", "0.0.0.0", "::"] {
            assert!(!is_loopback(raw.parse().unwrap()), "{raw}");
        }
    }
}
