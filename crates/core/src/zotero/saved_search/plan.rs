//! A saved search checked and prepared: its join mode, its flags, its conditions as rules, and which part of
//! the library the API can be asked for so that every result is among what is read.

use super::error::{SavedSearchError, Unsupported, UnsupportedSearch};
use super::model::SavedSearch;
use super::reader::EvaluationLimits;
use super::rule::{rule_of, Rule, Test};
use super::text::TextOp;
use crate::zotero::{schema, ObjectKey};

/// The conditions that are not tests of an item but change which items are looked at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Flags {
    /// `noChildren`: top-level items only.
    pub no_children: bool,
    /// `includeParentsAndChildren` or `includeParents`: a condition met by a child note or attachment is met by
    /// its parent too.
    pub include_parents: bool,
    /// `includeParentsAndChildren` or `includeChildren`: a condition met by an item is met by its child notes and
    /// attachments too.
    pub include_children: bool,
    /// `recursive`: a collection condition covers the collection's subcollections, at every depth.
    pub recursive: bool,
    /// `unfiled`: top-level items in no collection (trashed collections do not count) and not in My Publications.
    pub unfiled: bool,
    /// `deleted`: only items in the trash (and the children of trashed items).
    pub deleted: bool,
    /// `includeDeleted`: the trash and the rest alike.
    pub include_deleted: bool,
    /// `publications`: only items in My Publications.
    pub publications: bool,
}

impl Flags {
    pub fn extends(&self) -> bool {
        self.include_parents || self.include_children
    }
}

/// Which items to ask the API for: a superset of the results, however the conditions turn out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Narrowing {
    /// A collection every result is in (with `recursive`, in it or below it), when the search needs one.
    pub collection: Option<ObjectKey>,
    /// `tag` and `itemType` parameters every result meets.
    pub params: Vec<(&'static str, String)>,
    /// Top-level items are enough.
    pub top: bool,
    /// The trash is needed (for the results, or because a trashed child's conditions reach its parent).
    pub trashed: bool,
    /// No annotation can be a result, so none are read.
    pub no_annotations: bool,
}

/// A saved search ready to run: every condition understood, or the search refused before any request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPlan {
    pub(super) key: String,
    pub(super) name: String,
    /// `joinMode any`: one condition met is enough (else all must be).
    pub(super) any: bool,
    pub(super) flags: Flags,
    pub(super) rules: Vec<Rule>,
}

/// The conditions that are flags, with their bits: `noChildren`, `includeParents`, `includeChildren`, `recursive`,
/// `unfiled`, `deleted`, `includeDeleted`, `publications` (a table rather than a `match`: its string
/// comparisons cost wasm).
const FLAGS: [(&str, u8); 9] = [
    ("noChildren", 1),
    ("includeParentsAndChildren", 2 | 4),
    ("includeParents", 2),
    ("includeChildren", 4),
    ("recursive", 8),
    ("unfiled", 16),
    ("deleted", 32),
    ("includeDeleted", 64),
    ("publications", 128),
];

impl Flags {
    fn from_bits(bits: u8) -> Self {
        let on = |bit: u8| bits & bit != 0;
        Self {
            no_children: on(1),
            include_parents: on(2),
            include_children: on(4),
            recursive: on(8),
            unfiled: on(16),
            deleted: on(32),
            include_deleted: on(64),
            publications: on(128),
        }
    }
}

/// Why conditions Zotero has that tell about items this server cannot see, or that nest other searches, are
/// refused; [`REFUSED`] names them.
const REASONS: [&str; 4] = [
    "a saved search inside a saved search is not evaluated here; copy its conditions in instead",
    "retraction data lives in Zotero Desktop, not in the Web API",
    "feeds are not in the Web API",
    "condition groups are not evaluated here",
];
const REFUSED: [(&str, usize); 8] = [
    ("savedSearch", 0),
    ("retracted", 1),
    ("feed", 2),
    ("blockStart", 3),
    ("blockEnd", 3),
    ("groupStart", 3),
    ("groupEnd", 3),
    ("resultLevel", 3),
];

fn refused_special(name: &str) -> Option<&'static str> {
    if name.starts_with("quicksearch") {
        return Some("a quick-search condition is not evaluated here");
    }
    REFUSED.iter().find(|(n, _)| *n == name).map(|(_, reason)| REASONS[*reason])
}

impl SearchPlan {
    /// Checks every condition of `search` and prepares the rest. Refuses, naming every condition it cannot
    /// evaluate (and why), when there is one: results without it would answer a different question.
    pub fn new(search: &SavedSearch) -> Result<Self, UnsupportedSearch> {
        let mut flags = 0;
        let mut any = None;
        let mut rules = Vec::new();
        let mut unsupported = Vec::new();
        for condition in &search.conditions {
            let name = condition.condition.as_str();
            let on = condition.operator == "true";
            if name == "joinMode" {
                // The first join mode counts, as in Zotero; anything but `any` is `all`.
                any = any.or(Some(condition.operator == "any"));
                continue;
            }
            if let Some((_, bits)) = FLAGS.iter().find(|(n, _)| *n == name) {
                flags |= if on { *bits } else { 0 };
                continue;
            }
            // A flag that is off changes nothing, whatever it would have needed.
            if !on && (name == "retracted" || name == "feed") {
                continue;
            }
            let rule = match refused_special(name) {
                Some(reason) => Err(reason.to_owned()),
                None => rule_of(condition).map_err(|reason| reason.to_string()),
            };
            match rule {
                Ok(rule) => rules.push(rule),
                Err(reason) => unsupported.push(Unsupported {
                    condition: condition.condition.clone(),
                    operator: condition.operator.clone(),
                    reason,
                }),
            }
        }
        if !unsupported.is_empty() {
            return Err(UnsupportedSearch { search: search.name.clone(), conditions: unsupported });
        }
        Ok(Self {
            key: search.key.clone(),
            name: search.name.clone(),
            any: any.unwrap_or(false),
            flags: Flags::from_bits(flags),
            rules,
        })
    }

    /// The search's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The search's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many conditions test items (flags and the join mode are not among them).
    pub fn tests(&self) -> usize {
        self.rules.len()
    }

    /// Refuses a search with more conditions that test items than `limits` lets one evaluation decide.
    pub fn check_size(&self, limits: &EvaluationLimits) -> Result<(), SavedSearchError> {
        if self.rules.len() > limits.max_conditions {
            return Err(SavedSearchError::TooManyConditions {
                search: self.name.clone(),
                count: self.rules.len(),
                limit: limits.max_conditions,
            });
        }
        Ok(())
    }

    /// Whether every condition must hold: `all` mode, or one condition at most.
    pub(super) fn all_must_hold(&self) -> bool {
        !self.any || self.rules.len() <= 1
    }

    /// Whether an annotation could be a result. Annotations always have a parent, are in no collection and not
    /// in My Publications; a negated condition never takes one; so only some positive conditions can.
    fn annotations_may_match(&self) -> bool {
        let f = &self.flags;
        if f.no_children || f.unfiled || f.publications {
            return false;
        }
        if self.rules.is_empty() {
            return true;
        }
        if self.all_must_hold() {
            self.rules.iter().all(Rule::may_match_annotations)
        } else {
            self.rules.iter().any(Rule::may_match_annotations)
        }
    }

    /// What to ask the API for. Conditions are always checked again on what comes back, so a narrowing only
    /// has to keep every possible result: it uses positive conditions every result meets (all mode), and none
    /// that a parent or child could meet instead (`includeParents…`), except the collection, whose listing
    /// holds the members' child notes and attachments.
    pub(super) fn narrowing(&self) -> Narrowing {
        let flags = &self.flags;
        let mut narrowing = Narrowing {
            trashed: flags.deleted || flags.include_deleted || flags.extends(),
            top: !flags.extends() && (flags.no_children || flags.unfiled),
            ..Narrowing::default()
        };
        if self.all_must_hold() {
            narrowing.collection = self.rules.iter().find_map(|rule| match rule.test {
                Test::Collection if !rule.negated => ObjectKey::parse(&rule.value).ok(),
                _ => None,
            });
            if !flags.extends() {
                for rule in self.rules.iter().filter(|r| !r.negated) {
                    let value = rule.condition.value.as_str();
                    match rule.test {
                        // A leading hyphen or ` || ` would mean something else to the API.
                        Test::Tag if rule.op == TextOp::Is && !value.starts_with('-') && !value.contains("||") => {
                            narrowing.params.push(("tag", value.to_owned()));
                        }
                        Test::ItemType
                            if schema::is_item_type(value)
                                && !narrowing.params.iter().any(|(n, _)| *n == "itemType") =>
                        {
                            narrowing.params.push(("itemType", value.to_owned()));
                        }
                        _ => {}
                    }
                }
            }
        }
        if !narrowing.top && !self.annotations_may_match() && !narrowing.params.iter().any(|(n, _)| *n == "itemType") {
            narrowing.no_annotations = true;
        }
        narrowing
    }
}
