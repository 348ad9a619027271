//! Just enough of an XML tree for arXiv's Atom feed and PubMed's EFetch records, built on quick-xml's event reader.
//!
//! quick-xml alone adds about 11 KB to a release wasm (roxmltree, a ready-made tree, about 71 KB), so the tree is
//! ours: elements by local name (namespace prefixes are dropped, since both APIs use fixed prefixes), their
//! attributes, and their children in order. Character and predefined entity references are decoded; a DTD is
//! skipped, never fetched.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// One element: its local name, attributes and children.
#[derive(Debug, Default)]
pub(super) struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    pub children: Vec<Node>,
}

#[derive(Debug)]
pub(super) enum Node {
    Element(Element),
    Text(String),
}

/// Why a document could not be read as XML.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(super) enum XmlError {
    /// What quick-xml reported (a syntax, encoding, attribute or escape error).
    #[error("{0}")]
    Malformed(String),
    #[error("a closing tag without an opening one")]
    UnmatchedClose,
    #[error("the unknown entity &{0};")]
    UnknownEntity(String),
    #[error("the document ends inside an element")]
    Unclosed,
    #[error("the document has no root element")]
    NoRoot,
}

fn malformed(error: impl std::fmt::Display) -> XmlError {
    XmlError::Malformed(error.to_string())
}

/// Parses a whole document and returns its root element, or why it could not.
pub(super) fn parse(text: &str) -> Result<Element, XmlError> {
    let mut reader = Reader::from_str(text);
    // Every element open so far; the bottom one collects the root.
    let mut stack: Vec<Element> = vec![Element::default()];
    loop {
        match reader.read_event() {
            Ok(Event::Start(start)) => stack.push(element(&start)?),
            Ok(Event::Empty(start)) => push_child(&mut stack, Node::Element(element(&start)?)),
            Ok(Event::End(_)) => {
                if stack.len() < 2 {
                    return Err(XmlError::UnmatchedClose);
                }
                if let Some(done) = stack.pop() {
                    push_child(&mut stack, Node::Element(done));
                }
            }
            Ok(Event::Text(text)) => {
                let text = text.decode().map_err(malformed)?;
                push_text(&mut stack, &text);
            }
            Ok(Event::CData(data)) => {
                let text = data.decode().map_err(malformed)?;
                push_text(&mut stack, &text);
            }
            Ok(Event::GeneralRef(reference)) => {
                let resolved = match reference.resolve_char_ref().map_err(malformed)? {
                    Some(character) => character.to_string(),
                    None => {
                        let name = reference.decode().map_err(malformed)?;
                        predefined(&name).ok_or_else(|| XmlError::UnknownEntity(name.into_owned()))?.to_owned()
                    }
                };
                push_text(&mut stack, &resolved);
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(error) => return Err(malformed(error)),
        }
    }
    if stack.len() != 1 {
        return Err(XmlError::Unclosed);
    }
    let document = stack.pop().unwrap_or_default();
    document
        .children
        .into_iter()
        .find_map(|node| match node {
            Node::Element(root) => Some(root),
            Node::Text(_) => None,
        })
        .ok_or(XmlError::NoRoot)
}

fn predefined(name: &str) -> Option<&'static str> {
    Some(match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        _ => return None,
    })
}

fn element(start: &BytesStart<'_>) -> Result<Element, XmlError> {
    let name = String::from_utf8_lossy(start.local_name().as_ref()).into_owned();
    let mut attributes = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(malformed)?;
        let key = String::from_utf8_lossy(attribute.key.local_name().as_ref()).into_owned();
        let value = attribute.unescape_value().map_err(malformed)?.into_owned();
        attributes.push((key, value));
    }
    Ok(Element { name, attributes, children: Vec::new() })
}

fn push_child(stack: &mut [Element], node: Node) {
    if let Some(parent) = stack.last_mut() {
        parent.children.push(node);
    }
}

/// Text joins the text just before it: quick-xml reports `a &amp; b` as three events.
fn push_text(stack: &mut [Element], text: &str) {
    if let Some(parent) = stack.last_mut() {
        if let Some(Node::Text(previous)) = parent.children.last_mut() {
            previous.push_str(text);
        } else {
            parent.children.push(Node::Text(text.to_owned()));
        }
    }
}

impl Element {
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// The child elements, in order.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|node| match node {
            Node::Element(element) => Some(element),
            Node::Text(_) => None,
        })
    }

    /// The child elements with this local name.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> {
        self.elements().filter(move |element| element.name == name)
    }

    /// The first child element with this local name.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.elements().find(|element| element.name == name)
    }

    /// The first element down this path of local names.
    pub fn path(&self, names: &[&str]) -> Option<&Element> {
        names.iter().try_fold(self, |element, name| element.child(name))
    }

    /// All the text inside, markup dropped, with whitespace collapsed to single spaces. Inside MathML only the
    /// symbols are kept (the whitespace between its elements is layout, not spacing), so `V̇O2max` reads `V.O2max`.
    pub fn text(&self) -> String {
        let mut raw = String::new();
        self.collect_text(&mut raw, false);
        raw.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn collect_text(&self, out: &mut String, in_math: bool) {
        let in_math = in_math || self.name == "math";
        for node in &self.children {
            match node {
                Node::Text(text) if in_math => out.push_str(text.trim()),
                Node::Text(text) => out.push_str(text),
                Node::Element(element) => element.collect_text(out, in_math),
            }
        }
    }

    /// The text of the first child with this name, if it has any.
    pub fn child_text(&self, name: &str) -> Option<String> {
        self.child(name).map(Element::text).filter(|text| !text.is_empty())
    }
}
