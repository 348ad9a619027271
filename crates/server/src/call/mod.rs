//! A call resolved once, into values: its [`Plan`] (what it is), its [`Target`] (what it works on), and its
//! [`Record`] (what it leaves behind), over the request's [`Services`]. The MCP layer runs the steps in that
//! order around every tool (`crate::mcp::pipeline`); resources, prompts and the scheduled sync resolve a
//! reading plan the same way.

mod plan;
mod record;
mod refusal;
mod services;
mod session;
mod target;

pub use plan::{Access, Plan};
pub use record::{journal_of, settle_cut_off, Record};
pub use refusal::{FilesUnavailable, NotConfirmed, WriterRefused};
pub use services::Services;
pub use session::Session;
pub use target::{Target, Unresolved};
