//! Volume limits: the stdio line cap (default 1 MiB, and configured through
//! `MOAT_HTTP__MAX_REQUEST_BYTES`) with resync, and the sandbox caps on file
//! bytes, lines read and directory entries.

use moat_tests::{Era, Fixture, Moat, Mode, Options, text};
use serde_json::{Value, json};

use super::util::{call_err, call_ok, rpc_error_of};

/// A `tools/list` request line padded (in an ignored member) to `len` bytes.
fn padded_request(id: i64, len: usize) -> Vec<u8> {
    let base = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list",
        "params": {"_meta": Moat::modern_meta(), "pad": ""}});
    let base_len = serde_json::to_vec(&base).unwrap().len();
    assert!(len > base_len);
    let mut v = base;
    v["params"]["pad"] = Value::String("p".repeat(len - base_len));
    let mut line = serde_json::to_vec(&v).unwrap();
    assert_eq!(line.len(), len);
    line.push(b'\n');
    line
}

#[test]
fn an_oversized_line_is_a_parse_error_and_the_stream_resyncs() {
    let fx = Fixture::new();
    for mode in Mode::BOTH {
        let mut m = Moat::connect(&fx.root, &Options::new(mode), Era::Modern);
        // Just under the 1 MiB cap: served.
        m.send_raw(&padded_request(1, 1_048_000));
        let r = m.recv();
        assert_eq!(r["id"], 1, "{r}");
        assert!(r["result"]["tools"].is_array(), "{r}");
        // Over it (a valid request, with an id): -32700 with a null id.
        m.send_raw(&padded_request(2, 1_100_000));
        let r = m.recv();
        let (code, msg, _) = rpc_error_of(&r);
        assert_eq!(code, -32700, "{r}");
        assert_eq!(r["id"], Value::Null, "{r}");
        assert!(msg.contains("1048576"), "the message names the cap: {r}");
        // The very next request on the stream works.
        m.send_raw(&padded_request(3, 400));
        let r = m.recv();
        assert_eq!(r["id"], 3, "{r}");
        assert!(r["result"]["tools"].is_array(), "{r}");
        // A 3 MiB line without a single newline, then a request.
        let mut huge = vec![b'x'; 3 << 20];
        huge.push(b'\n');
        m.send_raw(&huge);
        m.send_raw(&padded_request(4, 400));
        let r = m.recv();
        assert_eq!(r["error"]["code"], -32700, "{r}");
        let r = m.recv();
        assert_eq!(r["id"], 4, "{r}");
        let (status, rest) = m.finish();
        assert!(status.success());
        assert!(rest.is_empty(), "one error per oversized line: {rest:?}");
    }
}

#[test]
fn the_line_cap_follows_max_request_bytes() {
    let fx = Fixture::new();
    let o = Options::new(Mode::InProcess).env("MOAT_HTTP__MAX_REQUEST_BYTES", "2048");
    let mut m = Moat::connect(&fx.root, &o, Era::Modern);
    m.send_raw(&padded_request(1, 2000));
    let r = m.recv();
    assert_eq!(r["id"], 1, "{r}");
    assert!(r["result"]["tools"].is_array(), "{r}");
    m.send_raw(&padded_request(2, 3000));
    let r = m.recv();
    let (code, msg, _) = rpc_error_of(&r);
    assert_eq!(code, -32700, "{r}");
    assert!(msg.contains("2048"), "{r}");
    m.send_raw(&padded_request(3, 500));
    let r = m.recv();
    assert_eq!(r["id"], 3, "{r}");
    assert!(r["result"]["tools"].is_array(), "{r}");
}

/// Lines of `answer` without their numbers.
fn shown_lines(answer: &Value) -> Vec<String> {
    super::util::fenced_body(answer)
        .lines()
        .map(|l| {
            let l = l.trim_start();
            l.split_once("  ").map_or(l, |(_, t)| t).to_owned()
        })
        .collect()
}

#[test]
fn max_file_bytes_bounds_an_answer_not_which_files_can_be_read() {
    let fx = Fixture::new();
    // 3,000 numbered lines (~39 KB) with every line ending: \n, \r\n and a
    // lone \r, so the streamed reader must agree with the whole-file one.
    let mut body = String::new();
    for i in 1..=3000 {
        body.push_str(&format!("row {i:05}"));
        body.push_str(match i % 3 {
            0 => "\r\n",
            1 => "\n",
            _ => "\r",
        });
    }
    fx.file("big.txt", &body);
    fx.file("one-line.txt", "x".repeat(2000));
    fx.file("exact.txt", "y".repeat(1024));
    for mode in Mode::BOTH {
        let whole = Options::new(mode)
            .env("MOAT_SANDBOX__MAX_FILE_BYTES", "1048576")
            .env("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000000");
        let mut m = Moat::connect(&fx.root, &whole, Era::Modern);
        let expected = shown_lines(&call_ok(&mut m, "read_file", json!({"path": "big.txt"})));
        assert_eq!(expected.len(), 3000);
        drop(m);

        let o = Options::new(mode).env("MOAT_SANDBOX__MAX_FILE_BYTES", "1024");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        // A range of a file over the limit is answered exactly.
        let r = call_ok(
            &mut m,
            "read_file",
            json!({"path": "big.txt", "start_line": 100, "end_line": 103}),
        );
        let s = &r["structuredContent"];
        assert_eq!(s["total_lines"], 3000, "{mode:?}: {r}");
        assert_eq!(s["size_bytes"], body.len(), "{r}");
        assert_eq!(shown_lines(&r), expected[99..103], "{r}");
        assert!(text(&r, 1).contains("100  row 00100"), "{r}");

        // The whole file comes in answers of at most the limit, each saying
        // where to go on; following them gives every line exactly once.
        let mut seen = Vec::new();
        let mut next = Some(1u64);
        let mut answers = 0;
        while let Some(start) = next {
            let r = call_ok(
                &mut m,
                "read_file",
                json!({"path": "big.txt", "start_line": start}),
            );
            let s = &r["structuredContent"];
            let lines = shown_lines(&r);
            assert!(
                !lines.is_empty() && lines.iter().map(|l| l.len() + 1).sum::<usize>() <= 1024,
                "{r}"
            );
            assert_eq!(s["start_line"], start, "{r}");
            seen.extend(lines);
            next = s["next_start_line"].as_u64();
            if let Some(n) = next {
                assert_eq!(s["truncated"], true, "{r}");
                assert_eq!(s["end_line"].as_u64(), Some(n - 1), "{r}");
                assert!(
                    text(&r, 0).contains(&format!("More: read_file with start_line={n}.")),
                    "{r}"
                );
            } else {
                assert_eq!(s["end_line"], 3000, "{r}");
                assert!(!text(&r, 0).contains("More:"), "{r}");
            }
            answers += 1;
            assert!(answers < 200, "paging does not end");
        }
        assert_eq!(seen, expected, "{mode:?}");

        // A line longer than one answer may hold is refused, naming the line.
        let (code, r) = call_err(&mut m, "read_file", json!({"path": "one-line.txt"}));
        assert_eq!(code, "too_large", "{r}");
        assert!(text(&r, 0).contains("line 1 of"), "{r}");
        assert!(text(&r, 0).contains("2000 bytes"), "{r}");
        let (code, r) = call_err(
            &mut m,
            "read_file",
            json!({"path": "big.txt", "start_line": 3001}),
        );
        assert_eq!(code, "unsupported", "{r}");
        assert!(text(&r, 0).contains("3000 line(s)"), "{r}");
        let r = call_ok(&mut m, "read_file", json!({"path": "exact.txt"}));
        assert_eq!(r["structuredContent"]["size_bytes"], 1024, "{r}");
    }
}

/// A file over `max_file_bytes` is redacted on the window around the lines
/// asked for: a value on the line after its key, and a line deep inside a
/// private-key block whose BEGIN line is far before the window.
#[test]
fn a_streamed_range_is_redacted_with_its_context() {
    let fx = Fixture::new();
    let k = "PRIVATE KEY";
    let filler: String = (0..4000).map(|i| format!("# filler line {i}\n")).collect();
    let key_lines: Vec<String> = (0..3000)
        .map(|i| format!("MIIEpAIBAAKCAQEA{i:04}q7BFUpkGp3x9ZLm2Nb4Vc6Xw8"))
        .collect();
    let body = format!(
        "{filler}password:\n  Zq8wLk2mPx7nRt4vYb3cD9hJ\n{filler}-----BEGIN RSA {k}-----\n{}\n-----END RSA {k}-----\n{filler}",
        key_lines.join("\n")
    );
    fx.file("dump.txt", &body);
    let line_of = |needle: &str| body.lines().position(|l| l.contains(needle)).map(|i| i + 1);
    let value = line_of("Zq8wLk2m").expect("value line");
    let deep = line_of("MIIEpAIBAAKCAQEA2500").expect("deep key line");
    for mode in Mode::BOTH {
        let o = Options::new(mode).env("MOAT_SANDBOX__MAX_FILE_BYTES", "4096");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        let r = call_ok(
            &mut m,
            "read_file",
            json!({"path": "dump.txt", "start_line": value, "end_line": value}),
        );
        assert!(
            !r.to_string().contains("Zq8wLk2mPx7nRt4vYb3cD9hJ"),
            "{mode:?}: {r}"
        );
        let r = call_ok(
            &mut m,
            "read_file",
            json!({"path": "dump.txt", "start_line": deep, "end_line": deep + 2}),
        );
        assert!(
            !r.to_string().contains("q7BFUpkGp3x9ZLm2Nb4Vc6Xw8"),
            "{mode:?}: {r}"
        );
        assert!(
            r["structuredContent"]["redaction"]["count"].as_u64() > Some(0),
            "{r}"
        );
        // Filler around them is shown as it is.
        let r = call_ok(
            &mut m,
            "read_file",
            json!({"path": "dump.txt", "start_line": 10, "end_line": 10}),
        );
        assert_eq!(shown_lines(&r), ["# filler line 9"], "{r}");
    }
}

#[test]
fn max_read_lines_truncates_a_read() {
    let fx = Fixture::new();
    let body: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    fx.file("long.txt", body);
    for mode in Mode::BOTH {
        let o = Options::new(mode).env("MOAT_SANDBOX__MAX_READ_LINES", "25");
        let mut m = Moat::connect(&fx.root, &o, Era::Legacy);
        let r = call_ok(&mut m, "read_file", json!({"path": "long.txt"}));
        let s = &r["structuredContent"];
        assert_eq!(s["start_line"], 1, "{r}");
        assert_eq!(s["end_line"], 25, "{r}");
        assert_eq!(s["total_lines"], 5000, "{r}");
        assert_eq!(s["truncated"], true, "{r}");
        assert!(
            text(&r, 0).contains("(truncated at the 25-line limit)"),
            "{r}"
        );
        let body = super::util::fenced_body(&r);
        assert_eq!(body.lines().count(), 25);
        assert!(body.ends_with("25  line 25"), "{body}");
        // The budget counts from start_line.
        let r = call_ok(
            &mut m,
            "read_file",
            json!({"path": "long.txt", "start_line": 100, "end_line": 4000}),
        );
        assert_eq!(r["structuredContent"]["end_line"], 124, "{r}");
        assert_eq!(r["structuredContent"]["truncated"], true, "{r}");
        // Asking for less than the budget near the end is not truncated.
        let r = call_ok(
            &mut m,
            "read_file",
            json!({"path": "long.txt", "start_line": 4990}),
        );
        assert_eq!(r["structuredContent"]["end_line"], 5000, "{r}");
        assert_eq!(r["structuredContent"]["truncated"], false, "{r}");
    }
}

#[test]
fn max_directory_entries_truncates_a_listing() {
    let fx = Fixture::new();
    for i in 0..10 {
        fx.file(&format!("f{i:02}.txt"), "x");
    }
    fx.dir("zdir");
    for mode in Mode::BOTH {
        let o = Options::new(mode).env("MOAT_SANDBOX__MAX_DIRECTORY_ENTRIES", "3");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        let r = call_ok(&mut m, "list_directory", json!({}));
        let s = &r["structuredContent"];
        let names = super::util::entry_names(&r);
        assert_eq!(names, ["zdir", "f00.txt", "f01.txt"], "{r}");
        assert_eq!(s["truncated"], true, "{r}");
        assert_eq!(s["files"], 10, "counts are before truncation: {r}");
        assert_eq!(s["directories"], 1, "{r}");
        assert!(text(&r, 0).contains("truncated at 3"), "{r}");
    }
}

#[test]
fn a_limit_out_of_bounds_refuses_to_start() {
    let fx = Fixture::new();
    for (k, v) in [
        ("MOAT_SANDBOX__MAX_FILE_BYTES", "10"),
        ("MOAT_SANDBOX__MAX_READ_LINES", "0"),
        ("MOAT_HTTP__MAX_REQUEST_BYTES", "100"),
        ("MOAT_SANDBOX__MAX_FILE_BYTES_TYPO", "2048"),
    ] {
        let o = Options::new(Mode::InProcess).env(k, v);
        let m = Moat::start(&fx.root, &o);
        let (status, rest) = m.finish();
        assert_eq!(
            status.code(),
            Some(2),
            "{k}={v} should be a configuration error"
        );
        assert!(rest.is_empty(), "nothing on stdout: {rest:?}");
    }
}

/// A search of a file larger than `max_file_bytes` (streamed in pages) and
/// of the same file searched whole must give the same answer.
#[test]
fn search_code_searches_files_larger_than_max_file_bytes() {
    let fx = Fixture::new();
    // ~600 KB: three pages of the smallest page size, with a match every
    // 997 lines, so matches and their context fall on page boundaries too.
    let mut body = String::new();
    for i in 1..=50_000 {
        if i % 997 == 0 {
            body.push_str(&format!("needle at {i}\n"));
        } else {
            body.push_str(&format!("row {i:05}\n"));
        }
    }
    fx.file("big.txt", &body);
    fx.file("small.txt", "needle in a small file\n");
    let search = json!({"pattern": "needle", "context_lines": 2, "max_results": 200});
    for mode in Mode::BOTH {
        let whole = Options::new(mode)
            .env("MOAT_SANDBOX__MAX_FILE_BYTES", "4194304")
            .env("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000000");
        let mut m = Moat::connect(&fx.root, &whole, Era::Modern);
        let expected = call_ok(&mut m, "search_code", search.clone());
        drop(m);
        let e = &expected["structuredContent"];
        assert_eq!(e["match_count"], 51, "{mode:?}: {e}");

        let paged = Options::new(mode)
            .env("MOAT_SANDBOX__MAX_FILE_BYTES", "1024")
            .env("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000000");
        let mut m = Moat::connect(&fx.root, &paged, Era::Modern);
        let r = call_ok(&mut m, "search_code", search.clone());
        let s = &r["structuredContent"];
        assert_eq!(s["matches"], e["matches"], "{mode:?}: {s}");
        assert_eq!(s["match_count"], 51, "{mode:?}: {s}");
        assert_eq!(s["files_skipped"], 0, "{mode:?}: {s}");
        // The same fenced text (the fences' ids differ).
        let inner = |t: String| {
            let lines: Vec<&str> = t.lines().collect();
            lines[1..lines.len().saturating_sub(1)].join("\n")
        };
        let inner_expected = inner(text(&expected, 1));
        assert_eq!(inner(text(&r, 1)), inner_expected, "{mode:?}");
        // The file alone, by its path.
        let r = call_ok(
            &mut m,
            "search_code",
            json!({"pattern": "needle at 4985$", "regex": true, "path": "big.txt"}),
        );
        let s = &r["structuredContent"];
        assert_eq!(s["match_count"], 1, "{mode:?}: {s}");
        assert_eq!(s["matches"][0]["line"], 4985, "{mode:?}: {s}");
    }
}

#[test]
fn a_streamed_search_is_redacted_with_its_context_and_is_no_oracle() {
    let fx = Fixture::new();
    let k = "PRIVATE KEY";
    let filler: String = (0..4000).map(|i| format!("# filler line {i}\n")).collect();
    // A key block of ~440 KB: the smallest page is 256 KiB, so a later page
    // starts inside the block, far past its BEGIN line.
    let key_lines: Vec<String> = (0..9000)
        .map(|i| format!("MIIEpAIBAAKCAQEA{i:04}q7BFUpkGp3x9ZLm2Nb4Vc6Xw8"))
        .collect();
    let body = format!(
        "{filler}password:\n  Zq8wLk2mPx7nRt4vYb3cD9hJ\n{filler}-----BEGIN RSA {k}-----\n{}\n-----END RSA {k}-----\n{filler}",
        key_lines.join("\n")
    );
    assert!(body.len() > 600_000);
    fx.file("dump.txt", &body);
    for mode in Mode::BOTH {
        let o = Options::new(mode).env("MOAT_SANDBOX__MAX_FILE_BYTES", "4096");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        for pattern in ["q7BFUpkGp3x9", "MIIEpAIBAAKCAQEA8", "Zq8wLk2m", "Zq8"] {
            let r = call_ok(&mut m, "search_code", json!({"pattern": pattern}));
            let s = &r["structuredContent"];
            assert_eq!(s["match_count"], 0, "{mode:?} {pattern}: {s}");
            assert!(!r.to_string().contains("ZLm2Nb4Vc6Xw8"), "{mode:?}: {r}");
        }
        // The filler is found, with its context, and no key material.
        let r = call_ok(
            &mut m,
            "search_code",
            json!({"pattern": "filler line 3999", "context_lines": 3, "max_results": 10}),
        );
        let s = &r["structuredContent"];
        assert_eq!(s["match_count"], 3, "{mode:?}: {s}");
        assert!(!r.to_string().contains("q7BFUpkGp3x9"), "{mode:?}: {r}");
        assert!(!r.to_string().contains("Zq8wLk2m"), "{mode:?}: {r}");
    }
}

#[test]
fn a_large_binary_file_or_one_with_a_line_over_the_limit_is_skipped_and_counted() {
    let fx = Fixture::new();
    let rows: String = (0..30_000)
        .map(|i| format!("row {i:05} marker\n"))
        .collect();
    fx.file("binary.dat", format!("{rows}\0tail marker\n"));
    fx.file(
        "long-line.txt",
        format!("{rows}{}\nmarker\n", "x".repeat(5000)),
    );
    fx.file("fine.txt", format!("{rows}last marker\n"));
    for mode in Mode::BOTH {
        let o = Options::new(mode)
            .env("MOAT_SANDBOX__MAX_FILE_BYTES", "4096")
            .env("MOAT_SANDBOX__MAX_ANSWER_CHARS", "4000000");
        let mut m = Moat::connect(&fx.root, &o, Era::Modern);
        let r = call_ok(
            &mut m,
            "search_code",
            // Only each file's last line matches, so no result cap stops the
            // search before every file has been looked at.
            json!({"pattern": "^(last |tail )?marker$", "regex": true}),
        );
        let s = &r["structuredContent"];
        assert_eq!(s["match_count"], 1, "{mode:?}: {s}");
        assert_eq!(s["matches"][0]["path"], "fine.txt", "{mode:?}: {s}");
        assert_eq!(s["files_skipped"], 2, "{mode:?}: {s}");
        assert_eq!(s["skipped_reasons"]["binary"], 1, "{mode:?}: {s}");
        assert_eq!(s["skipped_reasons"]["too_large"], 1, "{mode:?}: {s}");
    }
}
