//! The resolver of requests sent with `HttpClient::send_public_limited` (URLs someone else chose): a host
//! name is resolved as usual, and every address off the public Internet (the core's [`is_public_ip`] rule) is
//! dropped before reqwest connects. The check and the connection therefore use the same answer: a name cannot
//! pass a check and then rebind to 127.0.0.1 for the connection.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use zotero_mcp_core::net::is_public_ip;

/// How names become addresses: the system's resolver, or fixed answers in tests.
type Lookup = Arc<dyn Fn(String) -> Resolving + Send + Sync>;

/// A resolver that answers with public addresses only.
#[derive(Clone)]
pub struct PublicResolver {
    lookup: Lookup,
}

impl PublicResolver {
    /// Resolves with the system's resolver (getaddrinfo, on tokio's blocking pool).
    pub fn system() -> Self {
        Self {
            lookup: Arc::new(|host: String| {
                Box::pin(async move {
                    let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
                    Ok(Box::new(found.collect::<Vec<_>>().into_iter()) as Addrs)
                })
            }),
        }
    }

    /// Every name resolves to `addresses` (tests: a name that resolves to loopback, without touching DNS).
    #[cfg(test)]
    pub fn fixed(addresses: Vec<IpAddr>) -> Self {
        Self {
            lookup: Arc::new(move |_| {
                let found: Vec<SocketAddr> = addresses.iter().map(|ip| SocketAddr::new(*ip, 0)).collect();
                Box::pin(async move { Ok(Box::new(found.into_iter()) as Addrs) })
            }),
        }
    }
}

impl Resolve for PublicResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let lookup = (self.lookup)(host.clone());
        Box::pin(async move {
            let (public, private): (Vec<SocketAddr>, Vec<SocketAddr>) =
                lookup.await?.partition(|address| is_public_ip(address.ip()));
            if public.is_empty() {
                let private = private.iter().map(SocketAddr::ip).collect();
                return Err(Box::new(OnlyPrivate { host, private }) as _);
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// A name whose every address is off the public Internet (or that has none). [`super::http`] finds it in
/// reqwest's error chain and reports `HttpError::NotPublic`.
#[derive(Debug, thiserror::Error)]
#[error("`{host}` resolves only to private addresses ({})", list(.private))]
pub struct OnlyPrivate {
    pub host: String,
    pub private: Vec<IpAddr>,
}

fn list(addresses: &[IpAddr]) -> String {
    if addresses.is_empty() {
        return "none at all".to_owned();
    }
    addresses.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// The [`OnlyPrivate`] somewhere in `error`'s chain of causes, if the resolver refused the name.
pub fn only_private<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a OnlyPrivate> {
    let mut cause = Some(error);
    while let Some(current) = cause {
        if let Some(found) = current.downcast_ref::<OnlyPrivate>() {
            return Some(found);
        }
        cause = current.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    async fn resolve(resolver: PublicResolver) -> Result<Vec<IpAddr>, String> {
        let name: Name = "files.example".parse().unwrap();
        match resolver.resolve(name).await {
            Ok(addresses) => Ok(addresses.map(|a| a.ip()).collect()),
            Err(error) => Err(error.to_string()),
        }
    }

    #[tokio::test]
    async fn private_answers_are_dropped_and_a_name_with_only_those_is_refused() {
        let mixed = PublicResolver::fixed(vec![ip("10.0.0.7"), ip("93.184.216.34"), ip("::1"), ip("2606:4700::1111")]);
        assert_eq!(resolve(mixed).await.unwrap(), [ip("93.184.216.34"), ip("2606:4700::1111")]);

        let private = PublicResolver::fixed(vec![ip("127.0.0.1"), ip("169.254.169.254"), ip("::ffff:192.168.1.1")]);
        let error = resolve(private).await.unwrap_err();
        assert_eq!(
            error,
            "`files.example` resolves only to private addresses (127.0.0.1, 169.254.169.254, ::ffff:192.168.1.1)"
        );
    }
}
