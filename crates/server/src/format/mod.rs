//! How library objects read: structured summaries for `structuredContent` and the Markdown for text blocks.
//! Tools assemble data; everything about presentation lives here.

pub mod collections;
pub mod items;
pub mod note_html;
pub mod note_sanitize;
pub mod text;
