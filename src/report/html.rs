//! The ladder's HTML page ([`html_report`]) and the escaping every page
//! uses; each kind's page is in its folder, on [`super::page`]'s frame.

pub use super::page::escape;
pub use crate::bench::ladder::report::html_report;
