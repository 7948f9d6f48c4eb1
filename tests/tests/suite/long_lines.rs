//! Long lines and the answer budget: a minified file never comes back
//! whole; every part of a line longer than one answer is reachable by
//! following each answer's continuation (read_file, git_show and git_blame
//! by column); search and reference excerpts are centred on the match with
//! its column and an ellipsis on each cut side, cut from the redacted line;
//! listings and commit messages stop at the budget too.

use moat_tests::{Fixture, Mode, text};
use serde_json::{Value, json};

use super::git_show::{continuation, last_line};
use super::tools_util::{answer_chars, ok, ok_result, refused, start_with};
use super::util::{example_aws_key, git};

/// The answer budget these tests set (the smallest allowed), and what the
/// summary, notes and fence lines may add to it.
const BUDGET: usize = 4000;
const FRAME: usize = 2000;

fn small_budget(root: &std::path::Path, mode: Mode) -> moat_tests::Moat {
    start_with(
        root,
        mode,
        &[("MOAT_SANDBOX__MAX_ANSWER_CHARS", &BUDGET.to_string())],
    )
}

/// The text inside a fence (content block 1), without its fence lines and
/// each line's number.
fn numbered_body(r: &Value) -> Vec<String> {
    let t = text(r, 1);
    let lines: Vec<&str> = t.split('\n').collect();
    lines[1..lines.len() - 1]
        .iter()
        .map(|l| {
            let l = l.trim_start();
            let (_, rest) = l.split_once("  ").unwrap_or((l, ""));
            rest.to_owned()
        })
        .collect()
}

/// A minified line: `n` statements, some with non-ASCII text.
fn minified(n: usize) -> String {
    (0..n)
        .map(|i| {
            if i % 7 == 0 {
                format!("var s{i}=\"héllo wörld ✓ {i}\";")
            } else {
                format!("var a{i}=function(b){{return b+{i}}};")
            }
        })
        .collect()
}

/// Follow `tool`'s continuations (read_file's or git_show's) from the
/// start of a file: the parts put
/// together are the file, each answer within the budget, each a step on.
fn read_all(m: &mut moat_tests::Moat, tool: &str, base: &Value) -> (String, usize) {
    let mut args = base.clone();
    let mut out = String::new();
    let mut calls = 0;
    loop {
        calls += 1;
        assert!(calls < 400, "no end to the continuations");
        let r = ok_result(m, tool, args.clone());
        assert!(
            answer_chars(&r) <= BUDGET + FRAME,
            "{tool} {args}: {} characters",
            answer_chars(&r)
        );
        let s = &r["structuredContent"];
        let body = numbered_body(&r);
        out.push_str(&body.join("\n"));
        if s["truncated"] == json!(false) {
            break;
        }
        assert_eq!(s["stopped_by"], json!(["bytes"]), "{s}");
        let (line, column) = (
            s["next_start_line"].as_u64().unwrap(),
            s["next_start_column"].as_u64(),
        );
        // The text half names the same call.
        if tool == "read_file" {
            let words = match column {
                Some(c) => format!("start_line={line} start_column={c}"),
                None => format!("start_line={line}"),
            };
            assert!(text(&r, 0).contains(&words), "{r}");
        } else {
            let next = continuation(&r, tool);
            assert_eq!(next["start_line"], line, "{r}");
            assert_eq!(next["start_column"].as_u64(), column, "{r}");
            assert_eq!(s["next_call"]["arguments"], next, "{r}");
        }
        if column.is_none() {
            out.push('\n');
        }
        // Always a step on.
        let (was_line, was_column) = (
            args["start_line"].as_u64().unwrap_or(1),
            args["start_column"].as_u64().unwrap_or(1),
        );
        assert!(
            (line, column.unwrap_or(1)) > (was_line, was_column),
            "no progress: {s}"
        );
        args = base.clone();
        args["start_line"] = json!(line);
        if let Some(c) = column {
            args["start_column"] = json!(c);
        }
    }
    (out, calls)
}

#[test]
fn a_line_longer_than_an_answer_is_read_in_parts_by_column() {
    let fx = Fixture::new();
    let long = minified(1000);
    let file = format!("// head\n{long}\nshort line\n{}\n", minified(150));
    fx.file("app.min.js", &file);
    let mut m = small_budget(&fx.root, Mode::Confined);
    // Never the whole line: a part of it that fits, and where to go on.
    let r = ok_result(
        &mut m,
        "read_file",
        json!({"path": "app.min.js", "start_line": 2}),
    );
    let s = &r["structuredContent"];
    assert_eq!(s["truncated"], true, "{s}");
    assert_eq!(
        (s["start_line"].clone(), s["end_line"].clone()),
        (json!(2), json!(2))
    );
    let shown = s["end_column"].as_u64().unwrap();
    assert_eq!(s["next_start_column"].as_u64(), Some(shown + 1));
    assert_eq!(
        s["line_columns"].as_u64(),
        Some(long.chars().count() as u64)
    );
    let part: String = long.chars().take(shown as usize).collect();
    assert_eq!(numbered_body(&r), [part]);
    assert!(
        last_line(&r).contains(&format!("start_line=2 start_column={}", shown + 1)),
        "{r}"
    );
    // Following every continuation gives the whole file, once.
    let (whole, calls) = read_all(&mut m, "read_file", &json!({"path": "app.min.js"}));
    assert_eq!(whole, file.trim_end_matches('\n'));
    assert!(calls > file.len() / BUDGET, "{calls} calls");
    // A column range reads part of one line; an end column alone ends the
    // start line.
    let r = ok_result(
        &mut m,
        "read_file",
        json!({"path": "app.min.js", "start_line": 2, "start_column": 101, "end_column": 160}),
    );
    let want: String = long.chars().skip(100).take(60).collect();
    assert_eq!(numbered_body(&r), [want], "{r}");
    assert_eq!(r["structuredContent"]["truncated"], false);
    assert_eq!(r["structuredContent"]["start_column"], 101);
    assert_eq!(r["structuredContent"]["end_column"], 160);
    let (code, r) = refused(
        &mut m,
        "read_file",
        json!({"path": "app.min.js", "start_line": 3, "start_column": 500}),
    );
    assert_eq!(code, "unsupported", "{r}");
    assert!(text(&r, 0).contains("line 3 has 10 column(s)"), "{r}");
    let (code, _) = refused(
        &mut m,
        "read_file",
        json!({"path": "app.min.js", "start_line": 2, "start_column": 50, "end_column": 10}),
    );
    assert_eq!(code, "unsupported");
}

#[test]
fn a_minified_file_never_comes_back_whole_at_the_default_budget() {
    let fx = Fixture::new();
    // About 600 KB on one line.
    let long = minified(18_000);
    fx.file("bundle.js", &long);
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[]);
        let r = ok_result(&mut m, "read_file", json!({"path": "bundle.js"}));
        assert!(answer_chars(&r) <= 42_000, "{mode:?}: {}", answer_chars(&r));
        let s = &r["structuredContent"];
        assert_eq!(s["stopped_by"], json!(["bytes"]), "{mode:?}: {s}");
        let next = s["next_start_column"].as_u64().unwrap();
        let r = ok_result(
            &mut m,
            "read_file",
            json!({"path": "bundle.js", "start_line": 1, "start_column": next}),
        );
        let want: String = long.chars().skip(next as usize - 1).take(30).collect();
        assert!(numbered_body(&r)[0].starts_with(&want), "{mode:?}");
    }
}

#[test]
fn git_show_and_git_blame_continue_a_long_line_by_column() {
    let fx = Fixture::new();
    let long = minified(600);
    let file = format!("{long}\nend\n");
    fx.file("min.js", &file);
    git(&fx.root, "Ann", &["init", "-q", "-b", "main"]);
    git(&fx.root, "Ann", &["add", "."]);
    git(&fx.root, "Ann", &["commit", "-qm", "add the bundle"]);
    let head = git(&fx.root, "Ann", &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let mut m = small_budget(&fx.root, Mode::Confined);
    let (whole, _) = read_all(
        &mut m,
        "git_show",
        &json!({"path": "min.js", "revision": head}),
    );
    assert_eq!(whole, file.trim_end_matches('\n'));
    // A blame whose first line alone is over the budget shows its start,
    // says so, and names the git_show call that reads on.
    let r = ok_result(&mut m, "git_blame", json!({"path": "min.js"}));
    assert!(answer_chars(&r) <= BUDGET + FRAME, "{}", answer_chars(&r));
    let s = &r["structuredContent"];
    assert_eq!(s["truncated"], true, "{s}");
    assert_eq!(s["stopped_by"], json!(["bytes"]), "{s}");
    let shown = s["line_cut"]["shown_columns"].as_u64().unwrap();
    assert_eq!(
        s["line_cut"]["line_columns"].as_u64(),
        Some(long.chars().count() as u64)
    );
    let got = s["groups"][0]["lines"][0].as_str().unwrap();
    assert_eq!(got, long.chars().take(shown as usize).collect::<String>());
    // More lines follow: the blame goes on, and the text names the rest of
    // the line too.
    let next = continuation(&r, "git_blame");
    assert_eq!(next["start_line"], 2, "{r}");
    assert!(
        text(&r, 0).contains(&format!("\"start_column\":{}", shown + 1)),
        "{r}"
    );
    let r = ok_result(
        &mut m,
        "git_show",
        json!({"path": "min.js", "revision": head, "start_line": 1, "start_column": shown + 1}),
    );
    let want: String = long.chars().skip(shown as usize).take(40).collect();
    assert!(numbered_body(&r)[0].starts_with(&want), "{r}");
}

#[test]
fn a_search_hit_deep_in_a_long_line_is_shown_around_the_match() {
    let fx = Fixture::new();
    let left = minified(1000);
    let right = minified(800);
    fx.file("bundle.js", format!("{left}find_me_here();{right}\n"));
    let column = left.chars().count() as u64 + 1;
    for mode in Mode::BOTH {
        let mut m = start_with(&fx.root, mode, &[]);
        let r = ok_result(&mut m, "search_code", json!({"pattern": "find_me_here"}));
        let hit = &r["structuredContent"]["matches"][0];
        assert_eq!(hit["column"].as_u64(), Some(column), "{mode:?}: {hit}");
        let shown = hit["text"].as_str().unwrap();
        assert!(shown.contains("find_me_here();"), "{mode:?}: {shown}");
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert!(shown.chars().count() <= 402, "{}", shown.chars().count());
        // The match sits in the middle, not at an edge.
        let at = shown.find("find_me_here").unwrap();
        assert!(at > 100 && shown.len() - at > 100, "{shown}");
        let body = text(&r, 1);
        assert!(
            body.contains(&format!("bundle.js:1:{column}:")),
            "{mode:?}: {body}"
        );
        assert!(body.contains("find_me_here();"), "{body}");
        // find_references centres its excerpt the same way.
        let r = ok_result(
            &mut m,
            "find_references",
            json!({"identifier": "find_me_here"}),
        );
        let hit = &r["structuredContent"]["references"][0];
        assert_eq!(hit["column"].as_u64(), Some(column), "{hit}");
        let shown = hit["text"].as_str().unwrap();
        assert!(
            shown.starts_with('…') && shown.ends_with('…') && shown.contains("find_me_here"),
            "{shown}"
        );
        assert!(text(&r, 1).contains("find_me_here"), "{r}");
    }
}

#[test]
fn an_excerpt_never_shows_part_of_a_redacted_value() {
    let fx = Fixture::new();
    let key = example_aws_key();
    // The key at every distance around where the excerpt's edges fall.
    for (i, gap) in (120..300).step_by(9).enumerate() {
        let pad = "x=1;".repeat(400);
        let between = "y".repeat(gap);
        fx.file(
            &format!("k{i:02}.js"),
            format!("{pad}aws_access_key_id = \"{key}\"; {between} needle_call();{pad}\n{pad}needle_call(); {between} aws_access_key_id = \"{key}\";{pad}\n"),
        );
    }
    let mut m = start_with(&fx.root, Mode::Confined, &[]);
    let r = ok_result(
        &mut m,
        "search_code",
        json!({"pattern": "needle_call", "max_results": 100}),
    );
    let all = format!("{}{}", r["structuredContent"], text(&r, 1));
    assert_eq!(
        r["structuredContent"]["matches"].as_array().map(Vec::len),
        Some(40),
        "{r}"
    );
    for part in key.as_bytes().windows(6) {
        let part = std::str::from_utf8(part).unwrap();
        assert!(!all.contains(part), "{part} of the key is shown: {all}");
    }
}

#[test]
fn listings_and_commit_messages_stop_at_the_budget() {
    let fx = Fixture::new();
    let names: Vec<String> = (0..120)
        .map(|i| format!("entry_{i:03}_{}", "n".repeat(180)))
        .collect();
    for n in &names {
        fx.file(&format!("d/{n}"), "x\n");
    }
    git(&fx.root, "Ann", &["init", "-q", "-b", "main"]);
    git(&fx.root, "Ann", &["add", "."]);
    let message = format!("subject\n\n{}\n", "a long message body. ".repeat(2000));
    git(&fx.root, "Ann", &["commit", "-qm", &message]);
    let mut m = small_budget(&fx.root, Mode::InProcess);
    // list_directory: pages within the budget that concatenate to the whole
    // listing.
    let mut got = Vec::new();
    let mut args = json!({"path": "d"});
    for _ in 0..100 {
        let r = ok_result(&mut m, "list_directory", args.clone());
        assert!(answer_chars(&r) <= BUDGET + FRAME, "{}", answer_chars(&r));
        let s = &r["structuredContent"];
        for e in s["entries"].as_array().unwrap() {
            got.push(e["name"].as_str().unwrap().to_owned());
        }
        match s["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(s["stopped_by"], json!(["bytes"]), "{s}");
                args = json!({"path": "d", "cursor": c});
            }
            None => break,
        }
    }
    assert_eq!(got, names);
    let r = ok_result(&mut m, "directory_tree", json!({}));
    assert!(answer_chars(&r) <= BUDGET + FRAME, "{}", answer_chars(&r));
    assert_eq!(r["structuredContent"]["stopped_by"], json!(["bytes"]));
    assert!(r["structuredContent"]["next_cursor"].is_string());
    // A commit message longer than half an answer keeps its start.
    let r = ok_result(&mut m, "git_show", json!({"stat_only": true}));
    assert!(answer_chars(&r) <= BUDGET + FRAME, "{}", answer_chars(&r));
    let s = ok(&mut m, "git_show", json!({"stat_only": true}));
    assert_eq!(
        s["message_chars"].as_u64(),
        Some(message.trim_end().chars().count() as u64 + 1),
        "{s}"
    );
    assert_eq!(s["truncated"], true);
}
