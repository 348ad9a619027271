//! Attachment file names from the parent item's metadata, the way Zotero 7 names them: its filename template
//! language (`{{ firstCreator suffix=" - " }}`, attributes, `{{ if }}` blocks), its variables, and its rules for a
//! name every platform can store.
//!
//! The aim is that a name this module gives matches the one Zotero Desktop would give, so renaming a library that
//! Desktop already named changes nothing, and renaming twice is the same as renaming once.

mod creators;
mod expressions;
mod modifiers;
mod names;
mod render;
mod syntax;
#[cfg(test)]
mod tests;
mod variables;

use serde_json::{Map, Value};

pub use self::creators::first_creator;
pub use self::names::{extension_of, valid_file_name};
pub use self::syntax::TemplateError;

use self::names::tidy_name;
use self::render::{render_tokens, Ctx};
use self::syntax::{Parser, Token};

/// Zotero's default template: "Vaswani and Shazeer - 2017 - Attention Is All You Need".
pub const DEFAULT_TEMPLATE: &str =
    r#"{{ firstCreator suffix=" - " }}{{ year suffix=" - " }}{{ title truncate="100" }}"#;

/// The longest file name given, in characters (Unicode scalar values), extension included.
pub const MAX_FILENAME_CHARS: usize = 200;

/// The longest file name given, in UTF-8 bytes, extension included: the limit of Linux and macOS file systems,
/// which [`MAX_FILENAME_CHARS`] characters alone would not keep to (200 CJK characters are about 600 bytes).
pub const MAX_FILENAME_BYTES: usize = 255;

/// Rejects a template that would not render as its author meant: unbalanced braces or `if` blocks, a tag that
/// is not a variable, an unknown attribute or case, a number that is not one, an invalid regular expression.
/// Rendering never fails (a broken part renders as nothing, as in Zotero); this is for refusing a bad template
/// before anything is renamed with it.
pub fn check_template(template: &str) -> Result<(), TemplateError> {
    Template::checked(template).map(|_| ())
}

/// The template rendered for an item (its Web API `data` object), HTML tags removed and trimmed, before it is made
/// a valid file name. `creator_summary` is the item's `meta.creatorSummary`, which Zotero computes with its full
/// schema.
pub fn render(template: &str, item: &Map<String, Value>, creator_summary: Option<&str>) -> String {
    Template::parse(template).render(item, creator_summary)
}

/// The name an attachment gets after its parent item: the template rendered for `parent` (the parent item's
/// `data`), made valid, plus the extension of `current_filename`. The whole name keeps to [`MAX_FILENAME_CHARS`]
/// characters and [`MAX_FILENAME_BYTES`] bytes, the base being cut so the extension never is. `None` when the
/// template renders to nothing usable, in which case the caller keeps the current name.
pub fn build_renamed_filename(
    parent: &Map<String, Value>,
    current_filename: &str,
    template: &str,
    creator_summary: Option<&str>,
) -> Option<String> {
    Template::parse(template).file_name(parent, current_filename, creator_summary)
}

/// A parsed template, for rendering many items without parsing again.
#[derive(Debug)]
pub struct Template {
    tokens: Vec<Token>,
    problems: Vec<TemplateError>,
}

impl Template {
    /// Parses leniently, as Zotero does: whatever cannot be read renders as nothing or as literal text. The
    /// problems found are kept in [`Template::problems`].
    pub fn parse(template: &str) -> Self {
        let mut parser = Parser::new(template);
        parser.run();
        Template { tokens: parser.tokens, problems: parser.problems }
    }

    /// Parses, refusing a template with any problem (the first one is returned).
    pub fn checked(template: &str) -> Result<Self, TemplateError> {
        let mut parsed = Self::parse(template);
        if parsed.problems.is_empty() {
            Ok(parsed)
        } else {
            Err(parsed.problems.swap_remove(0))
        }
    }

    /// What is wrong with the template, in the order found; empty when it is well formed.
    pub fn problems(&self) -> &[TemplateError] {
        &self.problems
    }

    /// See [`render()`].
    pub fn render(&self, item: &Map<String, Value>, creator_summary: Option<&str>) -> String {
        render_tokens(&self.tokens, &Ctx { item, creator_summary })
    }

    /// See [`build_renamed_filename`].
    pub fn file_name(
        &self,
        parent: &Map<String, Value>,
        current_filename: &str,
        creator_summary: Option<&str>,
    ) -> Option<String> {
        let rendered = self.render(parent, creator_summary);
        // A file without an extension that this template already named ("Version 2.0") must keep its name, not
        // have "0" taken for its extension and gain another.
        let bare = tidy_name(&rendered, MAX_FILENAME_CHARS, MAX_FILENAME_BYTES, true);
        if bare.is_empty() {
            return None;
        }
        let ext = extension_of(current_filename);
        if ext.is_empty() || current_filename == bare {
            return Some(bare);
        }
        // The extension is kept whole: the base is cut to leave room for it (and its dot). An extension is ASCII,
        // so its length is the same in characters and in bytes.
        let room = ext.len() + 1;
        let base = tidy_name(&rendered, MAX_FILENAME_CHARS - room, MAX_FILENAME_BYTES - room, false);
        if base.is_empty() {
            return None;
        }
        Some(format!("{base}.{ext}"))
    }
}
