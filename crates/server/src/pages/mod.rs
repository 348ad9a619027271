//! The server's own pages: the landing page and the health report.

pub mod health;
pub mod landing;

pub use crate::format::text::escape_html;
