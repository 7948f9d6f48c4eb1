//! The black-box suite: every test drives the real `moat` binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
