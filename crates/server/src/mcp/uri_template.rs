//! Matching a URI against a simple RFC 6570 template (level 1: `{name}` expressions), as resource templates use.

use std::collections::HashMap;

/// The variables of `uri` under `template`, or `None` when it does not match. A variable matches one or more
/// characters up to the next literal part of the template, never across `/`, `?` or `#`, and is
/// percent-decoded.
pub fn match_template(template: &str, uri: &str) -> Option<HashMap<String, String>> {
    let mut variables = HashMap::new();
    let mut rest_template = template;
    let mut rest_uri = uri;
    while !rest_template.is_empty() {
        match rest_template.find('{') {
            Some(0) => {
                let close = rest_template.find('}')?;
                let name = &rest_template[1..close];
                rest_template = &rest_template[close + 1..];
                let literal_end = rest_template.find('{').unwrap_or(rest_template.len());
                let next_literal = &rest_template[..literal_end];
                let value_end = if next_literal.is_empty() { rest_uri.len() } else { rest_uri.find(next_literal)? };
                let raw = &rest_uri[..value_end];
                if raw.is_empty() || raw.contains(['/', '?', '#']) {
                    return None;
                }
                variables.insert(name.to_owned(), percent_decode(raw)?);
                rest_uri = &rest_uri[value_end..];
            }
            Some(start) => {
                rest_uri = rest_uri.strip_prefix(&rest_template[..start])?;
                rest_template = &rest_template[start..];
            }
            None => {
                return (rest_uri == rest_template).then_some(variables);
            }
        }
    }
    rest_uri.is_empty().then_some(variables)
}

fn percent_decode(segment: &str) -> Option<String> {
    percent_encoding::percent_decode_str(segment).decode_utf8().ok().map(|text| text.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_single_variable() {
        let vars = match_template("zotero://item/{key}", "zotero://item/ABCD1234").unwrap();
        assert_eq!(vars["key"], "ABCD1234");
    }

    #[test]
    fn refuses_other_prefixes_empty_values_and_slashes() {
        assert!(match_template("zotero://item/{key}", "zotero://items/ABCD1234").is_none());
        assert!(match_template("zotero://item/{key}", "zotero://item/").is_none());
        assert!(match_template("zotero://item/{key}", "zotero://item/A/B").is_none());
    }

    #[test]
    fn matches_several_variables_and_decodes_them() {
        let vars = match_template("x://{a}/and/{b}", "x://one%20two/and/three").unwrap();
        assert_eq!(vars["a"], "one two");
        assert_eq!(vars["b"], "three");
    }
}
