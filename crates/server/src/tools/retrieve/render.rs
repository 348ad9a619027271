//! `zotero_retrieve`'s answer as Markdown: the passages, best first, each with where it is from, then what was
//! read of each item.

use super::RetrieveOutput;

pub(super) fn render(output: &RetrieveOutput) -> String {
    let mut out = format!("## Evidence for “{}”\n", output.query);
    if output.passages.is_empty() {
        out.push_str(
            "\n_No passage holds the query's words. Try other words (a term the paper would use), or read the \
             text with zotero_read_attachment._\n",
        );
    }
    for (at, p) in output.passages.iter().enumerate() {
        let mut place = format!("{} {}", p.source, p.source_key);
        if let Some(page) = p.page {
            place.push_str(&format!(", page {page}"));
        }
        if let Some(label) = p.page_label.as_deref().filter(|l| Some(l.to_string()) != p.page.map(|n| n.to_string())) {
            place.push_str(&format!(" (labelled {label})"));
        }
        out.push_str(&format!("\n{}. [item {}, {place}]", at + 1, p.item_key));
        if !p.text.is_empty() {
            out.push_str(&format!("\n   {}", p.text));
        }
        if let Some(comment) = &p.comment {
            out.push_str(&format!("\n   Annotator's comment: {comment}"));
        }
    }
    if output.truncated {
        out.push_str(&format!(
            "\n\n_{} passage(s) matched; more than shown (raise `passages` or `maxChars`, or read on where an \
             attachment's text was cut)._",
            output.matching
        ));
    }
    for item in &output.items {
        out.push_str(&format!("\n\n### {} {}", item.item_key, item.title.as_deref().unwrap_or("(untitled)")));
        for a in &item.attachments {
            let mut line =
                format!("\n- attachment {} ({}): {}", a.key, a.content_type.as_deref().unwrap_or("?"), a.status);
            if let Some(c) = &a.coverage {
                match (c.pages_read, c.total_pages) {
                    (Some(read), Some(total)) => line.push_str(&format!(", {read} of {total} pages")),
                    _ => line.push_str(&format!(", {} characters", c.indexed_chars)),
                }
                if let Some(source) = &a.text_source {
                    line.push_str(&format!(" from {source}"));
                }
            }
            if let Some(reason) = &a.reason {
                line.push_str(&format!(" — {reason}"));
            }
            out.push_str(&line);
        }
        for skipped in &item.sources_skipped {
            out.push_str(&format!("\n- no {}: {}", skipped.source, skipped.reason));
        }
    }
    out
}
