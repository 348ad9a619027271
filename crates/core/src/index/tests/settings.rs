//! `IndexSettings::from_lookup`.

use std::collections::HashMap;

use super::*;

fn settings(vars: &[(&str, &str)]) -> Result<IndexSettings, IndexError> {
    let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    IndexSettings::from_lookup(|name| vars.get(name).cloned())
}

#[test]
fn defaults_are_the_typescript_projects() {
    let defaults = settings(&[]).unwrap();
    assert_eq!(
        defaults,
        IndexSettings {
            instance: "zotero-items".into(),
            embedding_model: "@cf/baai/bge-m3".into(),
            reranking_model: "@cf/baai/bge-reranker-base".into(),
        }
    );
    assert_eq!(settings(&[("AI_SEARCH_INSTANCE", "")]).unwrap(), defaults, "empty is unset");
}

#[test]
fn variables_override_the_defaults() {
    let custom = settings(&[
        ("AI_SEARCH_INSTANCE", "my_library-2"),
        ("EMBEDDING_MODEL", "@cf/baai/bge-large-en-v1.5"),
        ("RERANKING_MODEL", "@cf/other"),
    ])
    .unwrap();
    assert_eq!(custom.instance, "my_library-2");
    assert_eq!(custom.embedding_model, "@cf/baai/bge-large-en-v1.5");
    assert_eq!(custom.reranking_model, "@cf/other");
}

#[test]
fn instance_ids_follow_ai_searchs_rule() {
    for good in ["a", "zotero-items", "a_b-c-9", &"x".repeat(32)] {
        assert!(settings(&[("AI_SEARCH_INSTANCE", good)]).is_ok(), "{good}");
    }
    for bad in ["Zotero", "-a", "a-", "a--b", "a b", "a.b", &"x".repeat(33)] {
        let error = settings(&[("AI_SEARCH_INSTANCE", bad)]).unwrap_err();
        assert!(error.to_string().contains("AI_SEARCH_INSTANCE"), "{bad}: {error}");
    }
}
