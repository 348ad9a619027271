//! What a listing shows of an item, read straight from Zotero's JSON.
//!
//! A [`super::ZoteroObject`] keeps every field in a JSON map, which is what detail views and writes need; but a
//! list of 25 search hits shows a dozen fields of each, and building maps for all the rest (links, library,
//! every empty field of the item type) was most of a search's own time. An [`ItemCard`] takes only the fields a
//! listing uses and skips the rest without allocating.
//!
//! Reading is as forgiving as the map lookups it replaces: a scalar field of an unexpected type (a number where a
//! string is usual) is read as text or left out, and a malformed entry of a list is skipped, never an error.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// One item as a listing needs it: key, version, child count and the fields a summary line shows.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ItemCard {
    pub key: String,
    pub version: u64,
    #[serde(default)]
    pub meta: CardMeta,
    #[serde(default)]
    pub data: CardData,
    /// The item's page in the zotero.org web library (`links.alternate`), as Zotero gives it.
    #[serde(default)]
    pub links: CardLinks,
}

/// The part of `links` a listing uses.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CardLinks {
    #[serde(default)]
    pub alternate: Option<Link>,
}

/// One entry of `links`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Link {
    #[serde(default)]
    pub href: String,
}

/// The part of `meta` a listing uses.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CardMeta {
    /// Attachments, notes and annotations below the item (top-level items only).
    #[serde(default, rename = "numChildren", deserialize_with = "count")]
    pub num_children: Option<u64>,
}

/// The part of `data` a listing uses. Text fields are `None` when absent, blank or not text.
///
/// Read by hand ([`CardDataVisitor`]) rather than derived: a derived reader of seventeen fields, each with its
/// own forgiving reader, cost the Worker bundle several KiB.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardData {
    pub item_type: Option<String>,
    pub title: Option<String>,
    pub date: Option<String>,
    pub publication_title: Option<String>,
    pub doi: Option<String>,
    pub url: Option<String>,
    pub extra: Option<String>,
    pub parent_item: Option<String>,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub link_mode: Option<String>,
    pub md5: Option<String>,
    pub note: Option<String>,
    /// Each creator's last name, or the single-field name of an organisation, in Zotero's order.
    pub creators: Vec<String>,
    /// Tag names, in Zotero's order.
    pub tags: Vec<String>,
    /// Keys of the collections the item is filed in.
    pub collections: Vec<String>,
    /// In the trash: Zotero writes `1` (or `true`).
    pub deleted: bool,
}

impl<'de> Deserialize<'de> for CardData {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(CardDataVisitor)
    }
}

struct CardDataVisitor;

impl<'de> Visitor<'de> for CardDataVisitor {
    type Value = CardData;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an item's data object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CardData, A::Error> {
        let mut data = CardData::default();
        while let Some(field) = map.next_key::<Field>()? {
            let slot = match field {
                Field::ItemType => &mut data.item_type,
                Field::Title => &mut data.title,
                Field::Date => &mut data.date,
                Field::PublicationTitle => &mut data.publication_title,
                Field::Doi => &mut data.doi,
                Field::Url => &mut data.url,
                Field::Extra => &mut data.extra,
                Field::ParentItem => &mut data.parent_item,
                Field::Filename => &mut data.filename,
                Field::ContentType => &mut data.content_type,
                Field::LinkMode => &mut data.link_mode,
                Field::Md5 => &mut data.md5,
                Field::Note => &mut data.note,
                Field::Creators => {
                    data.creators = map.next_value::<CreatorNames>()?.0;
                    continue;
                }
                Field::Tags => {
                    data.tags = map.next_value::<TagNames>()?.0;
                    continue;
                }
                Field::Collections => {
                    data.collections = map.next_value::<Texts>()?.0;
                    continue;
                }
                Field::Deleted => {
                    data.deleted = map.next_value::<Scalar>()?.is_set();
                    continue;
                }
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = map.next_value::<Scalar>()?.into_text();
        }
        Ok(data)
    }
}

/// A key of `data`, told apart without copying it (an item has forty-odd keys, most of them skipped).
enum Field {
    ItemType,
    Title,
    Date,
    PublicationTitle,
    Doi,
    Url,
    Extra,
    ParentItem,
    Filename,
    ContentType,
    LinkMode,
    Md5,
    Note,
    Creators,
    Tags,
    Collections,
    Deleted,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
                Ok(match name {
                    "itemType" => Field::ItemType,
                    "title" => Field::Title,
                    "date" => Field::Date,
                    "publicationTitle" => Field::PublicationTitle,
                    "DOI" => Field::Doi,
                    "url" => Field::Url,
                    "extra" => Field::Extra,
                    "parentItem" => Field::ParentItem,
                    "filename" => Field::Filename,
                    "contentType" => Field::ContentType,
                    "linkMode" => Field::LinkMode,
                    "md5" => Field::Md5,
                    "note" => Field::Note,
                    "creators" => Field::Creators,
                    "tags" => Field::Tags,
                    "collections" => Field::Collections,
                    "deleted" => Field::Deleted,
                    _ => Field::Other,
                })
            }
        }
        d.deserialize_identifier(FieldVisitor)
    }
}

impl ItemCard {
    /// `data.itemType`, when present.
    pub fn item_type(&self) -> Option<&str> {
        self.data.item_type.as_deref()
    }

    /// The item's page in the zotero.org web library, when Zotero linked one.
    pub fn web_page(&self) -> Option<&str> {
        self.links.alternate.as_ref().map(|link| link.href.as_str()).filter(|href| href.starts_with("https://"))
    }
}

// ---- forgiving field readers ----

/// Any JSON value, kept only when it is a scalar: one reader behind text, counts and flags.
enum Scalar {
    Absent,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(String),
}

impl Scalar {
    /// A non-blank string as it is, a number as its decimal form; anything else is `None`.
    fn into_text(self) -> Option<String> {
        match self {
            Scalar::Text(text) => (!text.trim().is_empty()).then_some(text),
            Scalar::Unsigned(n) => Some(n.to_string()),
            Scalar::Signed(n) => Some(n.to_string()),
            Scalar::Float(n) => Some(serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string())),
            Scalar::Absent | Scalar::Bool(_) => None,
        }
    }

    /// `true`, or a positive number.
    fn is_set(&self) -> bool {
        match *self {
            Scalar::Bool(b) => b,
            Scalar::Unsigned(n) => n > 0,
            Scalar::Signed(n) => n > 0,
            Scalar::Float(n) => n > 0.0,
            Scalar::Absent | Scalar::Text(_) => false,
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Text(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Text(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::Unsigned(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Signed(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Float(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Absent)
    }
    fn visit_none<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Absent)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Absent)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Absent)
    }
}

/// A scalar read as text (see [`Scalar::into_text`]).
struct Text(Option<String>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scalar::deserialize(d).map(|s| Text(s.into_text()))
    }
}

fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Text::deserialize(d).map(|t| t.0)
}

/// A count: a non-negative integer, or `None`.
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(match Scalar::deserialize(d)? {
        Scalar::Unsigned(n) => Some(n),
        _ => None,
    })
}

/// Visitor methods that read every scalar (string, number, boolean, null) as `$value`: for readers that keep
/// only arrays or objects and skip anything else.
macro_rules! scalars_read_as {
    ($value:expr) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// The entries of a JSON array, each read as `T` and kept when it gives a name; anything that is not an array
/// reads as empty.
struct Names<T>(Vec<String>, PhantomData<T>);

/// What one list entry gives.
trait NameOf {
    fn name(self) -> Option<String>;
}

impl<'de, T: Deserialize<'de> + NameOf> Deserialize<'de> for Names<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NamesVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + NameOf> Visitor<'de> for NamesVisitor<T> {
            type Value = Names<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = seq.next_element::<T>()? {
                    out.extend(entry.name());
                }
                Ok(Names(out, PhantomData))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Names(Vec::new(), PhantomData))
            }
            scalars_read_as!(Names(Vec::new(), PhantomData));
        }
        d.deserialize_any(NamesVisitor(PhantomData))
    }
}

impl NameOf for Text {
    fn name(self) -> Option<String> {
        self.0
    }
}

/// A list entry that is read only when it is an object; anything else is skipped.
struct Entry<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Entry<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct EntryVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for EntryVisitor<T> {
            type Value = Entry<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Entry(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Entry(None))
            }
            scalars_read_as!(Entry(None));
        }
        d.deserialize_any(EntryVisitor(PhantomData))
    }
}

#[derive(Deserialize)]
struct RawCreator {
    #[serde(default, rename = "lastName", deserialize_with = "text")]
    last_name: Option<String>,
    #[serde(default, deserialize_with = "text")]
    name: Option<String>,
}

impl NameOf for Entry<RawCreator> {
    fn name(self) -> Option<String> {
        let creator = self.0?;
        creator.last_name.or(creator.name).map(|n| n.trim().to_owned())
    }
}

#[derive(Deserialize)]
struct RawTag {
    #[serde(default, deserialize_with = "text")]
    tag: Option<String>,
}

impl NameOf for Entry<RawTag> {
    fn name(self) -> Option<String> {
        self.0?.tag
    }
}

type CreatorNames = Names<Entry<RawCreator>>;
type TagNames = Names<Entry<RawTag>>;
type Texts = Names<Text>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// An item as the API sends it, with the parts a listing does not show (links, library, empty fields).
    fn api_item() -> Value {
        json!({
            "key": "T6W7H8UE",
            "version": 41,
            "library": { "type": "user", "id": 1234567, "name": "demo", "links": { "alternate": { "href": "x" } } },
            "links": { "self": { "href": "https://api.zotero.org/users/1/items/T6W7H8UE", "type": "application/json" } },
            "meta": { "creatorSummary": "Whitfield et al.", "parsedDate": "2021-07", "numChildren": 3 },
            "data": {
                "key": "T6W7H8UE", "version": 41, "itemType": "journalArticle",
                "title": "Geometric deep learning", "abstractNote": "", "date": "2021-07",
                "creators": [
                    { "creatorType": "author", "firstName": "Eleanor", "lastName": " Whitfield " },
                    { "creatorType": "author", "name": "DeepMind" },
                    { "creatorType": "editor", "firstName": "Only" },
                    "not a creator"
                ],
                "publicationTitle": "Nature Methods", "volume": 18, "DOI": "10.1038/x", "extra": "Citation Key: w2021",
                "tags": [{ "tag": "proteins", "type": 1 }, { "tag": "" }, 7],
                "collections": ["GPXYGUKW", 12, null], "relations": { "dc:relation": ["http://zotero.org/x"] },
                "deleted": 1, "parentItem": false, "md5": null, "note": "   "
            }
        })
    }

    #[test]
    fn reads_only_what_a_listing_shows_and_forgives_odd_values() {
        let card: ItemCard = serde_json::from_value(api_item()).unwrap();
        assert_eq!(card.key, "T6W7H8UE");
        assert_eq!(card.version, 41);
        assert_eq!(card.meta.num_children, Some(3));
        let data = &card.data;
        assert_eq!(data.item_type.as_deref(), Some("journalArticle"));
        assert_eq!(data.title.as_deref(), Some("Geometric deep learning"));
        assert_eq!(data.date.as_deref(), Some("2021-07"));
        assert_eq!(data.doi.as_deref(), Some("10.1038/x"));
        assert_eq!(data.extra.as_deref(), Some("Citation Key: w2021"));
        // Blank text, `false` and `null` are absent; a creator without a last name or name adds nothing.
        assert_eq!((data.note.as_deref(), data.parent_item.as_deref(), data.md5.as_deref()), (None, None, None));
        assert_eq!(data.creators, ["Whitfield", "DeepMind"]);
        assert_eq!(data.tags, ["proteins"]);
        assert_eq!(data.collections, ["GPXYGUKW", "12"]);
        assert!(data.deleted);
    }

    #[test]
    fn a_card_read_from_bytes_is_the_card_read_from_a_value() {
        let bytes = serde_json::to_vec(&api_item()).unwrap();
        let from_bytes: ItemCard = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(from_bytes, serde_json::from_value::<ItemCard>(api_item()).unwrap());
    }

    #[test]
    fn missing_or_misshapen_parts_read_as_empty() {
        // Read from bytes, as the client reads Zotero's answers.
        let bytes = serde_json::to_vec(&json!({
            "key": "ABCD2345", "version": 1,
            "data": {
                "creators": "nobody", "tags": { "tag": "x" }, "collections": 3, "deleted": "yes", "": "blank key",
                "title": 2.5
            }
        }))
        .unwrap();
        let card: ItemCard = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(card.meta.num_children, None);
        assert!(card.data.creators.is_empty() && card.data.tags.is_empty() && card.data.collections.is_empty());
        assert!(!card.data.deleted);
        assert_eq!(card.data.title.as_deref(), Some("2.5"));
        assert_eq!(card.item_type(), None);
        // A page of items is an array of them.
        let page: Vec<ItemCard> = serde_json::from_value(json!([api_item(), { "key": "B", "version": 2 }])).unwrap();
        assert_eq!(page.len(), 2);
    }
}
