//! Attachment file names from the parent item's metadata, the way Zotero 7 names them: its filename template
//! language (`{{ firstCreator suffix=" - " }}`, attributes, `{{ if }}` blocks), its variables, and its rules for a
//! name every platform can store.
//!
//! The aim is that a name this module gives matches the one Zotero Desktop would give, so renaming a library that
//! Desktop already named changes nothing, and renaming twice is the same as renaming once.

//!
//! A template comes from the caller, and its `match`/`replaceFrom` patterns are programs the server runs, so a
//! template is held to the limits of `problems.rs` (its length, how many patterns, each pattern's length,
//! compiled size and nesting, the text a pattern reads, and what one rendering may search), and is parsed and
//! compiled once ([`Template`]) however many items it names.
//!
//! The files depend on each other one way, lowest first: `problems`, `scan`, `item` and `names` (leaves),
//! `creators`, `patterns`, `modifiers`, `variables`, `ast`, `expressions`, `syntax`, `render`; this file sits on
//! them all.

mod ast;
mod creators;
mod expressions;
mod item;
mod modifiers;
mod names;
mod patterns;
mod problems;
mod render;
mod scan;
mod syntax;
#[cfg(test)]
mod tests;
mod variables;

use serde_json::{Map, Value};

pub use self::creators::first_creator;
pub use self::names::{extension_of, valid_file_name};
pub use self::problems::{
    PatternLimit, RenderError, TemplateError, MAX_PATTERNS, MAX_PATTERN_BYTES, MAX_PATTERN_CHARS,
    MAX_PATTERN_INPUT_CHARS, MAX_PATTERN_NESTING, MAX_SEARCHED_CHARS, MAX_TEMPLATE_CHARS,
};

use self::ast::Token;
use self::item::Ctx;
use self::names::tidy_name;
use self::render::render_tokens;
use self::syntax::Parser;

/// Zotero's default template: "Vaswani and Shazeer - 2017 - Attention Is All You Need".
pub const DEFAULT_TEMPLATE: &str =
    r#"{{ firstCreator suffix=" - " }}{{ year suffix=" - " }}{{ title truncate="100" }}"#;

/// The longest file name given, in characters (Unicode scalar values), extension included.
pub const MAX_FILENAME_CHARS: usize = 200;

/// The longest file name given, in UTF-8 bytes, extension included: the limit of Linux and macOS file systems,
/// which [`MAX_FILENAME_CHARS`] characters alone would not keep to (200 CJK characters are about 600 bytes).
pub const MAX_FILENAME_BYTES: usize = 255;

/// Rejects a template that would not render as its author meant: unbalanced braces or `if` blocks, a tag that
/// is not a variable, an unknown attribute or case, a number that is not one, an invalid regular expression, or
/// one over the limits (see [`PatternLimit`]).
/// Rendering never fails (a broken part renders as nothing, as in Zotero); this is for refusing a bad template
/// before anything is renamed with it.
pub fn check_template(template: &str) -> Result<(), TemplateError> {
    Template::checked(template).map(|_| ())
}

/// The template rendered for an item (its Web API `data` object), HTML tags removed and trimmed, before it is made
/// a valid file name. `creator_summary` is the item's `meta.creatorSummary`, which Zotero computes with its full
/// schema. Empty when the rendering needs more searching than [`MAX_SEARCHED_CHARS`].
pub fn render(template: &str, item: &Map<String, Value>, creator_summary: Option<&str>) -> String {
    Template::parse(template).render(item, creator_summary).unwrap_or_default()
}

/// The name an attachment gets after its parent item: the template rendered for `parent` (the parent item's
/// `data`), made valid, plus the extension of `current_filename`. The whole name keeps to [`MAX_FILENAME_CHARS`]
/// characters and [`MAX_FILENAME_BYTES`] bytes, the base being cut so the extension never is. `None` when the
/// template renders to nothing usable (or cannot be rendered within the limits), in which case the caller keeps
/// the current name. This parses `template`; to name many files, parse once with [`Template::checked`].
pub fn build_renamed_filename(
    parent: &Map<String, Value>,
    current_filename: &str,
    template: &str,
    creator_summary: Option<&str>,
) -> Option<String> {
    let template = Template::parse(template);
    let rendered = template.render(parent, creator_summary).ok()?;
    file_name_from(&rendered, current_filename)
}

/// A parsed template, its patterns compiled, for rendering many items without parsing again.
#[derive(Debug)]
pub struct Template {
    tokens: Vec<Token>,
    problems: Vec<TemplateError>,
}

impl Template {
    /// Parses leniently, as Zotero does: whatever cannot be read renders as nothing or as literal text. The
    /// problems found are kept in [`Template::problems`].
    /// A template over [`MAX_TEMPLATE_CHARS`] is not read at all: it renders as nothing.
    pub fn parse(template: &str) -> Self {
        #[cfg(any(test, feature = "testing"))]
        PARSES.with(|count| count.set(count.get() + 1));
        if let Some(chars) = too_long(template) {
            let problem = TemplateError::TooLong { chars, max: MAX_TEMPLATE_CHARS };
            return Template { tokens: Vec::new(), problems: vec![problem] };
        }
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

    /// The template rendered for `item` (see [`render()`]), or why it cannot be within the limits.
    pub fn render(&self, item: &Map<String, Value>, creator_summary: Option<&str>) -> Result<String, RenderError> {
        let ctx = Ctx::new(item, creator_summary);
        let rendered = render_tokens(&self.tokens, &ctx);
        if ctx.budget.spent() {
            return Err(RenderError::TooMuchSearching { max: MAX_SEARCHED_CHARS });
        }
        Ok(rendered)
    }

    /// See [`build_renamed_filename`]; the rendering refused when it is over the limits.
    pub fn file_name(
        &self,
        parent: &Map<String, Value>,
        current_filename: &str,
        creator_summary: Option<&str>,
    ) -> Result<Option<String>, RenderError> {
        let rendered = self.render(parent, creator_summary)?;
        Ok(file_name_from(&rendered, current_filename))
    }
}

/// The name an attachment now called `current_filename` gets from a rendering of its parent (see
/// [`build_renamed_filename`]): rendering once per parent names all its files.
pub fn file_name_from(rendered: &str, current_filename: &str) -> Option<String> {
    // A file without an extension that this template already named ("Version 2.0") must keep its name, not
    // have "0" taken for its extension and gain another.
    let bare = tidy_name(rendered, MAX_FILENAME_CHARS, MAX_FILENAME_BYTES, true);
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
    let base = tidy_name(rendered, MAX_FILENAME_CHARS - room, MAX_FILENAME_BYTES - room, false);
    if base.is_empty() {
        return None;
    }
    Some(format!("{base}.{ext}"))
}

/// The length of `template` in characters when it is over [`MAX_TEMPLATE_CHARS`].
fn too_long(template: &str) -> Option<usize> {
    if template.len() <= MAX_TEMPLATE_CHARS {
        return None;
    }
    let chars = template.chars().count();
    (chars > MAX_TEMPLATE_CHARS).then_some(chars)
}

#[cfg(any(test, feature = "testing"))]
thread_local! {
    static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many templates this thread has parsed, for tests that a tool parses a caller's template once per call.
#[cfg(any(test, feature = "testing"))]
pub fn parses_on_this_thread() -> usize {
    PARSES.with(std::cell::Cell::get)
}
