//! The escaping every HTML page uses; each kind's page is in its folder
//! (the ladder's `bench::ladder::html_report`), on `report::page`'s frame.

pub use super::page::escape;
