//! `application/x-www-form-urlencoded` bodies and query strings, kept as ordered (name, value) pairs so that a
//! repeated parameter is seen (the token endpoint refuses them; `scope` checkboxes and `resource` repeat legally).
//!
//! A form reaches the parser before the client is authenticated, so anyone can send one. Parsing and the
//! repeated-name check are linear in the body, and [`Params::parse_bounded`] refuses a body or a parameter count
//! far beyond any OAuth request before doing per-parameter work (a 150,000-name form once took 35 s to check).

use std::collections::HashMap;

use super::error::AuthError;

/// Most parameters a form may have. The largest legitimate request, a token request, has about ten; the consent
/// form a password and a few scope boxes.
pub const MAX_PARAMS: usize = 100;
/// Largest form body accepted, in bytes. A token request is well under 4 KiB, even with a 2 KiB redirect URI.
pub const MAX_BYTES: usize = 64 * 1024;

/// Why a form was refused before it was read. Each message says what to send instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    #[error("The form is {bytes} bytes; at most {MAX_BYTES} bytes (64 KiB) are accepted. Send only the parameters this request needs.")]
    TooLarge { bytes: usize },
    #[error("The form has more than {MAX_PARAMS} parameters; at most {MAX_PARAMS} are accepted. Send only the parameters this request needs.")]
    TooManyParams,
}

/// A refused form is the client's malformed request (RFC 6749 §5.2 `invalid_request`).
impl From<FormError> for AuthError {
    fn from(error: FormError) -> Self {
        AuthError::invalid_request(error.to_string())
    }
}

/// Parsed form or query parameters.
#[derive(Debug, Default, Clone)]
pub struct Params(Vec<(String, String)>);

impl Params {
    /// Parses a request body, refusing one over [`MAX_BYTES`] (checked before any decoding) or with more than
    /// [`MAX_PARAMS`] parameters (parsing stops at the first one too many). `?` turns the refusal into
    /// `invalid_request` with a description that says what to send instead; prefer this for every body.
    pub fn parse_bounded(bytes: &[u8]) -> Result<Self, FormError> {
        if bytes.len() > MAX_BYTES {
            return Err(FormError::TooLarge { bytes: bytes.len() });
        }
        let mut pairs = Vec::new();
        for (name, value) in form_urlencoded::parse(bytes) {
            if pairs.len() == MAX_PARAMS {
                return Err(FormError::TooManyParams);
            }
            pairs.push((name.into_owned(), value.into_owned()));
        }
        Ok(Self(pairs))
    }

    /// Parses a request body within the same limits, a body over them as no parameters at all (the tests'
    /// shorthand; the endpoints use [`Params::parse_bounded`], which says why).
    #[cfg(test)]
    pub fn parse(bytes: &[u8]) -> Self {
        Self::parse_bounded(bytes).unwrap_or_default()
    }

    /// Parses a URL query, without limits: the runtime bounds a URL's length (16 KiB on Workers), and nothing
    /// checks a query for repeated names.
    pub fn from_query(query: Option<&str>) -> Self {
        let query = query.unwrap_or("").as_bytes();
        Self(form_urlencoded::parse(query).map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The first value of `name`, treating an empty value as absent (as `searchParams.get(..) || ''` does).
    pub fn non_empty(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.is_empty())
    }

    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k == name)
    }

    /// The first parameter name given more than once, other than those in `repeatable`; "first" in the order of
    /// the names' first appearance. One pass counts the names, a second finds the first counted twice: linear,
    /// where comparing every pair was quadratic in the number of parameters.
    pub fn first_repeated(&self, repeatable: &[&str]) -> Option<&str> {
        let mut counts: HashMap<&str, usize> = HashMap::with_capacity(self.0.len());
        for (name, _) in &self.0 {
            *counts.entry(name.as_str()).or_insert(0) += 1;
        }
        self.0
            .iter()
            .map(|(name, _)| name.as_str())
            .find(|name| counts.get(name).is_some_and(|&n| n > 1) && !repeatable.contains(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x0=&x1=&…`: `count` distinct names.
    fn distinct_names(count: usize) -> String {
        (0..count).map(|i| format!("x{i}=")).collect::<Vec<_>>().join("&")
    }

    #[test]
    fn repeated_parameters_are_found_unless_allowed() {
        let p = Params::parse(b"a=1&resource=x&resource=y&b=2");
        assert_eq!(p.first_repeated(&["resource"]), None);
        assert_eq!(p.first_repeated(&[]), Some("resource"));
        assert_eq!(p.all("resource"), ["x", "y"]);
        let q = Params::parse(b"code=1&code=2");
        assert_eq!(q.first_repeated(&["resource"]), Some("code"));
    }

    #[test]
    fn the_linear_check_reports_the_same_name_as_the_pairwise_one() {
        // `a` appears first, although `b` is the first to be seen twice: the name reported is still `a`.
        let p = Params::parse(b"a=1&b=1&b=2&a=2");
        assert_eq!(p.first_repeated(&[]), Some("a"));
        assert_eq!(p.first_repeated(&["a"]), Some("b"));
        assert_eq!(p.first_repeated(&["a", "b"]), None);
        // An empty name is a name like any other.
        assert_eq!(Params::parse(b"=1&=2").first_repeated(&[]), Some(""));
        // 150,000 distinct names (the review's body; `from_query` parses without limits) hold no repetition, and
        // a repeat at the very end is still found. Comparing every pair took ~10^10 comparisons here.
        let names = distinct_names(150_000);
        assert_eq!(Params::from_query(Some(&names)).first_repeated(&[]), None);
        let late = format!("{names}&x149999=again");
        assert_eq!(Params::from_query(Some(&late)).first_repeated(&[]), Some("x149999"));
    }

    #[test]
    fn a_form_of_150000_names_is_refused_by_the_bounded_parser() {
        let body = distinct_names(150_000);
        assert!(body.len() > MAX_BYTES, "the body alone is over the byte limit");
        assert_eq!(Params::parse_bounded(body.as_bytes()).unwrap_err(), FormError::TooLarge { bytes: body.len() });
        // Short names that fit the byte limit are stopped by the count.
        let short = vec!["a="; 150_000].join("&");
        let short = &short[..MAX_BYTES];
        assert_eq!(Params::parse_bounded(short.as_bytes()).unwrap_err(), FormError::TooManyParams);
    }

    #[test]
    fn the_infallible_parser_reads_a_form_over_the_limits_as_empty() {
        let p = Params::parse(format!("client_id=abc&{}", distinct_names(150_000)).as_bytes());
        assert!(!p.has("client_id"));
        assert_eq!(p.first_repeated(&[]), None);
        assert_eq!(Params::parse(b"client_id=abc").get("client_id"), Some("abc"));
    }

    #[test]
    fn the_bounded_parser_accepts_up_to_the_limits() {
        let exactly = distinct_names(MAX_PARAMS);
        assert_eq!(Params::parse_bounded(exactly.as_bytes()).map(|p| p.0.len()), Ok(MAX_PARAMS));
        let one_more = distinct_names(MAX_PARAMS + 1);
        assert_eq!(Params::parse_bounded(one_more.as_bytes()).unwrap_err(), FormError::TooManyParams);
        // Empty segments (`&&`) are not parameters.
        assert_eq!(Params::parse_bounded(&[b'&'; MAX_BYTES]).map(|p| p.0.len()), Ok(0));
        let long_value = format!("code={}", "v".repeat(MAX_BYTES - 5));
        assert_eq!(long_value.len(), MAX_BYTES);
        assert_eq!(
            Params::parse_bounded(long_value.as_bytes()).unwrap().get("code").map(str::len),
            Some(MAX_BYTES - 5)
        );
        let too_long = format!("{long_value}v");
        assert!(
            matches!(Params::parse_bounded(too_long.as_bytes()), Err(FormError::TooLarge { bytes }) if bytes == MAX_BYTES + 1)
        );
    }

    #[test]
    fn refusals_are_invalid_request_and_say_what_to_do() {
        let AuthError::OAuth { code, description, status, .. } = AuthError::from(FormError::TooManyParams) else {
            panic!("an OAuth error");
        };
        assert_eq!((code.as_str(), status), ("invalid_request", 400));
        assert!(description.contains("at most 100") && description.contains("Send only"), "{description}");
        let large = FormError::TooLarge { bytes: 70_000 }.to_string();
        assert!(large.contains("70000 bytes") && large.contains("65536"), "{large}");
    }

    #[test]
    fn values_are_decoded() {
        let p = Params::parse(b"scope=zotero%3Aread+zotero%3Awrite&empty=");
        assert_eq!(p.get("scope"), Some("zotero:read zotero:write"));
        assert_eq!(p.non_empty("empty"), None);
        assert!(p.has("empty"));
    }
}
