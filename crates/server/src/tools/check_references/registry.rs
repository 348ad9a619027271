//! What the registries say of a reference: the work an identifier names, the candidates CrossRef's bibliographic
//! search finds for a reference without one (each judged, never taken on CrossRef's score alone), and the
//! notices and versions recorded since publication, as flags.

use serde_json::{json, Value};
use zotero_mcp_core::platform::KvWrite;
use zotero_mcp_core::refcheck::confidence::{confidence, Confidence};
use zotero_mcp_core::refcheck::reflist::ListedReference;
use zotero_mcp_core::sources::{Identifier, Reference, RegistryNotes, ResolveError, Source, Update};

use super::{Flag, FlagKind};
use crate::context::RequestContext;

/// Candidates asked of a bibliographic search: enough that the right work is among them when it exists.
const CANDIDATES: usize = 3;

/// How long a registry's record is kept in `CACHE_KV` for the next check (a notice published since shows within
/// a week), and how long its "no such record" (a corrected identifier is another key).
const RECORD_KEPT_SECONDS: u64 = 7 * 24 * 3600;
const MISSING_KEPT_SECONDS: u64 = 24 * 3600;

/// The record `id` names, or why none came (in the check's words: the importer's advice to create the item
/// from its fields does not apply here). Kept in `CACHE_KV`, so checking a manuscript again after an edit asks
/// the registries only about what is new; a failure other than "no such record" is never kept.
pub async fn look_up(ctx: &RequestContext, id: &Identifier) -> Result<Reference, NoRecord> {
    let key = format!("refcheck:record:{}", id.key());
    if let Ok(Some(text)) = ctx.cache().get(&key).await {
        if let Some(kept) = decode(&text) {
            return kept;
        }
    }
    match ctx.services().resolve_reference(id).await {
        Ok(reference) => {
            let _ = ctx.cache().put(&key, &encode(&reference), KvWrite::ExpiresIn(RECORD_KEPT_SECONDS)).await;
            Ok(reference)
        }
        Err(ResolveError::NotFound { sources, what }) => {
            let why = format!("{sources} know no {what}");
            let kept = json!({ "missing": why }).to_string();
            let _ = ctx.cache().put(&key, &kept, KvWrite::ExpiresIn(MISSING_KEPT_SECONDS)).await;
            Err(NoRecord::Missing(why))
        }
        Err(other) => Err(NoRecord::Failed(other)),
    }
}

/// Why a registry gave no record for an identifier, in the check's words.
#[derive(Debug, thiserror::Error)]
pub enum NoRecord {
    /// The registries know no such record ("CrossRef and DataCite know no DOI 10.…"); kept for a day.
    #[error("{0}")]
    Missing(String),
    /// Asking failed (never kept: the next check asks again).
    #[error(transparent)]
    Failed(ResolveError),
}

fn encode(reference: &Reference) -> String {
    let updates: Vec<Value> = reference
        .notes
        .updates
        .iter()
        .map(|u| json!({ "kind": u.kind, "doi": u.notice_doi, "date": u.date, "source": u.source }))
        .collect();
    json!({
        "source": reference.source.to_string(),
        "data": reference.data,
        "pdf": reference.pdf_url,
        "updates": updates,
        "publishedAs": reference.notes.published_as,
        "preprints": reference.notes.preprints,
    })
    .to_string()
}

/// A kept record (`None` for anything unreadable, which is then asked again).
fn decode(text: &str) -> Option<Result<Reference, NoRecord>> {
    let kept: Value = serde_json::from_slice(text.as_bytes()).ok()?;
    if let Some(why) = kept.get("missing").and_then(Value::as_str) {
        return Some(Err(NoRecord::Missing(why.to_owned())));
    }
    let source = match kept.get("source")?.as_str()? {
        "CrossRef" => Source::CrossRef,
        "DataCite" => Source::DataCite,
        "arXiv" => Source::Arxiv,
        "Open Library" => Source::OpenLibrary,
        "PubMed" => Source::PubMed,
        _ => return None,
    };
    let text_of = |value: &Value, name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    let strings = |name: &str| -> Vec<String> {
        kept.get(name)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let updates = kept
        .get("updates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|u| {
            Some(Update {
                kind: text_of(u, "kind")?,
                notice_doi: text_of(u, "doi"),
                date: text_of(u, "date"),
                source: text_of(u, "source"),
            })
        })
        .collect();
    let notes = RegistryNotes { updates, published_as: strings("publishedAs"), preprints: strings("preprints") };
    let data = kept.get("data")?.as_object()?.clone();
    Some(Ok(Reference { data, source, pdf_url: text_of(&kept, "pdf"), notes }))
}

/// The candidate CrossRef's bibliographic search finds for `written` that is most surely the work (ties broken by
/// CrossRef's order), with how surely; `None` when the search found nothing.
pub async fn search(
    ctx: &RequestContext,
    written: &ListedReference,
) -> Result<Option<(Reference, Confidence)>, ResolveError> {
    let candidates = ctx.services().bibliographic_candidates(&written.text, CANDIDATES).await?;
    let mut best: Option<(Reference, Confidence)> = None;
    for (reference, _score) in candidates {
        let judged = confidence(written, &reference.data);
        if best.as_ref().is_none_or(|(_, so_far)| judged > *so_far) {
            best = Some((reference, judged));
        }
    }
    Ok(best)
}

/// The flags a record's notes raise: a retraction (or withdrawal), a correction, an expression of concern, any
/// other update notice, and a preprint's published version.
pub fn flags_of(notes: &RegistryNotes, source: Source) -> Vec<Flag> {
    let mut flags = Vec::new();
    for update in &notes.updates {
        let kind = if update.withdraws() {
            FlagKind::Retracted
        } else {
            match update.kind.as_str() {
                "correction" | "erratum" | "corrigendum" | "addendum" => FlagKind::Corrected,
                "expression_of_concern" => FlagKind::ExpressionOfConcern,
                _ => FlagKind::Updated,
            }
        };
        let mut detail = format!("{source} lists a {} notice", update.kind.replace('_', " "));
        let mut about: Vec<String> = Vec::new();
        about.extend(update.notice_doi.as_ref().map(|doi| format!("doi:{doi}")));
        about.extend(update.date.clone());
        about.extend(update.source.as_ref().map(|s| match s.as_str() {
            "retraction-watch" => "from the Retraction Watch database".to_owned(),
            "publisher" => "from the publisher".to_owned(),
            other => format!("from {other}"),
        }));
        if !about.is_empty() {
            detail.push_str(&format!(" ({})", about.join(", ")));
        }
        let mut flag = Flag::new(kind, detail);
        flag.source = Some(source.to_string());
        flags.push(flag);
    }
    // The gravest first: a retraction before an expression of concern before a correction (a few flags: no
    // sort is linked into the Worker for them).
    let gravity = |flag: &Flag| match flag.kind {
        FlagKind::Retracted => 0,
        FlagKind::ExpressionOfConcern => 1,
        FlagKind::Corrected => 2,
        _ => 3,
    };
    let mut flags: Vec<Flag> = (0..4)
        .flat_map(|level| flags.iter().filter(move |f| gravity(f) == level).cloned().collect::<Vec<_>>())
        .collect();
    for published in &notes.published_as {
        let mut flag = Flag::new(
            FlagKind::PreprintPublished,
            format!("a preprint; {source} links its published version, doi:{published}: cite that instead"),
        );
        flag.source = Some(source.to_string());
        flags.push(flag);
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice(kind: &str) -> Update {
        Update { kind: kind.into(), notice_doi: Some(format!("10.5555/{kind}")), date: None, source: None }
    }

    #[test]
    fn every_kind_of_notice_has_its_flag_the_gravest_first() {
        let notes = RegistryNotes {
            updates: ["erratum", "new_edition", "expression_of_concern", "withdrawal"].map(notice).to_vec(),
            published_as: vec!["10.5555/journal".into()],
            preprints: Vec::new(),
        };
        let kinds: Vec<FlagKind> = flags_of(&notes, Source::CrossRef).iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [
                FlagKind::Retracted,
                FlagKind::ExpressionOfConcern,
                FlagKind::Corrected,
                FlagKind::Updated,
                FlagKind::PreprintPublished
            ]
        );
    }

    #[test]
    fn a_kept_record_reads_back_as_it_was() {
        let mut data = serde_json::Map::new();
        data.insert("title".into(), json!("A kept work"));
        let reference = Reference {
            data,
            source: Source::DataCite,
            pdf_url: Some("https://example.org/a.pdf".into()),
            notes: RegistryNotes {
                updates: vec![notice("retraction")],
                published_as: vec!["10.1/x".into()],
                preprints: vec![],
            },
        };
        assert!(matches!(decode(&encode(&reference)), Some(Ok(kept)) if kept == reference));
        assert!(matches!(
            decode(r#"{"missing":"CrossRef knows no DOI 10.1/y"}"#),
            Some(Err(NoRecord::Missing(why))) if why == "CrossRef knows no DOI 10.1/y"
        ));
        assert!(decode("not json").is_none());
    }
}
