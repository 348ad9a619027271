//! Query parameters for listings, in the order they are added. Empty values are skipped, so optional filters
//! can be passed through without checks at every call site.

/// How `q` is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QMode {
    /// Title, creators and year (Zotero's default).
    TitleCreatorYear,
    /// Title, creators and year, and indexed full text (the dataserver searches no other field: not a DOI, an
    /// ISBN, `extra` or a note's body).
    Everything,
}

impl QMode {
    fn as_str(self) -> &'static str {
        match self {
            QMode::TitleCreatorYear => "titleCreatorYear",
            QMode::Everything => "everything",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    params: Vec<(String, String)>,
}

impl Query {
    pub fn new() -> Self {
        Self::default()
    }

    /// Any parameter; skipped when the value is empty.
    pub fn param(mut self, name: &str, value: impl Into<String>) -> Self {
        let value = value.into();
        if !value.is_empty() {
            self.params.push((name.to_owned(), value));
        }
        self
    }

    pub fn q(self, text: &str, mode: QMode) -> Self {
        let has_text = !text.trim().is_empty();
        let query = self.param("q", text.trim());
        if has_text {
            query.param("qmode", mode.as_str())
        } else {
            query
        }
    }

    /// One `tag` parameter. Several `tag` parameters must all match; `a || b` matches either; `-a` excludes.
    pub fn tag(self, expression: &str) -> Self {
        self.param("tag", expression)
    }

    /// Whether a parameter `name` is set.
    pub fn has(&self, name: &str) -> bool {
        self.params.iter().any(|(n, _)| n == name)
    }

    /// The values of every parameter `name`, in the order set (`tag` may be given more than once).
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.params.iter().filter(move |(n, _)| n == name).map(|(_, value)| value.as_str())
    }

    /// One item type, optionally negated (`-attachment`).
    pub fn item_type(self, expression: &str) -> Self {
        self.param("itemType", expression)
    }

    pub fn since(self, version: u64) -> Self {
        self.param("since", version.to_string())
    }

    pub fn include_trashed(self, yes: bool) -> Self {
        if yes {
            self.param("includeTrashed", "1")
        } else {
            self
        }
    }

    pub fn sort(self, field: &str, descending: bool) -> Self {
        self.param("sort", field).param("direction", if descending { "desc" } else { "asc" })
    }

    /// Start the listing this many objects in (Zotero's `start`); the client pages on from there.
    pub fn offset(self, start: usize) -> Self {
        if start == 0 {
            self
        } else {
            self.param("start", start.to_string())
        }
    }

    /// The `start` this query begins at.
    /// The names of the parameters set, in the order set.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.params.iter().map(|(name, _)| name.as_str())
    }

    pub fn initial_offset(&self) -> usize {
        self.params.iter().find(|(n, _)| n == "start").and_then(|(_, v)| v.parse().ok()).unwrap_or(0)
    }

    pub(crate) fn into_params(self) -> Vec<(String, String)> {
        self.params
    }

    pub(crate) fn with_page(&self, start: usize, limit: usize) -> Vec<(String, String)> {
        let mut params = self.params.clone();
        params.retain(|(name, _)| name != "start" && name != "limit");
        params.push(("start".into(), start.to_string()));
        params.push(("limit".into(), limit.to_string()));
        params
    }
}
