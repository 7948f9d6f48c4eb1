//! `read_file`: whole files and ranges, the numbering format, range errors,
//! empty files, the line rule for CRLF and lone CR, binary files, directories
//! and missing files (the line rule is documented in
//! `worker/src/tools/read_file.rs`).

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::{Value, json};

use super::util::{call_err, call_ok, fenced_body};

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("three.txt", "alpha\nbeta\ngamma\n");
    let twelve: String = (1..=12).map(|i| format!("l{i}\n")).collect();
    fx.file("twelve.txt", twelve);
    let hundred: String = (1..=100).map(|i| format!("r{i}\n")).collect();
    fx.file("hundred.txt", hundred);
    fx.file("empty.txt", "");
    fx.file("crlf.txt", "one\r\ntwo\r\nthree\r\n");
    fx.file("cr.txt", "one\rtwo\rthree");
    fx.file("mixed.txt", "a\r\r\nb\n\nc");
    fx.file("seps.txt", "x\u{2028}y\u{0c}z\u{0b}w\u{85}v\n");
    fx.file("no_newline.txt", "last");
    fx.file("blank_lines.txt", "\n\n");
    let mut bin = b"text at first".to_vec();
    bin.push(0);
    bin.extend_from_slice(b"more");
    fx.file("logo.bin", bin);
    let mut late_nul = vec![b'a'; 9000];
    late_nul.push(0);
    late_nul.push(b'\n');
    fx.file("late_nul.txt", late_nul);
    fx.file("latin1.txt", b"caf\xe9\n");
    fx.file("docs/inner.md", "inner\n");
    fx
}

fn read(m: &mut moat_tests::Moat, args: Value) -> Value {
    call_ok(m, "read_file", args)
}

#[test]
fn whole_file() {
    let fx = fixture();
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            let r = read(&mut m, json!({"path": "three.txt"}));
            let s = &r["structuredContent"];
            assert_eq!(s["path"], "three.txt");
            assert_eq!(s["size_bytes"], 17);
            assert_eq!(s["total_lines"], 3);
            assert_eq!(s["start_line"], 1);
            assert_eq!(s["end_line"], 3);
            assert_eq!(s["truncated"], false);
            assert_eq!(s["untrusted_content"], true);
            assert_eq!(fenced_body(&r), "1  alpha\n2  beta\n3  gamma");
            assert_eq!(text(&r, 0), "three.txt: lines 1-3 of 3, 17 bytes.");
            assert_eq!(r["content"].as_array().unwrap().len(), 2, "{r}");
            if era == Era::Modern {
                assert_eq!(r["resultType"], "complete", "{r}");
                assert_eq!(
                    r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
                    "moat"
                );
            }
        }
    }
}

#[test]
fn ranges_and_numbering() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let r = read(
            &mut m,
            json!({"path": "twelve.txt", "start_line": 9, "end_line": 10}),
        );
        assert_eq!(
            fenced_body(&r),
            " 9  l9\n10  l10",
            "width of the last number"
        );
        // The range asked for is answered whole: nothing cut it.
        assert_eq!(r["structuredContent"]["truncated"], false);
        assert_eq!(r["structuredContent"]["stopped_by"], json!([]));
        assert!(r["structuredContent"].get("next_start_line").is_none());
        let r = read(
            &mut m,
            json!({"path": "twelve.txt", "start_line": 6, "end_line": 7}),
        );
        assert_eq!(fenced_body(&r), "6  l6\n7  l7", "width of 7 is 1");
        let r = read(&mut m, json!({"path": "hundred.txt", "start_line": 98}));
        assert_eq!(fenced_body(&r), " 98  r98\n 99  r99\n100  r100");
        assert_eq!(r["structuredContent"]["truncated"], false);
        let r = read(&mut m, json!({"path": "hundred.txt", "end_line": 3}));
        assert_eq!(fenced_body(&r), "1  r1\n2  r2\n3  r3");
        let r = read(
            &mut m,
            json!({"path": "twelve.txt", "start_line": 12, "end_line": 12}),
        );
        assert_eq!(fenced_body(&r), "12  l12");
        assert_eq!(r["structuredContent"]["truncated"], false);
        // end_line past the end is clamped.
        let r = read(
            &mut m,
            json!({"path": "three.txt", "start_line": 2, "end_line": 999}),
        );
        let s = &r["structuredContent"];
        assert_eq!(
            (s["start_line"].as_u64(), s["end_line"].as_u64()),
            (Some(2), Some(3))
        );
        assert_eq!(s["truncated"], false);
        assert_eq!(text(&r, 0), "three.txt: lines 2-3 of 3, 17 bytes.");
    }
}

#[test]
fn impossible_ranges_are_unsupported() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let (code, r) = call_err(
            &mut m,
            "read_file",
            json!({"path": "three.txt", "start_line": 900}),
        );
        assert_eq!(code, "unsupported", "{r}");
        assert!(text(&r, 0).contains("does not exist"), "{r}");
        assert!(
            text(&r, 0).contains("1..3"),
            "the remedy gives the range: {r}"
        );
        let (code, r) = call_err(
            &mut m,
            "read_file",
            json!({"path": "twelve.txt", "start_line": 5, "end_line": 4}),
        );
        assert_eq!(code, "unsupported", "{r}");
        assert!(text(&r, 0).contains("before start_line"), "{r}");
        let (code, _) = call_err(
            &mut m,
            "read_file",
            json!({"path": "three.txt", "start_line": 4}),
        );
        assert_eq!(code, "unsupported");
    }
}

#[test]
fn an_empty_file_reads_fine() {
    let fx = fixture();
    for mode in Mode::BOTH {
        for era in Era::BOTH {
            let mut m = Moat::connect(&fx.root, &Options::new(mode), era);
            let r = read(&mut m, json!({"path": "empty.txt"}));
            let s = &r["structuredContent"];
            assert_eq!(s["total_lines"], 0, "{r}");
            assert_eq!(s["size_bytes"], 0, "{r}");
            assert_eq!(s["start_line"], 0, "{r}");
            assert_eq!(s["end_line"], 0, "{r}");
            assert_eq!(s["truncated"], false, "{r}");
            assert_eq!(fenced_body(&r), "");
            let r = read(&mut m, json!({"path": "empty.txt", "start_line": 1}));
            assert_eq!(r["structuredContent"]["total_lines"], 0);
            let (code, _) = call_err(
                &mut m,
                "read_file",
                json!({"path": "empty.txt", "start_line": 2}),
            );
            assert_eq!(code, "unsupported");
        }
    }
}

#[test]
fn line_endings_follow_the_documented_rule() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let r = read(&mut m, json!({"path": "crlf.txt"}));
        assert_eq!(r["structuredContent"]["total_lines"], 3);
        assert_eq!(fenced_body(&r), "1  one\n2  two\n3  three");
        let r = read(&mut m, json!({"path": "cr.txt"}));
        assert_eq!(r["structuredContent"]["total_lines"], 3);
        assert_eq!(fenced_body(&r), "1  one\n2  two\n3  three");
        // `\r\r\n` is a lone CR then a CRLF; `\n\n` an empty line between.
        let r = read(&mut m, json!({"path": "mixed.txt"}));
        assert_eq!(fenced_body(&r), "1  a\n2  \n3  b\n4  \n5  c");
        // Form feed, vertical tab, NEL, U+2028: not line breaks.
        let r = read(&mut m, json!({"path": "seps.txt"}));
        assert_eq!(r["structuredContent"]["total_lines"], 1, "{r}");
        assert_eq!(fenced_body(&r), "1  x\u{2028}y\u{0c}z\u{0b}w\u{85}v");
        let r = read(&mut m, json!({"path": "no_newline.txt"}));
        assert_eq!(r["structuredContent"]["total_lines"], 1);
        let r = read(&mut m, json!({"path": "blank_lines.txt"}));
        assert_eq!(r["structuredContent"]["total_lines"], 2);
        assert_eq!(fenced_body(&r), "1  \n2  ");
    }
}

#[test]
fn binary_files_are_refused_by_their_first_8_kib() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        let (code, r) = call_err(&mut m, "read_file", json!({"path": "logo.bin"}));
        assert_eq!(code, "binary_file", "{r}");
        assert!(!r.to_string().contains("text at first"), "{r}");
        let r = read(&mut m, json!({"path": "late_nul.txt"}));
        assert_eq!(r["structuredContent"]["total_lines"], 1);
        // Invalid UTF-8 is replaced, not refused.
        let r = read(&mut m, json!({"path": "latin1.txt"}));
        assert_eq!(fenced_body(&r), "1  caf\u{fffd}");
    }
}

#[test]
fn directories_and_missing_files() {
    let fx = fixture();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Legacy);
        for p in ["docs", "docs/", ".", ""] {
            let (code, r) = call_err(&mut m, "read_file", json!({"path": p}));
            assert_eq!(code, "not_a_file", "{p:?}: {r}");
            assert!(text(&r, 0).contains("list_directory"), "{r}");
        }
        for p in [
            "nope.txt",
            "docs/nope.md",
            "nope/deeper/file",
            "three.txt/child",
        ] {
            let (code, r) = call_err(&mut m, "read_file", json!({"path": p}));
            assert_eq!(code, "not_found", "{p}: {r}");
            assert!(r["structuredContent"]["remedy"].is_string(), "{r}");
        }
        let r = read(&mut m, json!({"path": "docs/inner.md"}));
        assert_eq!(fenced_body(&r), "1  inner");
    }
}

#[test]
fn each_read_gets_a_fresh_fence_nonce() {
    let fx = fixture();
    let mut m = Moat::connect(&fx.root, &Options::new(Mode::InProcess), Era::Modern);
    let a = text(&read(&mut m, json!({"path": "three.txt"})), 1);
    let b = text(&read(&mut m, json!({"path": "three.txt"})), 1);
    let nonce = |t: &str| t.lines().next().unwrap().to_owned();
    assert!(nonce(&a).starts_with("<untrusted-file-content id="), "{a}");
    assert_ne!(nonce(&a), nonce(&b));
}

#[test]
fn a_read_cut_by_a_limit_names_it_in_stopped_by_and_says_where_to_go_on() {
    let fx = fixture();
    let wide: String = (1..=20)
        .map(|i| format!("{i:03} {}\n", "w".repeat(996)))
        .collect();
    fx.file("wide.txt", wide);
    for mode in Mode::BOTH {
        let o = Options::new(mode)
            .env("MOAT_SANDBOX__MAX_READ_LINES", "10")
            .env("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        // The line limit.
        let r = read(&mut m, json!({"path": "hundred.txt"}));
        let s = &r["structuredContent"];
        assert_eq!(s["truncated"], true, "{mode:?}: {r}");
        assert_eq!(s["stopped_by"], json!(["lines"]), "{r}");
        assert_eq!(
            (s["end_line"].as_u64(), s["next_start_line"].as_u64()),
            (Some(10), Some(11)),
            "{r}"
        );
        assert!(
            text(&r, 0).contains("More: read_file with start_line=11."),
            "{r}"
        );
        // The answer budget.
        let r = read(&mut m, json!({"path": "wide.txt", "end_line": 10}));
        let s = &r["structuredContent"];
        assert_eq!(s["truncated"], true, "{mode:?}: {r}");
        assert_eq!(s["stopped_by"], json!(["bytes"]), "{r}");
        let end = s["end_line"].as_u64().unwrap_or(0);
        assert!(end > 0 && end < 10, "{r}");
        assert_eq!(s["next_start_line"].as_u64(), Some(end + 1), "{r}");
        // A range within both limits is complete, though the file goes on.
        let r = read(
            &mut m,
            json!({"path": "hundred.txt", "start_line": 5, "end_line": 9}),
        );
        let s = &r["structuredContent"];
        assert_eq!(
            (s["truncated"].as_bool(), &s["stopped_by"]),
            (Some(false), &json!([])),
            "{r}"
        );
        assert!(s.get("next_start_line").is_none(), "{r}");
        assert!(!text(&r, 0).contains("More:"), "{r}");
    }
}
