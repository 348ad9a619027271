//! The BibTeX syntax: entries, `@string` macros and their concatenation, `@preamble` and `@comment`, text
//! between entries ignored. Values are kept as written (braces and LaTeX) for the mapping to read.
//!
//! Recovery: an entry whose braces do not balance ends where a line begins with the next `@type{` (or at the end
//! of the text) and is reported there; after any other syntax error reading goes on at the next line that begins
//! with `@type{`. So one broken entry never takes its neighbours with it.

use std::collections::{HashMap, HashSet};

use super::{BibError, MAX_ENTRIES, MAX_EXPANSION_BYTES, MAX_VALUE_BYTES};

/// An entry's type, key and fields as written (field names lower-cased, values concatenated and with macros
/// expanded, braces inside them kept).
#[derive(Debug)]
pub(super) struct RawEntry {
    pub(super) ty: String,
    pub(super) key: Option<String>,
    pub(super) fields: Vec<(String, String)>,
}

/// One outcome of the text, in order: an entry, or why an entry (or an `@string`) could not be read.
pub(super) type Parsed = (Option<String>, Result<RawEntry, BibError>);

/// The predefined month macros of BibTeX's styles.
const MONTHS: [(&str, &str); 12] = [
    ("jan", "January"),
    ("feb", "February"),
    ("mar", "March"),
    ("apr", "April"),
    ("may", "May"),
    ("jun", "June"),
    ("jul", "July"),
    ("aug", "August"),
    ("sep", "September"),
    ("oct", "October"),
    ("nov", "November"),
    ("dec", "December"),
];

/// Reads every entry of the text (already without its byte-order mark).
pub(super) fn parse(text: &str) -> Vec<Parsed> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        line_starts: std::iter::once(0)
            .chain(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1))
            .collect(),
        macros: HashMap::new(),
        expanded: 0,
    };
    let mut out = Vec::new();
    while let Some(at) = parser.next_at() {
        if let Some(outcome) = parser.item(at) {
            if out.len() == MAX_ENTRIES {
                out.push((None, Err(BibError::TooManyEntries { line: parser.line(at), limit: MAX_ENTRIES })));
                break;
            }
            out.push(outcome);
        }
    }
    out
}

struct Parser<'t> {
    text: &'t str,
    bytes: &'t [u8],
    pos: usize,
    line_starts: Vec<usize>,
    macros: HashMap<String, String>,
    /// Bytes that macros have put into values so far, against [`MAX_EXPANSION_BYTES`].
    expanded: usize,
}

/// Why reading an entry stopped early.
enum Stop {
    /// The text ended, or a new entry began on a line of its own, while the entry was still open.
    Unterminated { next_entry: Option<usize> },
    /// Something else than what the syntax allows here.
    Syntax { at: usize, expected: &'static str },
    /// A value grew beyond [`MAX_VALUE_BYTES`], or macros beyond [`MAX_EXPANSION_BYTES`].
    TooLong { at: usize, field: String },
}

fn is_name_byte(b: u8) -> bool {
    !(b.is_ascii_whitespace() || b"=,{}()\"#".contains(&b))
}

impl<'t> Parser<'t> {
    /// The 1-based line of a byte offset.
    fn line(&self, at: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= at)
    }

    /// The offset of the next `@` that begins an entry-like block (`@word{` or `@word(`), from `pos`.
    fn next_at(&mut self) -> Option<usize> {
        while self.pos < self.bytes.len() {
            let offset = self.bytes[self.pos..].iter().position(|&b| b == b'@')?;
            let at = self.pos + offset;
            if self.block_start(at).is_some() {
                return Some(at);
            }
            self.pos = at + 1;
        }
        None
    }

    /// For an `@` at `at` followed by a type and an opening `{` or `(`: the type's end and the opening's offset.
    fn block_start(&self, at: usize) -> Option<(usize, usize)> {
        let type_end =
            at + 1 + self.bytes[at + 1..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
        if type_end == at + 1 {
            return None;
        }
        let open = type_end + self.bytes[type_end..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        matches!(self.bytes.get(open), Some(b'{' | b'(')).then_some((type_end, open))
    }

    /// Whether a line begins at `line_start` with (after spaces) an `@type{` or `@type(`, and where its `@` is.
    fn entry_on_line(&self, line_start: usize) -> Option<usize> {
        let at = line_start + self.bytes[line_start..].iter().take_while(|b| **b == b' ' || **b == b'\t').count();
        (self.bytes.get(at) == Some(&b'@') && self.block_start(at).is_some()).then_some(at)
    }

    /// The next line, after `from`, that begins with an entry.
    fn next_entry_line_after(&self, from: usize) -> Option<usize> {
        let first_line = self.line_starts.partition_point(|&start| start <= from);
        self.line_starts[first_line..].iter().find_map(|&start| self.entry_on_line(start))
    }

    /// Reads the block whose `@` is at `at`; `None` for what yields no outcome (comments, preambles, macros).
    fn item(&mut self, at: usize) -> Option<Parsed> {
        let (type_end, open) = self.block_start(at)?;
        let ty = self.text[at + 1..type_end].to_ascii_lowercase();
        let close = if self.bytes[open] == b'{' { b'}' } else { b')' };
        self.pos = open + 1;
        let line = self.line(at);
        match ty.as_str() {
            "comment" | "preamble" => {
                self.pos = self.skip_block(open, close);
                None
            }
            "string" => match self.string_body(close) {
                Ok(()) => None,
                Err(stop) => Some((None, Err(self.error(stop, line, "@string", None)))),
            },
            _ => {
                let mut key = None;
                let outcome = self.entry_body(close, &mut key).map(|fields| RawEntry { ty, key: key.clone(), fields });
                Some((key.clone(), outcome.map_err(|stop| self.error(stop, line, "entry", key.as_deref()))))
            }
        }
    }

    /// Turns a stop into the error, and moves on to where reading resumes.
    fn error(&mut self, stop: Stop, line: usize, what: &'static str, key: Option<&str>) -> BibError {
        let key = key.map(str::to_owned);
        match stop {
            Stop::Unterminated { next_entry } => {
                self.pos = next_entry.unwrap_or(self.bytes.len());
                BibError::Unterminated { line, what, key, next_entry_line: next_entry.map(|at| self.line(at)) }
            }
            Stop::Syntax { at, expected } => {
                self.pos = self.next_entry_line_after(at).unwrap_or(self.bytes.len());
                let found = match self.text[at..].chars().next() {
                    None => "the end of the text".to_owned(),
                    Some(c) if c.is_whitespace() => "a space".to_owned(),
                    Some(c) => format!("`{c}`"),
                };
                BibError::Syntax { line: self.line(at), entry_line: line, what, key, expected, found }
            }
            Stop::TooLong { at, field } => {
                self.pos = self.next_entry_line_after(at).unwrap_or(self.bytes.len());
                BibError::ValueTooLong {
                    line: self.line(at),
                    entry_line: line,
                    what,
                    key,
                    field,
                    limit: MAX_VALUE_BYTES,
                    budget: MAX_EXPANSION_BYTES,
                }
            }
        }
    }

    /// Where reading goes on after a comment or preamble block opened at `open`: past its closing delimiter
    /// (braces balanced), or, when it does not close, at the next line that begins with an entry (or the end).
    fn skip_block(&self, open: usize, close: u8) -> usize {
        let mut depth = 0usize;
        let mut at = open + 1;
        while let Some(&b) = self.bytes.get(at) {
            match b {
                b'{' => depth += 1,
                b'}' if depth > 0 => depth -= 1,
                b'\n' => {
                    if let Some(next) = self.entry_on_line(at + 1) {
                        return next;
                    }
                }
                _ if b == close && depth == 0 => return at + 1,
                _ => {}
            }
            at += 1;
        }
        at
    }

    /// Skips white space; a line that begins with a new entry while this one is open stops it.
    fn skip_ws(&mut self) -> Result<(), Stop> {
        while let Some(&b) = self.bytes.get(self.pos) {
            if b == b'\n' {
                if let Some(next) = self.entry_on_line(self.pos + 1) {
                    return Err(Stop::Unterminated { next_entry: Some(next) });
                }
            }
            if !b.is_ascii_whitespace() {
                return Ok(());
            }
            self.pos += 1;
        }
        Err(Stop::Unterminated { next_entry: None })
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn name(&mut self) -> &'t str {
        let start = self.pos;
        while self.peek().is_some_and(is_name_byte) {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    /// `name = value` up to the closing delimiter.
    fn string_body(&mut self, close: u8) -> Result<(), Stop> {
        self.skip_ws()?;
        let name = self.name().to_ascii_lowercase();
        if name.is_empty() {
            return Err(Stop::Syntax { at: self.pos, expected: "a macro name" });
        }
        self.skip_ws()?;
        self.eat(b'=', "`=` after the macro name")?;
        let value = self.value(&name)?;
        self.skip_ws()?;
        if self.peek() == Some(b',') {
            self.pos += 1;
            self.skip_ws()?;
        }
        self.eat(close, if close == b'}' { "`}` closing the @string" } else { "`)` closing the @string" })?;
        self.macros.insert(name, value);
        Ok(())
    }

    /// Steps over `byte`, or stops with a syntax error saying what was expected there.
    fn eat(&mut self, byte: u8, expected: &'static str) -> Result<(), Stop> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Stop::Syntax { at: self.pos, expected })
        }
    }

    /// `key, field = value, …` up to the closing delimiter; the key is set as soon as it is read.
    fn entry_body(&mut self, close: u8, key: &mut Option<String>) -> Result<Vec<(String, String)>, Stop> {
        self.skip_ws()?;
        let key_start = self.pos;
        while self.peek().is_some_and(|b| !(b.is_ascii_whitespace() || b == b',' || b == b'=' || b == close)) {
            self.pos += 1;
        }
        let key_end = self.pos;
        self.skip_ws()?;
        if self.peek() == Some(b'=') {
            // No key: what was read is the first field's name.
            self.pos = key_start;
        } else {
            // Trimmed of the white space that is not ASCII's (a vertical tab, a no-break space, …).
            let text = self.text[key_start..key_end].trim();
            *key = (!text.is_empty()).then(|| text.to_owned());
        }
        let mut fields: Vec<(String, String)> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        // After the key, and after each value, only `,` or the end of the entry may follow.
        let mut separated = key.is_none();
        loop {
            self.skip_ws()?;
            match self.peek() {
                Some(b) if b == close => {
                    self.pos += 1;
                    return Ok(fields);
                }
                Some(b',') => {
                    self.pos += 1;
                    separated = true;
                    continue;
                }
                _ if !separated => {
                    let expected = match (fields.is_empty(), close) {
                        (true, b'}') => "`,` after the key, or `}` closing the entry",
                        (true, _) => "`,` after the key, or `)` closing the entry",
                        (false, b'}') => "`,` before the next field, or `}` closing the entry",
                        (false, _) => "`,` before the next field, or `)` closing the entry",
                    };
                    return Err(Stop::Syntax { at: self.pos, expected });
                }
                _ => {}
            }
            separated = false;
            let name_at = self.pos;
            let name = self.name().to_ascii_lowercase();
            if name.is_empty() {
                return Err(Stop::Syntax { at: name_at, expected: "a field name" });
            }
            self.skip_ws()?;
            self.eat(b'=', "`=` after the field name")?;
            let value = self.value(&name)?;
            if seen.insert(name.clone()) {
                fields.push((name, value));
            }
        }
    }

    /// `piece # piece # …`, each a braced or quoted string, a number or a macro name.
    fn value(&mut self, field: &str) -> Result<String, Stop> {
        let mut value = String::new();
        loop {
            self.skip_ws()?;
            let at = self.pos;
            match self.peek() {
                Some(b'{') => {
                    let end = self.braced()?;
                    value.push_str(&self.text[at + 1..end]);
                }
                Some(b'"') => {
                    let end = self.quoted()?;
                    value.push_str(&self.text[at + 1..end]);
                }
                Some(b) if b.is_ascii_digit() => {
                    while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    value.push_str(&self.text[at..self.pos]);
                }
                Some(b) if is_name_byte(b) => {
                    let name = self.name().to_ascii_lowercase();
                    let expansion = match self.macros.get(&name) {
                        Some(expansion) => expansion.as_str(),
                        None => match MONTHS.iter().find(|(short, _)| *short == name) {
                            Some((_, month)) => month,
                            // An undefined macro reads as its own name (BibTeX warns and reads nothing).
                            None => &self.text[at..self.pos],
                        },
                    };
                    self.expanded += expansion.len();
                    if self.expanded > MAX_EXPANSION_BYTES {
                        return Err(Stop::TooLong { at, field: field.to_owned() });
                    }
                    value.push_str(expansion);
                }
                _ => {
                    return Err(Stop::Syntax {
                        at, expected: "a value: `{…}`, `\"…\"`, a number or a @string name"
                    })
                }
            }
            if value.len() > MAX_VALUE_BYTES {
                return Err(Stop::TooLong { at, field: field.to_owned() });
            }
            self.skip_ws()?;
            if self.peek() != Some(b'#') {
                return Ok(value);
            }
            self.pos += 1;
        }
    }

    /// From a `{` at `pos` to its matching `}`: the offset of that `}`; `pos` goes past it.
    fn braced(&mut self) -> Result<usize, Stop> {
        let mut depth = 0usize;
        while let Some(b) = self.peek() {
            match b {
                b'\\' => self.pos += 1,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos += 1;
                        return Ok(self.pos - 1);
                    }
                }
                b'\n' => self.check_line()?,
                _ => {}
            }
            self.pos += 1;
        }
        Err(Stop::Unterminated { next_entry: None })
    }

    /// From a `"` at `pos` to the `"` that ends it (outside braces, not escaped); `pos` goes past it.
    fn quoted(&mut self) -> Result<usize, Stop> {
        let mut depth = 0usize;
        self.pos += 1;
        while let Some(b) = self.peek() {
            match b {
                b'\\' => self.pos += 1,
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    return Err(Stop::Syntax { at: self.pos, expected: "`\"` closing the value before this `}`" })
                }
                b'}' => depth -= 1,
                b'"' if depth == 0 => {
                    self.pos += 1;
                    return Ok(self.pos - 1);
                }
                b'\n' => self.check_line()?,
                _ => {}
            }
            self.pos += 1;
        }
        Err(Stop::Unterminated { next_entry: None })
    }

    /// At a line end inside a value: a next line that begins with an entry means this value never closed.
    fn check_line(&self) -> Result<(), Stop> {
        match self.entry_on_line(self.pos + 1) {
            Some(next) => Err(Stop::Unterminated { next_entry: Some(next) }),
            None => Ok(()),
        }
    }
}
