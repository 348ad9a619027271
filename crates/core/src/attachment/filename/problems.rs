//! What can be wrong with a template, and the limits that keep a caller's template from costing the server more
//! than a name is worth. The other modules of `filename/` report into a [`Findings`]; the parser turns what it
//! holds into [`TemplateError`]s with the tag and its position.

/// The longest template read, in characters. Longer is refused whole (nothing is rendered from it).
pub const MAX_TEMPLATE_CHARS: usize = 2_000;

/// The most `match` and `replaceFrom` patterns a template may hold.
pub const MAX_PATTERNS: usize = 8;

/// The longest `match` or `replaceFrom` pattern, in characters.
pub const MAX_PATTERN_CHARS: usize = 200;

/// The most memory a compiled pattern may take, in bytes (regex-lite's own measure of its NFA, about 45 bytes a
/// state). A search costs time in proportion to the states, so this also bounds each searched character's cost.
/// Every pattern a name needs fits several times over (`\d{4}` takes about 600, `^(.{0,30})\b.*$` about 3,100).
pub const MAX_PATTERN_BYTES: usize = 4_096;

/// The deepest nesting of groups, repetitions and alternatives in a pattern (regex-lite counts a concatenation as
/// a level too).
pub const MAX_PATTERN_NESTING: u32 = 16;

/// A pattern looks at the first this many characters of a value; the rest of the value is dropped. A file name
/// keeps at most 200 characters, so this never shortens a name that could be given.
pub const MAX_PATTERN_INPUT_CHARS: usize = 1_000;

/// What the patterns of one rendering may search: this many characters with patterns of [`MAX_PATTERN_BYTES`],
/// more with smaller ones (a search costs the characters from where it starts to the end of its text, an upper
/// bound of what the engine reads, times the pattern's compiled size). A global replacement searches again after
/// every match, and some patterns read to the end each time, so this, not the number of patterns, bounds a
/// rendering's time; a rendering that would search more is refused ([`RenderError::TooMuchSearching`]).
pub const MAX_SEARCHED_CHARS: usize = 10_000;

/// [`MAX_SEARCHED_CHARS`] in the unit searches are paid in: characters times compiled bytes.
pub(super) const SEARCH_BUDGET: usize = MAX_SEARCHED_CHARS * MAX_PATTERN_BYTES;

/// The longest text an error message quotes from a template, in characters.
const MAX_QUOTED_CHARS: usize = 60;

/// Why a template cannot be used. Each message says where the problem is (a 1-based character position in the
/// template) and how to fix it, so a tool can hand it straight back to whoever wrote the template.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("the template is empty; give at least one variable, e.g. {{{{ title }}}}")]
    Empty,
    #[error("the template has {chars} characters; a template may have at most {max}: shorten it")]
    TooLong { chars: usize, max: usize },
    #[error("the `{{{{` at character {at} is never closed; add `}}}}` where the tag ends")]
    UnclosedTag { at: usize },
    #[error("the `}}}}` at character {at} closes nothing; remove it, or add the `{{{{` it should close")]
    StrayClose { at: usize },
    #[error("`{tag}` at character {at}: {reason}")]
    BadTag { tag: String, at: usize, reason: String },
    #[error("`{tag}` at character {at}: {limit}")]
    PatternLimit { tag: String, at: usize, limit: PatternLimit },
    #[error("`{tag}` at character {at} has no `{{{{ if … }}}}` before it; add one or remove it")]
    Orphan { tag: String, at: usize },
    #[error(
        "`{tag}` at character {at} comes after the `{{{{ else }}}}` of its block, so it can never apply; move it \
         before the `{{{{ else }}}}`"
    )]
    AfterElse { tag: String, at: usize },
    #[error("`{tag}` at character {at} is never closed; add `{{{{ endif }}}}` where its block ends")]
    UnclosedIf { tag: String, at: usize },
}

/// A `match` or `replaceFrom` pattern over one of the limits above.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternLimit {
    #[error(
        "{attribute}=\"…\" is pattern number {number}, and a template may hold at most {max} `match` and \
         `replaceFrom` patterns; use fewer"
    )]
    TooMany { attribute: &'static str, number: usize, max: usize },
    #[error("{attribute}=\"…\" has {chars} characters; a pattern may have at most {max}: shorten it")]
    TooLong { attribute: &'static str, chars: usize, max: usize },
    #[error(
        "{attribute}=\"{pattern}\" compiles to more than {max_bytes} bytes; counted repetitions multiply a \
         pattern's size (`(a{{50}}){{50}}` is 2,500 copies of `a`): use smaller or fewer of them, or `truncate` \
         instead of `.{{0,n}}`"
    )]
    TooBig { attribute: &'static str, pattern: String, max_bytes: usize },
    #[error(
        "{attribute}=\"{pattern}\" nests groups and repetitions more than {max} levels deep; flatten it (fewer \
         groups inside groups)"
    )]
    TooDeep { attribute: &'static str, pattern: String, max: u32 },
}

/// Why an item's name could not be rendered with a template that passed its checks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error(
        "the template's patterns would search more than {max} characters for this item (counted for patterns \
         of the largest size; a global `g` replacement searches again after every match); use `truncate` before \
         `replaceFrom`, fewer global replacements, or smaller patterns"
    )]
    TooMuchSearching { max: usize },
}

/// One thing wrong with a tag, before the parser knows the tag's text and position.
#[derive(Debug)]
pub(super) enum Reason {
    Bad(String),
    Limit(PatternLimit),
}

impl From<String> for Reason {
    fn from(reason: String) -> Self {
        Reason::Bad(reason)
    }
}

impl From<PatternLimit> for Reason {
    fn from(limit: PatternLimit) -> Self {
        Reason::Limit(limit)
    }
}

impl Reason {
    pub(super) fn into_error(self, tag: String, at: usize) -> TemplateError {
        match self {
            Reason::Bad(reason) => TemplateError::BadTag { tag, at, reason },
            Reason::Limit(limit) => TemplateError::PatternLimit { tag, at, limit },
        }
    }
}

/// What reading one template finds: the reasons of the tag being read, and the patterns seen so far in the
/// whole template (so that the count can be limited).
#[derive(Debug, Default)]
pub(super) struct Findings {
    reasons: Vec<Reason>,
    patterns: usize,
}

impl Findings {
    pub(super) fn push(&mut self, reason: impl Into<Reason>) {
        self.reasons.push(reason.into());
    }

    /// The reasons found since the last call.
    pub(super) fn take(&mut self) -> Vec<Reason> {
        std::mem::take(&mut self.reasons)
    }

    /// Counts one more pattern; the limit it breaks, if it is one too many.
    pub(super) fn count_pattern(&mut self, attribute: &'static str) -> Result<(), PatternLimit> {
        self.patterns += 1;
        if self.patterns > MAX_PATTERNS {
            return Err(PatternLimit::TooMany { attribute, number: self.patterns, max: MAX_PATTERNS });
        }
        Ok(())
    }
}

/// A tag as an error message quotes it: whole when short, else its start.
pub(super) fn quote(tag: &str) -> String {
    match tag.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &tag[..cut]),
        None => tag.to_owned(),
    }
}
