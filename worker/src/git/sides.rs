//! Each side of a text change as a diff compares it: the whole blob or
//! work-tree file redacted before it is diffed, so hunks, the stat's counts,
//! hunk-header function names and rename similarity are all computed from
//! redacted text, and the decision is made on the whole side, never on the
//! hunks cut from it.

use std::borrow::Cow;

use crate::redact::{RedactionReport, Redactor};
use crate::sources;

/// The text one side of a changed file is diffed as: the whole blob or
/// work-tree file redacted ([`sources::redact_source_bytes`], which keeps
/// its line breaks, so hunk line numbers are the file's), or its raw bytes
/// when redaction replaced nothing (so text that is not UTF-8 is compared
/// byte for byte, as git compares it). What was replaced goes into `report`.
///
/// The decision is made on the whole side, never on the hunks cut from it:
/// a rule sees a private-key block's `BEGIN` line, a key on the line before
/// its value, a header split across lines, however little of them a hunk
/// shows, and a `+`/`-`/` ` prefix is never read as part of a credential.
pub fn prepare_side<'a>(
    redactor: &Redactor,
    bytes: &'a [u8],
    report: &mut RedactionReport,
    work: &crate::work::Account,
) -> Cow<'a, [u8]> {
    let mut side = RedactionReport::default();
    let text = sources::redact_source_bytes(redactor, bytes, &mut side, work);
    if side.count() == 0 {
        return Cow::Borrowed(bytes);
    }
    report.merge(&side);
    Cow::Owned(text.into_owned().into_bytes())
}

/// Both sides of a text change as they are diffed, and whether redaction
/// replaced anything in either. When one side was redacted, both are read
/// as text (invalid UTF-8 as U+FFFD), so lines that differ only in how
/// they were decoded never show as changed.
pub fn prepare_sides<'a>(
    redactor: &Redactor,
    old: &'a [u8],
    new: &'a [u8],
    report: &mut RedactionReport,
    work: &crate::work::Account,
) -> (Cow<'a, [u8]>, Cow<'a, [u8]>, bool) {
    let (a, b) = (
        prepare_side(redactor, old, report, work),
        prepare_side(redactor, new, report, work),
    );
    match (a, b) {
        (Cow::Borrowed(a), Cow::Borrowed(b)) => (Cow::Borrowed(a), Cow::Borrowed(b), false),
        (a, b) => {
            let lossy = |side: Cow<'a, [u8]>| match side {
                Cow::Borrowed(raw) => match sources::decode(raw) {
                    Cow::Borrowed(_) => Cow::Borrowed(raw),
                    Cow::Owned(text) => Cow::Owned(text.into_bytes()),
                },
                owned @ Cow::Owned(_) => owned,
            };
            (lossy(a), lossy(b), true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(line: &str) -> Vec<u8> {
        let k = "PRIVATE KEY";
        format!(
            "a\n-----BEGIN RSA {k}-----\nMIIEowIBAAKCAQEA1234\n{line}\n-----END RSA {k}-----\nz\n"
        )
        .into_bytes()
    }

    #[test]
    fn sides_without_a_credential_are_compared_raw() {
        // Two Latin-1 sides that differ in one byte: decoded, both would
        // read `caf\u{fffd}`, and the change would vanish.
        let (old, new) = (b"caf\xe9\n".as_slice(), b"caf\xe8\n".as_slice());
        let mut report = RedactionReport::default();
        let (a, b, redacted) = prepare_sides(
            &Redactor::new(true),
            old,
            new,
            &mut report,
            &crate::work::Account::default(),
        );
        assert!(!redacted);
        assert_eq!((a.as_ref(), b.as_ref()), (old, new));
        assert_eq!(report.count(), 0);
    }

    #[test]
    fn sides_with_a_credential_are_diffed_redacted_line_for_line() {
        let (old, new) = (key("abcdefghijklmnop"), key("qrstuvwxyzabcdef"));
        let mut report = RedactionReport::default();
        let (a, b, redacted) = prepare_sides(
            &Redactor::new(true),
            &old,
            &new,
            &mut report,
            &crate::work::Account::default(),
        );
        assert!(redacted);
        assert_eq!(a, b, "the change lies inside the block");
        let text = String::from_utf8(a.into_owned()).unwrap();
        assert_eq!(text.lines().count(), 6, "{text}");
        assert!(
            !text.contains("MIIE") && !text.contains("abcdefgh"),
            "{text}"
        );
        assert_eq!(report.count(), 2);
        // With redaction off, both sides are the raw bytes.
        let mut off = RedactionReport::default();
        let (a, _, redacted) = prepare_sides(
            &Redactor::new(false),
            &old,
            &new,
            &mut off,
            &crate::work::Account::default(),
        );
        assert!(!redacted);
        assert_eq!(a.as_ref(), old.as_slice());
    }
}
