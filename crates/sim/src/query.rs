//! Query parameters: parsing, Zotero's defaults and validation messages, and the `Link` header built from them.
//!
//! The defaults and their interplay follow the dataserver's `Zotero_API::parseQueryParams`: `sort` defaults to
//! `dateModified` with direction `desc`, a given `sort` brings its own default direction (descending for date
//! fields), `limit` defaults to 25 and is capped at 100 (unlimited for `format=keys|versions`), and `itemKey`
//! forces the limit to 100. Pagination links repeat only the parameters that differ from the defaults, sorted by
//! name, as the real `Link` header does.

use std::collections::BTreeMap;

use crate::error::{ApiError, ApiResult};
use crate::keys::is_valid_key;
use crate::state::{API_BASE, WWW_BASE};

/// Export formats Zotero produces with its translators; the simulator answers them with 501.
pub const EXPORT_FORMATS: [&str; 17] = [
    "bibtex",
    "biblatex",
    "bookmarks",
    "coins",
    "csljson",
    "csv",
    "endnote_xml",
    "evernote",
    "rdf_bibliontology",
    "rdf_dc",
    "rdf_zotero",
    "mods",
    "refer",
    "refworks_tagged",
    "ris",
    "tei",
    "wikipedia",
];

/// Sort fields Zotero accepts.
const SORT_FIELDS: [&str; 21] = [
    "title",
    "creator",
    "itemType",
    "date",
    "publisher",
    "publicationTitle",
    "journalAbbreviation",
    "language",
    "accessDate",
    "libraryCatalog",
    "callNumber",
    "rights",
    "extra",
    "dateAdded",
    "dateModified",
    "addedBy",
    "numItems",
    "serverDateModified",
    "collectionKeyList",
    "itemKeyList",
    "searchKeyList",
];

/// Zotero's default page size, its maximum, and the most keys one request may name.
pub const DEFAULT_LIMIT: u64 = 25;
pub const MAX_LIMIT: u64 = 100;
pub const MAX_OBJECT_KEYS: usize = 50;

/// Which endpoint family a request belongs to; defaults and valid values depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Items,
    Collections,
    Searches,
    Tags,
    FullText,
    Other,
}

#[derive(Debug, Clone)]
pub struct Params {
    pub format: String,
    pub include: Vec<String>,
    pub q: String,
    pub qmode: String,
    pub include_trashed: bool,
    /// Each `itemType` parameter (Zotero allows only one).
    pub item_type: Vec<String>,
    pub item_keys: Option<Vec<String>>,
    pub collection_keys: Option<Vec<String>>,
    pub search_keys: Option<Vec<String>>,
    /// Each `tag` parameter; several are ANDed.
    pub tags: Vec<String>,
    pub tag_type: Vec<String>,
    pub since: Option<u64>,
    pub sort: String,
    pub direction: String,
    pub start: u64,
    /// `None` = no limit (`format=keys|versions`).
    pub limit: Option<u64>,
    /// `itemQ`, `itemQMode`, `itemTag`, for tags within items.
    pub item_q: String,
    pub item_qmode: String,
    pub item_tags: Vec<String>,
    /// Parameters that differ from their defaults, for the `Link` header.
    pub non_default: BTreeMap<String, String>,
}

impl Params {
    pub fn is_desc(&self) -> bool {
        self.direction == "desc"
    }
}

/// `key=value` pairs, decoded (`+` as space), repeated keys kept in order.
pub fn parse_pairs(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

fn default_direction(sort: &str) -> &'static str {
    if sort.starts_with("date") {
        "desc"
    } else {
        "asc"
    }
}

fn all<'a>(pairs: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    pairs.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
}

fn last<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn truthy(s: &str) -> bool {
    !s.is_empty() && s != "0" && s != "false"
}

/// Parses and validates the query of a read request.
pub fn parse(query: &str, action: Action, single: bool) -> ApiResult<Params> {
    let pairs = parse_pairs(query);
    let mut nd = BTreeMap::new();

    if let Some(v) = last(&pairs, "v") {
        if v != "3" {
            return Err(ApiError::not_implemented(format!(
                "zotero-sim implements only API version 3 (v={v} requested)"
            )));
        }
    }

    // format
    let default_format = if action == Action::FullText { "versions" } else { "json" };
    let mut format = default_format.to_string();
    if last(&pairs, "content").is_some() && last(&pairs, "format").is_none() {
        format = "atom".into();
    }
    if let Some(f) = last(&pairs, "format") {
        let valid = match action {
            Action::Items => {
                matches!(f, "json" | "atom" | "bib" | "globalKeys")
                    || EXPORT_FORMATS.contains(&f)
                    || (!single && matches!(f, "keys" | "versions"))
            }
            Action::Collections | Action::Searches => {
                matches!(f, "json" | "atom") || (!single && matches!(f, "keys" | "versions"))
            }
            Action::Tags => matches!(f, "json" | "atom"),
            Action::FullText => f == "versions",
            Action::Other => true,
        };
        if !valid {
            return Err(ApiError::bad_request(format!("Invalid 'format' value '{f}'")));
        }
        format = f.to_string();
    }
    if format != default_format {
        nd.insert("format".into(), format.clone());
    }
    if action != Action::Other && action != Action::FullText && !matches!(format.as_str(), "json" | "keys" | "versions")
    {
        return Err(ApiError::not_implemented(format!(
            "zotero-sim does not implement format={format}: Zotero renders it with its citation processor or \
             translators, which the simulator does not reproduce"
        )));
    }

    // include
    let mut include = vec!["data".to_string()];
    if let Some(inc) = last(&pairs, "include") {
        if format != "json" {
            return Err(ApiError::bad_request("'include' is valid only for format=json"));
        }
        let mut values: Vec<String> = inc.split(',').map(str::to_string).collect();
        values.sort();
        values.dedup();
        for value in &values {
            match value.as_str() {
                "data" => {}
                "none" if values.len() > 1 => {
                    return Err(ApiError::bad_request("include=none is not valid in multi-format responses"));
                }
                "none" => {}
                "html" | "citation" | "bib" | "csljson" => {
                    return Err(ApiError::not_implemented(format!(
                        "zotero-sim does not implement include={value}: Zotero renders it with its citation \
                         processor, which the simulator does not reproduce"
                    )));
                }
                other if EXPORT_FORMATS.contains(&other) => {
                    return Err(ApiError::not_implemented(format!("zotero-sim does not implement include={other}")));
                }
                "json" => return Err(ApiError::bad_request("include=json is valid only for format=atom")),
                other => return Err(ApiError::bad_request(format!("Invalid 'include' value '{other}'"))),
            }
        }
        if values != ["data"] {
            nd.insert("include".into(), values.join(","));
        }
        include = values;
    }

    // q, qmode
    let q = last(&pairs, "q").unwrap_or("").to_string();
    if !q.is_empty() {
        nd.insert("q".into(), q.clone());
    }
    let mut qmode = String::new();
    if let Some(mode) = last(&pairs, "qmode") {
        let lower = mode.to_lowercase();
        let ok = match action {
            Action::Tags => matches!(lower.as_str(), "contains" | "startswith"),
            Action::Items => matches!(lower.as_str(), "titlecreatoryear" | "everything"),
            _ => true,
        };
        if !ok {
            return Err(ApiError::bad_request(format!("Invalid 'qmode' value '{mode}'")));
        }
        if !lower.is_empty() {
            nd.insert("qmode".into(), lower.clone());
        }
        qmode = lower;
    }

    let include_trashed = last(&pairs, "includeTrashed").is_some_and(truthy);
    if include_trashed {
        nd.insert("includeTrashed".into(), "1".into());
    }
    let item_type: Vec<String> = all(&pairs, "itemType").into_iter().map(str::to_string).collect();
    if !item_type.is_empty() {
        nd.insert("itemType".into(), item_type.join(","));
    }

    let mut forced_limit = None;
    let mut keys_param = |name: &str, nd: &mut BTreeMap<String, String>| -> ApiResult<Option<Vec<String>>> {
        let Some(raw) = last(&pairs, name) else { return Ok(None) };
        let keys: Vec<String> =
            raw.trim_matches(',').split(',').map(str::trim).filter(|k| is_valid_key(k)).map(str::to_string).collect();
        if keys.len() > MAX_OBJECT_KEYS {
            return Err(ApiError::bad_request(format!(
                "'{name}' cannot contain more than {MAX_OBJECT_KEYS} keys (the API documents this limit)"
            )));
        }
        nd.insert(name.into(), keys.join(","));
        forced_limit = Some(MAX_LIMIT);
        Ok(Some(keys))
    };
    let item_keys = keys_param("itemKey", &mut nd)?;
    let collection_keys = keys_param("collectionKey", &mut nd)?;
    let search_keys = keys_param("searchKey", &mut nd)?;

    let tags: Vec<String> = all(&pairs, "tag").into_iter().map(str::to_string).collect();
    if !tags.is_empty() {
        nd.insert("tag".into(), tags.join(","));
    }
    let tag_type: Vec<String> = all(&pairs, "tagType").into_iter().map(str::to_string).collect();
    if !tag_type.is_empty() {
        nd.insert("tagType".into(), tag_type.join(","));
    }

    let since_raw = last(&pairs, "since").or_else(|| last(&pairs, "newer"));
    let since = match since_raw {
        None => None,
        Some(s) => match s.trim().parse::<u64>() {
            Ok(n) => {
                if n != 0 {
                    nd.insert("since".into(), n.to_string());
                }
                Some(n)
            }
            Err(_) => return Err(ApiError::bad_request("Invalid value for 'since' parameter")),
        },
    };

    let item_q = last(&pairs, "itemQ").unwrap_or("").to_string();
    let item_qmode = last(&pairs, "itemQMode").unwrap_or("").to_lowercase();
    let item_tags: Vec<String> = all(&pairs, "itemTag").into_iter().map(str::to_string).collect();
    for (name, value) in [("itemQ", &item_q), ("itemQMode", &item_qmode)] {
        if !value.is_empty() {
            nd.insert(name.into(), value.clone());
        }
    }
    if !item_tags.is_empty() {
        nd.insert("itemTag".into(), item_tags.join(","));
    }

    // sort, direction (and the deprecated `order`)
    let mut sort_param = last(&pairs, "sort").map(str::to_string);
    let mut direction_param = last(&pairs, "direction").map(str::to_string);
    if let Some(order) = last(&pairs, "order") {
        if matches!(order, "asc" | "desc") {
            direction_param = Some(order.to_string());
        } else {
            if let Some(s) = sort_param.as_deref().filter(|s| matches!(*s, "asc" | "desc")) {
                direction_param = Some(s.to_string());
            }
            sort_param = Some(order.to_string());
        }
    }
    if let Some(s) = sort_param.clone().filter(|s| matches!(s.as_str(), "asc" | "desc")) {
        direction_param = Some(s);
        sort_param = None;
    }
    let sort = match sort_param {
        None => "dateModified".to_string(),
        Some(s) => {
            if !SORT_FIELDS.contains(&s.as_str()) {
                return Err(ApiError::bad_request(format!("Invalid 'sort' value '{s}'")));
            }
            match s.as_str() {
                "numItems" if action != Action::Tags => {
                    return Err(ApiError::bad_request(format!("Invalid 'order' value '{s}'")));
                }
                "itemKeyList" if action != Action::Items => {
                    return Err(ApiError::bad_request("order=itemKeyList is not valid for this request"));
                }
                "itemKeyList" if item_keys.is_none() => {
                    return Err(ApiError::bad_request("order=itemKeyList requires the itemKey parameter"));
                }
                "collectionKeyList" if action != Action::Collections => {
                    return Err(ApiError::bad_request("order=collectionKeyList is not valid for this request"));
                }
                "collectionKeyList" if collection_keys.is_none() => {
                    return Err(ApiError::bad_request("order=collectionKeyList requires the collectionKey parameter"));
                }
                "searchKeyList" if action != Action::Searches => {
                    return Err(ApiError::bad_request("order=searchKeyList is not valid for this request"));
                }
                "searchKeyList" if search_keys.is_none() => {
                    return Err(ApiError::bad_request("order=searchKeyList requires the searchKey parameter"));
                }
                _ => {}
            }
            s
        }
    };
    if sort != "dateModified" {
        nd.insert("sort".into(), sort.clone());
    }
    let direction = match direction_param {
        None => default_direction(&sort).to_string(),
        Some(d) if matches!(d.as_str(), "asc" | "desc") => d,
        Some(d) => return Err(ApiError::bad_request(format!("Invalid 'direction' value '{d}'"))),
    };
    if direction != default_direction(&sort) {
        nd.insert("direction".into(), direction.clone());
    }

    let start = last(&pairs, "start").and_then(|s| s.trim().parse::<i64>().ok()).unwrap_or(0).max(0) as u64;
    if start != 0 {
        nd.insert("start".into(), start.to_string());
    }
    let unlimited_format = matches!(format.as_str(), "keys" | "versions");
    let default_limit = if unlimited_format { None } else { Some(DEFAULT_LIMIT) };
    let limit = match forced_limit {
        Some(forced) => Some(forced),
        None => match last(&pairs, "limit").and_then(|s| s.trim().parse::<i64>().ok()) {
            Some(n) if n > 0 => Some(if unlimited_format { n as u64 } else { (n as u64).min(MAX_LIMIT) }),
            _ => default_limit,
        },
    };
    if limit != default_limit {
        if let Some(l) = limit {
            nd.insert("limit".into(), l.to_string());
        }
    }

    Ok(Params {
        format,
        include,
        q,
        qmode,
        include_trashed,
        item_type,
        item_keys,
        collection_keys,
        search_keys,
        tags,
        tag_type,
        since,
        sort,
        direction,
        start,
        limit,
        item_q,
        item_qmode,
        item_tags,
        non_default: nd,
    })
}

fn query_string(params: &BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return String::new();
    }
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        s.append_pair(k, v);
    }
    format!("?{}", s.finish())
}

/// The `Link` header of a multi-object response: `first`, `prev`, `next`, `last` (omitted when equal to the
/// request itself) and `alternate` (the zotero.org page).
pub fn link_header(path: &str, params: &Params, total: u64) -> String {
    let base = format!("{API_BASE}{path}");
    let nd = &params.non_default;
    let self_link = format!("{base}{}", query_string(nd));
    let with_start = |start: Option<u64>| {
        let mut p = nd.clone();
        match start {
            Some(s) if s > 0 => {
                p.insert("start".into(), s.to_string());
            }
            _ => {
                p.remove("start");
            }
        }
        format!("{base}{}", query_string(&p))
    };
    let mut parts = Vec::new();
    let first = with_start(None);
    if first != self_link {
        parts.push(format!("<{first}>; rel=\"first\""));
    }
    let start = params.start;
    if let Some(limit) = params.limit.filter(|l| *l > 0) {
        if start > 0 {
            parts.push(format!("<{}>; rel=\"prev\"", with_start(Some(start.saturating_sub(limit)))));
        }
        let last = if start == 0 && limit >= total {
            self_link.clone()
        } else {
            let last_start = if start >= total {
                total.saturating_sub(limit)
            } else {
                let mut ls = total - (total % limit);
                if ls == total {
                    ls = total.saturating_sub(limit);
                }
                ls
            };
            with_start(Some(last_start))
        };
        if start + limit < total {
            parts.push(format!("<{}>; rel=\"next\"", with_start(Some(start + limit))));
        }
        if last != self_link {
            parts.push(format!("<{last}>; rel=\"last\""));
        }
    } else if start > 0 {
        parts.push(format!("<{}>; rel=\"prev\"", with_start(None)));
    }
    parts.push(format!("<{WWW_BASE}{path}>; rel=\"alternate\""));
    parts.join(", ")
}

/// One `tag`/`itemType` parameter: `-` negates the whole set, ` || ` separates alternatives, `\-` is a literal
/// leading hyphen.
#[derive(Debug, Clone)]
pub struct SearchSet {
    pub negated: bool,
    pub values: Vec<String>,
}

pub fn search_sets(raw: &[String]) -> Vec<SearchSet> {
    raw.iter()
        .filter_map(|v| {
            let v = v.trim();
            if v.is_empty() {
                return None;
            }
            let (negated, rest) = if let Some(r) = v.strip_prefix('-') {
                (true, r)
            } else if v.starts_with("\\-") {
                (false, &v[1..])
            } else {
                (false, v)
            };
            let values = split_or(rest);
            Some(SearchSet { negated, values })
        })
        .collect()
}

/// Splits on `||` surrounded by whitespace, as Zotero's `/\s+\|\|\s+/`.
fn split_or(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let found = rest.match_indices("||").find(|(i, _)| {
            let before = rest[..*i].chars().next_back().is_some_and(char::is_whitespace);
            let after = rest[i + 2..].chars().next().is_some_and(char::is_whitespace);
            before && after
        });
        match found {
            Some((i, _)) => {
                out.push(rest[..i].trim_end().to_string());
                rest = rest[i + 2..].trim_start();
            }
            None => {
                out.push(rest.to_string());
                break;
            }
        }
    }
    out
}

/// Quick-search words: whitespace-separated, with double-quoted phrases kept whole.
pub fn search_words(q: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = q.chars().peekable();
    let mut current = String::new();
    while let Some(c) = chars.next() {
        if c == '"' {
            let phrase: String = chars.by_ref().take_while(|&c| c != '"').collect();
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            if !phrase.is_empty() {
                out.push(phrase);
            }
        } else if c.is_whitespace() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_search_sets() {
        let sets = search_sets(&["-a || b c".to_string(), "\\-x".to_string()]);
        assert!(sets[0].negated);
        assert_eq!(sets[0].values, ["a", "b c"]);
        assert!(!sets[1].negated);
        assert_eq!(sets[1].values, ["-x"]);
    }

    #[test]
    fn splits_quoted_phrases() {
        assert_eq!(search_words(r#"deep "neural nets" 2020"#), ["deep", "neural nets", "2020"]);
    }

    #[test]
    fn link_header_pages() {
        let p = parse("limit=10&start=10", Action::Items, false).unwrap_or_else(|e| panic!("{e}"));
        let link = link_header("/users/1/items", &p, 35);
        assert!(link.contains("<https://api.zotero.org/users/1/items?limit=10>; rel=\"first\""), "{link}");
        assert!(link.contains("<https://api.zotero.org/users/1/items?limit=10>; rel=\"prev\""), "{link}");
        assert!(link.contains("<https://api.zotero.org/users/1/items?limit=10&start=20>; rel=\"next\""), "{link}");
        assert!(link.contains("<https://api.zotero.org/users/1/items?limit=10&start=30>; rel=\"last\""), "{link}");
        assert!(link.ends_with("<https://www.zotero.org/users/1/items>; rel=\"alternate\""), "{link}");
    }
}
