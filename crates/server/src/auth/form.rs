//! `application/x-www-form-urlencoded` bodies and query strings, kept as ordered (name, value) pairs so that a
//! repeated parameter is seen (the token endpoint refuses them; `scope` checkboxes and `resource` repeat legally).

/// Parsed form or query parameters.
#[derive(Debug, Default, Clone)]
pub struct Params(Vec<(String, String)>);

impl Params {
    pub fn parse(bytes: &[u8]) -> Self {
        Self(form_urlencoded::parse(bytes).map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
    }

    pub fn from_query(query: Option<&str>) -> Self {
        Self::parse(query.unwrap_or("").as_bytes())
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

    /// The first parameter name given more than once, other than those in `repeatable`.
    pub fn first_repeated(&self, repeatable: &[&str]) -> Option<&str> {
        self.0.iter().enumerate().find_map(|(i, (name, _))| {
            let again = self.0[i + 1..].iter().any(|(other, _)| other == name);
            (again && !repeatable.contains(&name.as_str())).then_some(name.as_str())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn values_are_decoded() {
        let p = Params::parse(b"scope=zotero%3Aread+zotero%3Awrite&empty=");
        assert_eq!(p.get("scope"), Some("zotero:read zotero:write"));
        assert_eq!(p.non_empty("empty"), None);
        assert!(p.has("empty"));
    }
}
