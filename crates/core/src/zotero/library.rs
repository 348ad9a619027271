//! Which library a call works on, and what the API key may do in it.
//!
//! A library is named as Zotero names it in its paths, `users/<id>` or `groups/<id>` ([`LibraryId`]). What the
//! key may do comes from `GET /keys/current` ([`KeyAccess`]): its own user library (`access.user`) and its groups
//! (`access.groups.<id>`, or `access.groups.all` for every group the user belongs to).

use serde_json::Value;

/// Whose library: a user's own, or a group's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryKind {
    User,
    Group,
}

/// A library by its path: `users/<id>` or `groups/<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryId {
    pub kind: LibraryKind,
    pub id: u64,
}

impl LibraryId {
    /// `users/123` or `groups/456`, with or without a leading `/` (Zotero's own paths).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim().trim_start_matches('/').trim_end_matches('/');
        let (kind, id) = match text.split_once('/')? {
            ("users", id) => (LibraryKind::User, id),
            ("groups", id) => (LibraryKind::Group, id),
            _ => return None,
        };
        let valid = !id.is_empty() && id.len() <= 12 && id.bytes().all(|b| b.is_ascii_digit());
        Some(Self { kind, id: id.parse().ok().filter(|_| valid)? })
    }

    /// The path, as the `library` argument takes it and answers show it: `users/123`, `groups/456`.
    pub fn path(self) -> String {
        match self.kind {
            LibraryKind::User => format!("users/{}", self.id),
            LibraryKind::Group => format!("groups/{}", self.id),
        }
    }
}

impl std::fmt::Display for LibraryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.path())
    }
}

/// What the key may do in one library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LibraryRights {
    /// Read its items.
    pub library: bool,
    /// Change them.
    pub write: bool,
    /// Read (and, with `write`, store) its files on Zotero Storage. A group's files come with its library.
    pub files: bool,
}

/// The key's access, as `GET /keys/current` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAccess {
    /// The user the key belongs to.
    pub user_id: Option<u64>,
    /// Their Zotero user name.
    pub username: Option<String>,
    user: LibraryRights,
    /// `access.groups.all`: every group of the user.
    all_groups: Option<LibraryRights>,
    /// `access.groups.<id>`, one by one.
    groups: Vec<(u64, LibraryRights)>,
}

impl KeyAccess {
    /// Reads `/keys/current`'s answer. Anything missing counts as not allowed.
    pub fn from_key_info(info: &Value) -> Self {
        let access = &info["access"];
        let flag = |rights: &Value, name: &str| rights[name].as_bool() == Some(true);
        let group = |rights: &Value| LibraryRights {
            library: flag(rights, "library"),
            write: flag(rights, "write"),
            files: flag(rights, "library"),
        };
        let user = &access["user"];
        let groups = access["groups"].as_object();
        Self {
            user_id: info["userID"].as_u64(),
            username: info["username"].as_str().map(str::to_owned),
            user: LibraryRights {
                library: flag(user, "library"),
                write: flag(user, "write"),
                files: flag(user, "files"),
            },
            all_groups: groups.and_then(|g| g.get("all")).map(group),
            groups: groups
                .into_iter()
                .flatten()
                .filter_map(|(id, rights)| Some((id.parse().ok()?, group(rights))))
                .collect(),
        }
    }

    /// What the key may do in `library`; all false for a library it cannot reach. (Whether the user belongs to a
    /// group that `access.groups.all` covers is for the groups listing to say.)
    pub fn rights(&self, library: LibraryId) -> LibraryRights {
        match library.kind {
            LibraryKind::User if Some(library.id) == self.user_id => self.user,
            LibraryKind::User => LibraryRights::default(),
            LibraryKind::Group => self
                .groups
                .iter()
                .find(|(id, _)| *id == library.id)
                .map(|(_, rights)| *rights)
                .or(self.all_groups)
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_parse_as_zotero_writes_them_and_nothing_else() {
        assert_eq!(LibraryId::parse("users/123"), Some(LibraryId { kind: LibraryKind::User, id: 123 }));
        assert_eq!(LibraryId::parse("/groups/456/"), Some(LibraryId { kind: LibraryKind::Group, id: 456 }));
        for bad in
            ["groups/", "groups/abc", "teams/1", "users", "", "groups/1/items", "groups/-1", "groups/1234567890123"]
        {
            assert_eq!(LibraryId::parse(bad), None, "{bad}");
        }
        assert_eq!(LibraryId::parse("groups/7").map(LibraryId::path).as_deref(), Some("groups/7"));
    }

    #[test]
    fn rights_come_from_the_key_s_own_entries_then_all_groups() {
        let info = json!({
            "userID": 1,
            "access": {
                "user": { "library": true, "files": false, "write": true },
                "groups": { "10": { "library": true, "write": false }, "all": { "library": true, "write": true } }
            }
        });
        let access = KeyAccess::from_key_info(&info);
        let user = access.rights(LibraryId { kind: LibraryKind::User, id: 1 });
        assert_eq!(user, LibraryRights { library: true, write: true, files: false });
        assert_eq!(access.rights(LibraryId { kind: LibraryKind::User, id: 2 }), LibraryRights::default());
        let read_only = access.rights(LibraryId { kind: LibraryKind::Group, id: 10 });
        assert_eq!(read_only, LibraryRights { library: true, write: false, files: true });
        assert!(access.rights(LibraryId { kind: LibraryKind::Group, id: 11 }).write, "`all` covers the others");
        let none = KeyAccess::from_key_info(&json!({ "userID": 1, "access": { "user": { "library": true } } }));
        assert_eq!(none.rights(LibraryId { kind: LibraryKind::Group, id: 10 }), LibraryRights::default());
    }
}
