//! What the registries say of a reference: the work an identifier names, the candidates CrossRef's bibliographic
//! search finds for a reference without one (each judged, never taken on CrossRef's score alone), and the
//! notices and versions recorded since publication, as flags.

use zotero_mcp_core::refcheck::confidence::{confidence, Confidence};
use zotero_mcp_core::refcheck::reflist::ListedReference;
use zotero_mcp_core::sources::{Identifier, Reference, RegistryNotes, ResolveError, Source};

use super::{Flag, FlagKind};
use crate::context::RequestContext;
use crate::tools::next_step::NextStep;

/// Candidates asked of a bibliographic search: enough that the right work is among them when it exists.
const CANDIDATES: usize = 3;

/// The record `id` names, or why none came (in the check's words: the importer's advice to create the item
/// from its fields does not apply here).
pub async fn look_up(ctx: &RequestContext, id: &Identifier) -> Result<Reference, String> {
    ctx.resolve_reference(id).await.map_err(|error| match error {
        ResolveError::NotFound { sources, what } => format!("{sources} know no {what}"),
        other => other.to_string(),
    })
}

/// The candidate CrossRef's bibliographic search finds for `written` that is most surely the work (ties broken by
/// CrossRef's order), with how surely; `None` when the search found nothing.
pub async fn search(
    ctx: &RequestContext,
    written: &ListedReference,
) -> Result<Option<(Reference, Confidence)>, String> {
    let candidates = ctx.bibliographic_candidates(&written.text, CANDIDATES).await.map_err(|e| e.with_next_step())?;
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
