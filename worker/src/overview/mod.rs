//! `project_overview` helpers: manifest summaries and file classification.

pub mod classify;
pub mod manifest;
