//! The check's answer as a checklist: the counts first, then every reference with a box a writer ticks off
//! (`[x]` nothing to do, `[ ]` something to look at), its flags, disagreements and the passages bearing on each
//! citing sentence.

use super::{CheckReferencesOutput, FlagKind, Outcome, ReferenceReport};
use crate::format::text::truncate;

pub(super) fn render(output: &CheckReferencesOutput) -> String {
    let c = &output.counts;
    let last = output.first_position + output.references.len() as u64 - u64::from(!output.references.is_empty());
    let mut out = format!(
        "## Reference check ({}, references {}–{} of {})\n\n{} matched · {} not in the library · {} unresolved · {} \
         flagged{}\n",
        output.format,
        output.first_position,
        last,
        output.total_references,
        c.matched,
        c.not_in_library,
        c.unresolved,
        c.flagged,
        if c.retracted > 0 { format!(" · **{} retracted**", c.retracted) } else { String::new() },
    );
    for report in &output.references {
        out.push('\n');
        out.push_str(&reference(report));
    }
    if let Some(stopped) = &output.stopped {
        out.push_str(&format!("\n_{stopped}_\n"));
    }
    if let Some(cursor) = &output.next_cursor {
        out.push_str(&format!("\nMore references remain: call again with the same text and cursor \"{cursor}\".\n"));
    }
    let against = match &output.mirror {
        Some(mirror) if mirror.complete => {
            format!("the whole library ({} items, its mirror at version {})", mirror.items, mirror.library_version)
        }
        _ => format!("{} library items", output.library_items),
    };
    out.push_str(&format!("\n_{} requests; matched against {against}._", output.requests));
    if let Some(note) = &output.note {
        out.push_str(&format!("\n\n_{note}_"));
    }
    out
}

fn reference(r: &ReferenceReport) -> String {
    let clean = r.outcome == Outcome::Matched
        && r.flags.is_empty()
        && r.disagreements.is_empty()
        && r.support.iter().all(|s| s.verdict == "passagesFound");
    let title = r.title.as_deref().map(|t| format!(" “{}”", truncate(t, 120))).unwrap_or_default();
    let what = match r.outcome {
        Outcome::Matched => format!(
            "in the library as {} (by {})",
            r.item_key.as_deref().unwrap_or_default(),
            r.matched_by.as_deref().unwrap_or_default()
        ),
        Outcome::NotInLibrary => "**not in the library**".to_owned(),
        Outcome::Unresolved => "**unresolved**".to_owned(),
    };
    let mut out = format!("- [{}] {}{title}: {what}\n", if clean { "x" } else { " " }, r.label);
    if !r.also_matching.is_empty() {
        out.push_str(&format!("  - also in the library as {}\n", r.also_matching.join(", ")));
    }
    for flag in &r.flags {
        let loud = matches!(flag.kind, FlagKind::Retracted | FlagKind::ExpressionOfConcern);
        let name = serde_json::to_value(flag.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        if loud {
            out.push_str(&format!("  - **{name}**: {}\n", flag.detail));
        } else {
            out.push_str(&format!("  - {name}: {}\n", flag.detail));
        }
    }
    for d in &r.disagreements {
        let library = if d.library.is_empty() { "(none)" } else { d.library.as_str() };
        let side = match d.registry_agrees_with.as_deref() {
            Some("neither") => "; the registry agrees with neither".to_owned(),
            Some(side) => format!("; the registry agrees with the {side}"),
            None => String::new(),
        };
        out.push_str(&format!("  - {}: manuscript “{}”, library “{library}”{side}\n", d.field, d.manuscript));
    }
    if let Some(record) = &r.registry {
        if r.outcome != Outcome::Matched {
            let confidence = record.confidence.as_deref().map(|c| format!(", {c} confidence")).unwrap_or_default();
            let doi = record.doi.as_deref().map(|d| format!(" doi:{d}")).unwrap_or_default();
            out.push_str(&format!(
                "  - {} ({}{confidence}):{doi} “{}”{}\n",
                record.source,
                record.found_by,
                truncate(&record.title, 120),
                record.year.as_deref().map(|y| format!(", {y}")).unwrap_or_default()
            ));
        }
    }
    if let Some(reason) = &r.reason {
        out.push_str(&format!("  - {reason}\n"));
    }
    if r.outcome == Outcome::Unresolved && !r.tried.is_empty() {
        out.push_str(&format!("  - tried: {}\n", r.tried.join("; ")));
    }
    for s in &r.support {
        out.push_str(&format!("  - line {}: “{}” — {}\n", s.line, truncate(&s.sentence, 160), s.verdict));
        for p in &s.passages {
            let page = p
                .page_label
                .as_deref()
                .map(|l| format!(", p. {l}"))
                .unwrap_or_else(|| p.page.map(|n| format!(", page {n}")).unwrap_or_default());
            out.push_str(&format!("    - [{} {}{page}] {}\n", p.source, p.source_key, truncate(&p.text, 300)));
        }
    }
    if r.sentences_unchecked > 0 {
        out.push_str(&format!("  - {} more citing sentence(s) not checked\n", r.sentences_unchecked));
    }
    if let Some(imported) = &r.imported {
        out.push_str(&format!("  - {}\n", imported.note));
    }
    out
}
