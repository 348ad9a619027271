//! Lazy loading: only the objects a question needs are read from the file into a lopdf `Document` — the page
//! tree when the file is opened, a page's resources and contents when its text is asked for, the outline when
//! it is. The rest of the file stays bytes. A 1,321-page manual answers for three of its pages without parsing
//! the other 1,318 (docs/pdf.md has the figures).
//!
//! Encrypted files, and files whose cross-reference data cannot be followed, are left to lopdf's eager loader
//! (which decrypts and repairs); so is a file whose page tree does not load from the data it declares.

mod xref;

pub(super) use self::xref::startxref;

use std::collections::{HashMap, HashSet, VecDeque};

use lopdf::{Document, Object, ObjectId, Stream};

use self::xref::{Entry, Xref};

/// Objects one document may load in all: far above a real document's needs for any page range.
const MAX_OBJECTS: usize = 2_000_000;
/// Decoded object streams kept for reuse, in bytes; beyond it the cache starts again.
const MAX_CACHED_CONTAINER_BYTES: usize = 32 * 1024 * 1024;
/// Keys never followed when loading what something needs: back links, and what the text layer never reads
/// (annotations, thumbnails, metadata, structure, font programs other than Type1's).
const SKIPPED_KEYS: &[&[u8]] = &[
    b"Parent",
    b"P",
    b"Annots",
    b"B",
    b"Thumb",
    b"Metadata",
    b"PieceInfo",
    b"StructParent",
    b"StructParents",
    b"StructTreeRoot",
    b"FontFile2",
    b"FontFile3",
    b"AcroForm",
    b"OpenAction",
    b"Threads",
    b"SE",
];

/// A decoded object stream.
struct Container {
    /// Its members in order: object number, and where its text starts after `first`.
    members: Vec<(u32, usize)>,
    first: usize,
    decoded: Vec<u8>,
}

/// A file being read lazily.
pub(super) struct LazyFile {
    /// The file, and where `%PDF-` starts in it (offsets count from there).
    bytes: Vec<u8>,
    start: usize,
    xref: Xref,
    max_stream_bytes: usize,
    /// Decoded object streams, by object number.
    containers: HashMap<u32, Container>,
    cached_bytes: usize,
    loaded: usize,
}

impl LazyFile {
    /// Reads the cross-reference data of `bytes` (a PDF from `start` on) and, into a new `Document`, the
    /// catalog, the document information, the page labels and the page tree. The bytes come back when the file
    /// is encrypted or any of that does not load: the caller then uses the eager loader.
    pub(super) fn open(
        bytes: Vec<u8>,
        start: usize,
        version: String,
        max_stream_bytes: usize,
    ) -> Result<(Self, Document), Vec<u8>> {
        let xref = bytes.get(start..).and_then(|file| xref::read(file, max_stream_bytes));
        let Some(xref) = xref.filter(|x| !x.trailer.has(b"Encrypt")) else { return Err(bytes) };
        let mut file =
            Self { bytes, start, xref, max_stream_bytes, containers: HashMap::new(), cached_bytes: 0, loaded: 0 };
        match file.structure(version) {
            Some(doc) => Ok((file, doc)),
            None => Err(file.bytes),
        }
    }

    fn structure(&mut self, version: String) -> Option<Document> {
        let mut doc = Document::new();
        doc.version = version;
        doc.trailer = self.xref.trailer.clone();
        doc.max_id = self.xref.entries.keys().copied().max().unwrap_or(0);
        let root = doc.trailer.get(b"Root").and_then(Object::as_reference).ok()?;
        self.load(&mut doc, root)?;
        let info = doc.trailer.get(b"Info").ok().cloned();
        self.need(&mut doc, info.into_iter().collect());
        let catalog = doc.get_dictionary(root).ok()?.clone();
        self.need(&mut doc, catalog.get(b"PageLabels").ok().cloned().into_iter().collect());
        self.page_tree(&mut doc, catalog.get(b"Pages").and_then(Object::as_reference).ok()?)?;
        Some(doc)
    }

    /// The bytes back, for the eager loader.
    pub(super) fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The file from `%PDF-` on.
    fn file(&self) -> &[u8] {
        self.bytes.get(self.start..).unwrap_or_default()
    }

    /// Loads what the pages `ids` need for their text: the page dictionaries' resources (their own or inherited)
    /// and contents, with everything those refer to.
    pub(super) fn need_pages(&mut self, doc: &mut Document, ids: &[ObjectId]) {
        let mut roots = Vec::new();
        for id in ids {
            let Ok(page) = doc.get_dictionary(*id) else { continue };
            roots.extend(page.get(b"Contents").ok().cloned());
            // Resources are inherited: the nearest ancestor that has them.
            let mut node = Some(page);
            let mut hops = 0;
            while let Some(dict) = node {
                if let Ok(resources) = dict.get(b"Resources") {
                    roots.push(resources.clone());
                    break;
                }
                hops += 1;
                node = dict
                    .get(b"Parent")
                    .and_then(Object::as_reference)
                    .ok()
                    .filter(|_| hops < 64)
                    .and_then(|p| doc.get_dictionary(p).ok());
            }
        }
        self.need(doc, roots);
    }

    /// Loads the outline and the named destinations it may use.
    pub(super) fn need_outline(&mut self, doc: &mut Document) {
        let Ok(catalog) = doc.catalog().cloned() else { return };
        let mut roots: Vec<Object> = Vec::new();
        roots.extend(catalog.get(b"Dests").ok().cloned());
        roots.extend(catalog.get(b"Outlines").ok().cloned());
        if let Ok(names) = catalog.get(b"Names").cloned() {
            let names = match names {
                Object::Reference(id) => self.load(doc, id).and_then(|_| doc.get_dictionary(id).ok().cloned()),
                Object::Dictionary(d) => Some(d),
                _ => None,
            };
            roots.extend(names.and_then(|n| n.get(b"Dests").ok().cloned()));
        }
        self.need(doc, roots);
    }

    /// Loads `roots` and everything they refer to, except through [`SKIPPED_KEYS`]. An object that was already
    /// loaded is not followed again: what it needs was loaded with it, and a page reached through a link (an
    /// outline entry's destination) must not pull in that page's contents.
    fn need(&mut self, doc: &mut Document, roots: Vec<Object>) {
        let mut queue: VecDeque<ObjectId> = VecDeque::new();
        for root in &roots {
            match root {
                // A root given by reference is followed even when it was loaded before (the outline root is).
                Object::Reference(id) => {
                    if self.load(doc, *id).is_some() {
                        if let Some(object) = doc.objects.get(id) {
                            references(object, &mut queue, 0);
                        }
                    }
                }
                direct => references(direct, &mut queue, 0),
            }
        }
        let mut seen: HashSet<ObjectId> = HashSet::new();
        while let Some(id) = queue.pop_front() {
            if !seen.insert(id) || doc.objects.contains_key(&id) || self.load(doc, id).is_none() {
                continue;
            }
            if let Some(object) = doc.objects.get(&id) {
                references(object, &mut queue, 0);
            }
        }
    }

    /// The page tree: every node through `/Kids`, nothing else (a page's resources load when it is read).
    fn page_tree(&mut self, doc: &mut Document, root: ObjectId) -> Option<()> {
        let mut queue = VecDeque::from([root]);
        let mut seen = HashSet::new();
        while let Some(id) = queue.pop_front() {
            if !seen.insert(id) {
                continue;
            }
            if !doc.objects.contains_key(&id) {
                self.load(doc, id)?;
            }
            let kids = doc.get_dictionary(id).ok().and_then(|d| d.get(b"Kids").ok().cloned());
            let kids = match kids {
                Some(Object::Reference(at)) => {
                    self.load(doc, at)?;
                    doc.get_object(at).ok().cloned()
                }
                other => other,
            };
            if let Some(Object::Array(kids)) = kids {
                queue.extend(kids.iter().filter_map(|k| k.as_reference().ok()));
            }
        }
        Some(())
    }

    /// Reads object `id` into `doc`. `None` when the file does not have it where its cross-reference data says.
    fn load(&mut self, doc: &mut Document, id: ObjectId) -> Option<()> {
        if doc.objects.contains_key(&id) {
            return Some(());
        }
        if self.loaded >= MAX_OBJECTS {
            return None;
        }
        let (found, object) = match *self.xref.entries.get(&id.0)? {
            Entry::Offset(offset) => {
                let length = |length_id: ObjectId| self.length(length_id);
                xref::top_level(self.file(), offset, length)?
            }
            Entry::InStream { container, index } => ((id.0, 0), self.member(container, id.0, index)?),
        };
        if found.0 != id.0 {
            return None;
        }
        self.loaded += 1;
        doc.objects.insert(found, object);
        // A reference whose generation differs from the object's still finds it, as in lopdf's own loader.
        if found != id {
            let object = doc.objects.get(&found).cloned()?;
            doc.objects.insert(id, object);
        }
        Some(())
    }

    /// A stream's indirect `/Length`: an integer object at its own offset (never itself a stream).
    fn length(&self, id: ObjectId) -> Option<usize> {
        let Entry::Offset(offset) = *self.xref.entries.get(&id.0)? else { return None };
        let (_, object) = xref::top_level(self.file(), offset, |_| None)?;
        object.as_i64().ok().and_then(|n| usize::try_from(n).ok())
    }

    /// Member `number` (at `index`) of object stream `container`.
    fn member(&mut self, container: u32, number: u32, index: usize) -> Option<Object> {
        if !self.containers.contains_key(&container) {
            let Entry::Offset(offset) = *self.xref.entries.get(&container)? else { return None };
            let length = |length_id: ObjectId| self.length(length_id);
            let (_, object) = xref::top_level(self.file(), offset, length)?;
            let Object::Stream(stream) = object else { return None };
            let decoded = stream.decompressed_content_with_limit(self.max_stream_bytes).ok()?;
            let (members, first) = xref::members(&stream, &decoded)?;
            if self.cached_bytes + decoded.len() > MAX_CACHED_CONTAINER_BYTES {
                self.containers.clear();
                self.cached_bytes = 0;
            }
            self.cached_bytes += decoded.len();
            self.containers.insert(container, Container { members, first, decoded });
        }
        let Container { members, first, decoded } = self.containers.get(&container)?;
        // The index the cross-reference data gives, checked; else a search by number.
        let at = members
            .get(index)
            .filter(|(n, _)| *n == number)
            .map(|_| index)
            .or_else(|| members.iter().position(|(n, _)| *n == number))?;
        let start = first.checked_add(members[at].1)?;
        let end = members.get(at + 1).and_then(|(_, o)| first.checked_add(*o)).unwrap_or(decoded.len());
        let text = decoded.get(start..end.max(start).min(decoded.len()))?;
        xref::direct(text, number)
    }
}

/// Queues the references in `object`, not through [`SKIPPED_KEYS`].
fn references(object: &Object, queue: &mut VecDeque<ObjectId>, depth: usize) {
    if depth > 64 {
        return;
    }
    match object {
        Object::Reference(id) => queue.push_back(*id),
        Object::Array(items) => items.iter().for_each(|o| references(o, queue, depth + 1)),
        Object::Dictionary(dict) => follow(dict, queue, depth),
        Object::Stream(Stream { dict, .. }) => follow(dict, queue, depth),
        _ => {}
    }
}

fn follow(dict: &lopdf::Dictionary, queue: &mut VecDeque<ObjectId>, depth: usize) {
    for (key, value) in dict.iter() {
        if !SKIPPED_KEYS.contains(&key.as_slice()) {
            references(value, queue, depth + 1);
        }
    }
}
