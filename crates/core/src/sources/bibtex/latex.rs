//! LaTeX in BibTeX values into plain Unicode text: accents and the common named letters and symbols, dashes,
//! quotes, `~`, escaped specials, protective braces dropped, formatting commands dropped with their argument
//! kept, and math (`$…$`) kept as written. One pass over the characters, no recursion, so deep nesting costs
//! nothing but time linear in the text.

/// Precomposed letters, by combining mark: the string alternates a base letter and the letter with the mark.
pub(crate) const COMPOSED: &[(char, &str)] = &[
    ('\u{0300}', "AÀEÈIÌNǸOÒUÙWẀYỲaàeèiìnǹoòuùwẁyỳ"), // grave
    ('\u{0301}', "AÁCĆEÉGǴIÍKḰLĹMḾNŃOÓPṔRŔSŚUÚWẂYÝZŹaácćeégǵiíkḱlĺmḿnńoópṕrŕsśuúwẃyýzź"), // acute
    ('\u{0302}', "AÂCĈEÊGĜHĤIÎJĴOÔSŜUÛWŴYŶZẐaâcĉeêgĝhĥiîjĵoôsŝuûwŵyŷzẑ"), // circumflex
    ('\u{0303}', "AÃEẼIĨNÑOÕUŨVṼYỸaãeẽiĩnñoõuũvṽyỹ"), // tilde
    ('\u{0304}', "AĀEĒGḠIĪOŌUŪYȲaāeēgḡiīoōuūyȳ"),     // macron
    ('\u{0306}', "AĂEĔGĞIĬOŎUŬaăeĕgğiĭoŏuŭ"),         // breve
    ('\u{0307}', "AȦBḂCĊDḊEĖFḞGĠHḢIİMṀNṄOȮPṖRṘSṠTṪWẆXẊYẎZŻaȧbḃcċdḋeėfḟgġhḣmṁnṅoȯpṗrṙsṡtṫwẇxẋyẏzż"), // dot above
    ('\u{0308}', "AÄEËHḦIÏOÖUÜWẄXẌYŸaäeëhḧiïoötẗuüwẅxẍyÿ"), // diaeresis
    ('\u{030a}', "AÅUŮaåuůwẘyẙ"),                     // ring
    ('\u{030b}', "OŐUŰoőuű"),                         // double acute
    ('\u{030c}', "AǍCČDĎEĚGǦHȞIǏKǨLĽNŇOǑRŘSŠTŤUǓZŽaǎcčdďeěgǧhȟiǐjǰkǩlľnňoǒrřsštťuǔzž"), // caron
    ('\u{0323}', "AẠBḄDḌEẸHḤIỊKḲLḶMṂNṆOỌRṚSṢTṬUỤVṾWẈYỴZẒaạbḅdḍeẹhḥiịkḳlḷmṃnṇoọrṛsṣtṭuụvṿwẉyỵzẓ"), // dot below
    ('\u{0327}', "CÇDḐEȨGĢHḨKĶLĻNŅRŖSŞTŢcçdḑeȩgģhḩkķlļnņrŗsştţ"), // cedilla
    ('\u{0328}', "AĄEĘIĮOǪUŲaąeęiįoǫuų"),             // ogonek
    ('\u{0331}', "BḆDḎKḴLḺNṈRṞTṮZẔbḇdḏhẖkḵlḻnṉrṟtṯzẕ"), // macron below
];

/// The accent commands and the combining mark each puts on a letter: the one-character commands (`\"o`,
/// `\'e`, …) first, then the one-letter ones (`\c{c}`, `\v s`, …). The bibliography writer reads this table the
/// other way round, so that what it writes reads back here as the same letter.
pub(crate) const ACCENTS: &[(&str, char)] = &[
    ("`", '\u{0300}'),
    ("'", '\u{0301}'),
    ("^", '\u{0302}'),
    ("~", '\u{0303}'),
    ("=", '\u{0304}'),
    (".", '\u{0307}'),
    ("\"", '\u{0308}'),
    ("u", '\u{0306}'),
    ("r", '\u{030a}'),
    ("H", '\u{030b}'),
    ("v", '\u{030c}'),
    ("d", '\u{0323}'),
    ("c", '\u{0327}'),
    ("k", '\u{0328}'),
    ("b", '\u{0331}'),
];

/// The combining mark of a one-character accent command (`\"o`, `\'e`, …).
fn symbol_accent(c: char) -> Option<char> {
    let mut buffer = [0u8; 4];
    let name: &str = c.encode_utf8(&mut buffer);
    ACCENTS.iter().find(|(command, _)| *command == name && !c.is_ascii_alphabetic()).map(|(_, mark)| *mark)
}

/// The combining mark of a one-letter accent command (`\c{c}`, `\v s`, …).
fn letter_accent(name: &str) -> Option<char> {
    ACCENTS
        .iter()
        .find(|(command, _)| *command == name && command.bytes().all(|b| b.is_ascii_alphabetic()))
        .map(|(_, mark)| *mark)
}

/// Named letters and symbols: the command, its text, and whether spaces after the command are swallowed (as TeX
/// does after a letter command, so `Stra\ss e` reads `Straße`). Of two commands for one text the first is the one
/// the bibliography writer uses.
pub(crate) const NAMED: &[(&str, &str, bool)] = &[
    ("ss", "ß", true),
    ("SS", "SS", true),
    ("o", "ø", true),
    ("O", "Ø", true),
    ("aa", "å", true),
    ("AA", "Å", true),
    ("ae", "æ", true),
    ("AE", "Æ", true),
    ("oe", "œ", true),
    ("OE", "Œ", true),
    ("l", "ł", true),
    ("L", "Ł", true),
    ("i", "ı", true),
    ("j", "ȷ", true),
    ("dh", "ð", true),
    ("DH", "Ð", true),
    ("th", "þ", true),
    ("TH", "Þ", true),
    ("ng", "ŋ", true),
    ("NG", "Ŋ", true),
    ("dj", "đ", true),
    ("DJ", "Đ", true),
    ("textendash", "–", true),
    ("textemdash", "—", true),
    ("textquoteleft", "‘", true),
    ("textquoteright", "’", true),
    ("textquotedblleft", "“", true),
    ("textquotedblright", "”", true),
    ("guillemotleft", "«", true),
    ("guillemetleft", "«", true),
    ("guillemotright", "»", true),
    ("guillemetright", "»", true),
    ("ldots", "…", true),
    ("dots", "…", true),
    ("textellipsis", "…", true),
    ("S", "§", true),
    ("P", "¶", true),
    ("dag", "†", true),
    ("ddag", "‡", true),
    ("copyright", "©", true),
    ("textcopyright", "©", true),
    ("textregistered", "®", true),
    ("texttrademark", "™", true),
    ("pounds", "£", true),
    ("textsterling", "£", true),
    ("texteuro", "€", true),
    ("euro", "€", true),
    ("textdegree", "°", true),
    ("textexclamdown", "¡", true),
    ("textquestiondown", "¿", true),
    ("textbackslash", "\\", true),
    ("textasciitilde", "~", true),
    ("textasciicircum", "^", true),
    ("textbraceleft", "{", true),
    ("textbraceright", "}", true),
    ("textunderscore", "_", true),
    ("textbar", "|", true),
    ("textless", "<", true),
    ("textgreater", ">", true),
    ("LaTeX", "LaTeX", false),
    ("TeX", "TeX", false),
    ("BibTeX", "BibTeX", false),
];

/// The text of a named letter or symbol command, and whether spaces after it are swallowed.
fn named(name: &str) -> Option<(&'static str, bool)> {
    NAMED.iter().find(|(command, _, _)| *command == name).map(|(_, text, swallow)| (*text, *swallow))
}

/// `base` with the combining `mark`: the precomposed letter where Unicode has one, else the base followed by
/// the mark (the same text, decomposed).
fn compose(base: char, mark: char) -> String {
    let base = match base {
        'ı' => 'i',
        'ȷ' => 'j',
        other => other,
    };
    let composed = COMPOSED.iter().find(|(table_mark, _)| *table_mark == mark).and_then(|(_, pairs)| {
        let mut chars = pairs.chars();
        while let (Some(plain), Some(accented)) = (chars.next(), chars.next()) {
            if plain == base {
                return Some(accented);
            }
        }
        None
    });
    match composed {
        Some(accented) => accented.to_string(),
        None => [base, mark].iter().collect(),
    }
}

/// A BibTeX value (braces and LaTeX as written) as plain text, with runs of white space made one space and the
/// ends trimmed.
pub(super) fn to_unicode(raw: &str) -> String {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = Text::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '{' | '}' => i += 1,
            '\\' => i = command(&chars, i, &mut out),
            '$' => {
                // Math is kept as written, delimiters included; an unmatched `$` is kept as a dollar sign.
                match chars[i + 1..].iter().position(|&d| d == '$').map(|offset| i + 1 + offset) {
                    Some(end) => {
                        for &m in &chars[i..=end] {
                            out.push(m);
                        }
                        i = end + 1;
                    }
                    None => {
                        out.push('$');
                        i += 1;
                    }
                }
            }
            '~' => {
                out.push(' ');
                i += 1;
            }
            '-' => {
                let run = chars[i..].iter().take_while(|&&d| d == '-').count();
                match run {
                    2 => out.push_str("–"),
                    3 => out.push_str("—"),
                    _ => (0..run).for_each(|_| out.push('-')),
                }
                i += run;
            }
            '`' if chars.get(i + 1) == Some(&'`') => {
                out.push('“');
                i += 2;
            }
            '\'' if chars.get(i + 1) == Some(&'\'') => {
                out.push('”');
                i += 2;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out.finish()
}

/// A value that is not prose (a URL, a DOI, an e-print id): braces dropped and escaped specials unescaped,
/// nothing else changed but white space, whose runs become one space, trimmed at the ends.
pub(super) fn verbatim(raw: &str) -> String {
    let mut out = Text::default();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '}' => {}
            '\\' => match chars.peek() {
                Some(&next) if "_%&#${}~/".contains(next) => {
                    out.push(next);
                    chars.next();
                }
                _ => out.push('\\'),
            },
            _ => out.push(c),
        }
    }
    out.finish()
}

/// Reads the command at `chars[start]` (a backslash), writes what it stands for and returns where reading goes
/// on.
fn command(chars: &[char], start: usize, out: &mut Text) -> usize {
    let Some(&next) = chars.get(start + 1) else {
        return start + 1;
    };
    if let Some(mark) = symbol_accent(next) {
        return accent(chars, start + 2, mark, false, out);
    }
    if !next.is_ascii_alphabetic() {
        match next {
            '\\' | ' ' | '\n' | '\t' | '\r' | ',' | ';' | ':' => out.push(' '),
            '-' | '/' | '!' | '@' => {}
            other => out.push(other),
        }
        return start + 2;
    }
    let end = start + 1 + chars[start + 1..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
    let name: String = chars[start + 1..end].iter().collect();
    if let Some(mark) = letter_accent(&name) {
        return accent(chars, end, mark, true, out);
    }
    if let Some((text, swallow_spaces)) = named(&name) {
        out.push_str(text);
        return if swallow_spaces { skip_spaces(chars, end) } else { end };
    }
    match name.as_str() {
        // `\url{…}` holds a URL: copied as it is. `\href{url}{text}` reads as its text.
        "url" if chars.get(end) == Some(&'{') => {
            let close = group_end(chars, end);
            let inner: String = chars[end + 1..close.min(chars.len())].iter().collect();
            out.push_str(&verbatim(&inner));
            close + 1
        }
        "href" if chars.get(end) == Some(&'{') => group_end(chars, end) + 1,
        // Any other command (\emph, \textit, \textbf, \mbox, …) is dropped; its argument is read as text.
        _ => skip_spaces(chars, end),
    }
}

/// The accent `mark` on what follows `from`: a letter, `\i`, `\j`, or a group of one of these (`{o}`, `{\i}`);
/// `{}` gives the mark alone. For anything longer the accent is dropped and the text read as usual.
fn accent(chars: &[char], from: usize, mark: char, letter_command: bool, out: &mut Text) -> usize {
    let at = if letter_command { skip_spaces(chars, from) } else { from };
    let dotless = |i: usize| match (chars.get(i), chars.get(i + 1), chars.get(i + 2)) {
        (Some('\\'), Some(&letter @ ('i' | 'j')), after) if !after.is_some_and(|c| c.is_ascii_alphabetic()) => {
            Some(letter)
        }
        _ => None,
    };
    match chars.get(at) {
        Some('{') => {
            if chars.get(at + 1) == Some(&'}') {
                out.push(mark);
                return at + 2;
            }
            if let Some(letter) = dotless(at + 1) {
                if chars.get(at + 3) == Some(&'}') {
                    out.push_str(&compose(letter, mark));
                    return at + 4;
                }
            }
            match (chars.get(at + 1), chars.get(at + 2)) {
                (Some(&base), Some('}')) if !"{}\\".contains(base) && !base.is_whitespace() => {
                    out.push_str(&compose(base, mark));
                    at + 3
                }
                _ => at,
            }
        }
        Some(_) if dotless(at).is_some() => {
            let letter = dotless(at).unwrap_or('i');
            out.push_str(&compose(letter, mark));
            skip_spaces(chars, at + 2)
        }
        Some(&base) if !"{}\\$".contains(base) && !base.is_whitespace() => {
            out.push_str(&compose(base, mark));
            at + 1
        }
        _ => at,
    }
}

fn skip_spaces(chars: &[char], mut at: usize) -> usize {
    while chars.get(at).is_some_and(|c| c.is_whitespace()) {
        at += 1;
    }
    at
}

/// The index of the `}` closing the group opened at `open`, or the text's length when it never closes.
fn group_end(chars: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

/// Output text with white space (a no-break space too) collapsed to single spaces as it is written.
#[derive(Default)]
struct Text {
    text: String,
}

impl Text {
    fn push(&mut self, c: char) {
        if c.is_whitespace() {
            if !self.text.is_empty() && !self.text.ends_with(' ') {
                self.text.push(' ');
            }
        } else {
            self.text.push(c);
        }
    }

    fn push_str(&mut self, s: &str) {
        s.chars().for_each(|c| self.push(c));
    }

    fn finish(mut self) -> String {
        while self.text.ends_with(' ') {
            self.text.pop();
        }
        self.text
    }
}
