//! Which library's documents an index handle sees, when one AI Search instance holds several libraries.
//!
//! The configured (default) library's documents stay where the TypeScript project put them, `<KEY>.md` at the
//! instance's root, so an existing instance is used as it is: nothing is renamed or re-indexed. Every other
//! library's documents live in a folder named by its path, `groups/<id>/<KEY>.md` (or `users/<id>/…`). AI
//! Search derives the built-in `folder` attribute from a document's name (`groups/100/` for
//! `groups/100/ABCD2345.md`) and can filter on it before retrieval, so no custom metadata field is needed and
//! an instance's schema (fixed when it was created) never has to change.
//!
//! A search in a library's folder asks for `folder = groups/<id>/`; a search in the default library excludes
//! the folders of the other indexed libraries (`folder ∉ […]`), because what AI Search calls the root's folder
//! is not documented. Either way the answer is checked again by name ([`IndexScope::key_of`]): a chunk from
//! another library is dropped, never shown, even if the service filtered differently.

use serde_json::{json, Value};

use crate::zotero::LibraryId;

/// The documents of one library in the instance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndexScope {
    /// `""` for the default library (the root), `groups/<id>/` for another.
    folder: String,
    /// The folders of the other libraries this deployment indexes, for the default library's search filter.
    others: Vec<String>,
}

impl IndexScope {
    /// The configured library: documents at the root. `others` are the other libraries the deployment indexes.
    pub fn default_library(others: &[LibraryId]) -> Self {
        Self { folder: String::new(), others: others.iter().map(|id| folder_of(*id)).collect() }
    }

    /// Another library: documents in its folder.
    pub fn library(id: LibraryId) -> Self {
        Self { folder: folder_of(id), others: Vec::new() }
    }

    /// The folder, `""` for the root.
    pub fn folder(&self) -> &str {
        &self.folder
    }

    /// The document name of an item of this library.
    pub fn name(&self, key: &str) -> String {
        format!("{}{key}.md", self.folder)
    }

    /// The item key a document name stands for, when the document is this library's: directly in its folder
    /// (for the root, a name without any `/`).
    pub fn key_of<'a>(&self, name: &'a str) -> Option<&'a str> {
        let rest = name.strip_prefix(self.folder.as_str())?;
        if rest.contains('/') {
            return None;
        }
        Some(rest.strip_suffix(".md").unwrap_or(rest))
    }

    /// The `folder` filter of a search in this library, when one is needed.
    pub fn filter(&self) -> Option<Value> {
        if !self.folder.is_empty() {
            Some(json!({ "$eq": self.folder }))
        } else if !self.others.is_empty() {
            Some(json!({ "$nin": self.others }))
        } else {
            None
        }
    }
}

/// `groups/<id>/`: a library's folder in the instance.
fn folder_of(id: LibraryId) -> String {
    format!("{}/", id.path())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zotero::LibraryKind;

    const GROUP: LibraryId = LibraryId { kind: LibraryKind::Group, id: 100 };

    #[test]
    fn the_default_library_keeps_the_typescript_projects_names() {
        let scope = IndexScope::default_library(&[GROUP]);
        assert_eq!(scope.name("ABCD2345"), "ABCD2345.md");
        assert_eq!(scope.key_of("ABCD2345.md"), Some("ABCD2345"));
        assert_eq!(scope.key_of("groups/100/ABCD2345.md"), None, "another library's document is not the root's");
        assert_eq!(scope.filter(), Some(json!({ "$nin": ["groups/100/"] })));
        assert_eq!(IndexScope::default_library(&[]).filter(), None, "one library: no filter, as before");
    }

    #[test]
    fn another_library_lives_in_its_folder() {
        let scope = IndexScope::library(GROUP);
        assert_eq!(scope.name("ABCD2345"), "groups/100/ABCD2345.md");
        assert_eq!(scope.key_of("groups/100/ABCD2345.md"), Some("ABCD2345"));
        assert_eq!(scope.key_of("ABCD2345.md"), None);
        assert_eq!(scope.key_of("groups/1000/ABCD2345.md"), None);
        assert_eq!(scope.key_of("groups/100/x/ABCD2345.md"), None);
        assert_eq!(scope.filter(), Some(json!({ "$eq": "groups/100/" })));
    }
}
