//! The login throttle against what an attacker actually has: a whole IPv6 /64, many addresses, and a KV store
//! that has run out of writes.

mod oauth_support;

use oauth_support::*;

async fn consent_path(h: &Harness) -> String {
    let client = h.public_client(REDIRECT).await;
    h.authorize_path(&client, REDIRECT, &[])
}

#[tokio::test]
async fn rotating_addresses_inside_one_ipv6_64_buys_no_more_guesses() {
    let h = Harness::new();
    let path = consent_path(&h).await;
    for i in 0..8 {
        let address = format!("2001:db8:aa:bb:{i:x}::{i:x}");
        assert_eq!(h.approve_from(&path, &[("password", "guess")], &address).await.status, 401);
    }
    let locked = h.approve_from(&path, &[("password", PASSWORD)], "2001:db8:aa:bb:ffff::1").await;
    assert_eq!(locked.status, 429, "the ninth address of the same /64 is the same client");
    // The window ends 15 minutes after the last counted attempt; the failures' delays have run since.
    let retry_after: u64 = locked.header("retry-after").parse().unwrap();
    assert!((890..=900).contains(&retry_after), "{retry_after}");
    assert!(h.grant_keys().await.is_empty());
    let neighbour = h.approve_from(&path, &[("password", PASSWORD)], "2001:db8:aa:bc::1").await;
    assert_eq!(neighbour.status, 303, "another /64 is another client");
}

#[tokio::test]
async fn the_ipv6_prefix_is_configurable() {
    let h = Harness::with_vars(&[("LOGIN_IPV6_PREFIX", "48")]);
    let path = consent_path(&h).await;
    for i in 0..8 {
        let address = format!("2001:db8:aa:{i:x}::1");
        assert_eq!(h.approve_from(&path, &[("password", "guess")], &address).await.status, 401);
    }
    assert_eq!(h.approve_from(&path, &[("password", PASSWORD)], "2001:db8:aa:ff::1").await.status, 429);
}

#[tokio::test]
async fn many_addresses_together_have_one_budget_of_failures() {
    let h = Harness::new();
    let path = consent_path(&h).await;
    for i in 0..64 {
        let address = format!("198.51.{}.{}", i / 7, i % 7 + 1);
        assert_eq!(h.approve_from(&path, &[("password", "guess")], &address).await.status, 401, "failure {i}");
    }
    let fresh = h.approve_from(&path, &[("password", PASSWORD)], "192.0.2.200").await;
    assert_eq!(fresh.status, 429, "a fresh address is refused once the server's budget is spent");
    assert!(fresh.text.contains("on this server"), "{}", fresh.text);
    assert!(h.grant_keys().await.is_empty());
    h.clock.advance_secs(15 * 60);
    assert_eq!(h.approve_from(&path, &[("password", PASSWORD)], "192.0.2.200").await.status, 303);
}

#[tokio::test]
async fn an_attempt_that_cannot_be_counted_is_not_checked() {
    let mut h = Harness::new();
    let kv = RefusingKv::around_cache(&mut h);
    let path = consent_path(&h).await;
    kv.refusing.set(true);
    for password in ["guess", PASSWORD] {
        let refused = h.approve(&path, &[("password", password)]).await;
        assert_eq!(refused.status, 429, "{password}: refused, not 500 and not checked");
        assert_eq!(refused.header("retry-after"), "60");
    }
    assert!(h.grant_keys().await.is_empty(), "the right password was not even looked at");
    kv.refusing.set(false);
    assert_eq!(h.approve(&path, &[("password", PASSWORD)]).await.status, 303);
}
