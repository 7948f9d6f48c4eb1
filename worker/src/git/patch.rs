//! git's unified diff and `--stat` formats, produced from two whole sides.

use std::fmt::Write as _;

use imara_diff::{Algorithm, Diff, InternedInput};

/// How one file changed, for the header.
#[derive(Debug, Clone)]
pub struct FileChange<'a> {
    /// Old path (`None`: the file is new).
    pub old_path: Option<&'a str>,
    /// New path (`None`: the file was deleted).
    pub new_path: Option<&'a str>,
    /// Old mode and abbreviated id (empty: not shown, and no `index` line).
    pub old: Option<(u32, String)>,
    /// New mode and abbreviated id (empty: not shown, and no `index` line).
    pub new: Option<(u32, String)>,
    /// A rename's similarity, in percent.
    pub similarity: Option<u64>,
}

/// A path as git prints it in headers: C-quoted when it holds a control
/// character, a quote, a backslash or a non-ASCII byte, so no path can start
/// a line of its own or pass for a header.
#[must_use]
pub fn quote_path(prefix: &str, path: &str) -> String {
    let needs = path
        .bytes()
        .any(|b| b < 0x20 || b == 0x7f || b == b'"' || b == b'\\' || b >= 0x80);
    if !needs {
        return format!("{prefix}{path}");
    }
    let mut out = String::from("\"");
    out.push_str(prefix);
    for b in path.bytes() {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b if !(0x20..0x7f).contains(&b) => {
                let _ = write!(out, "\\{b:03o}");
            }
            b => out.push(char::from(b)),
        }
    }
    out.push('"');
    out
}

/// Whether git would call the content binary (a NUL in the first 8000
/// bytes).
#[must_use]
pub fn is_binary(data: &[u8]) -> bool {
    memchr::memchr(0, &data[..data.len().min(8000)]).is_some()
}

/// The `diff --git` header block of one file (up to and excluding `---`).
#[must_use]
pub fn header(change: &FileChange<'_>) -> String {
    let a = change.old_path.or(change.new_path).unwrap_or("");
    let b = change.new_path.or(change.old_path).unwrap_or("");
    let mut out = format!(
        "diff --git {} {}\n",
        quote_path("a/", a),
        quote_path("b/", b)
    );
    match (&change.old, &change.new) {
        (None, Some((mode, id))) => {
            let _ = writeln!(out, "new file mode {mode:06o}");
            if !id.is_empty() {
                let _ = writeln!(out, "index {}..{id}", "0".repeat(id.len()));
            }
        }
        (Some((mode, id)), None) => {
            let _ = writeln!(out, "deleted file mode {mode:06o}");
            if !id.is_empty() {
                let _ = writeln!(out, "index {id}..{}", "0".repeat(id.len()));
            }
        }
        (Some((om, oid)), Some((nm, nid))) => {
            if a != b {
                let _ = writeln!(
                    out,
                    "similarity index {}%",
                    change.similarity.unwrap_or(100)
                );
                let _ = writeln!(out, "rename from {}", quote_path("", a));
                let _ = writeln!(out, "rename to {}", quote_path("", b));
            }
            if om != nm {
                let _ = writeln!(out, "old mode {om:06o}");
                let _ = writeln!(out, "new mode {nm:06o}");
            }
            if oid != nid && !oid.is_empty() && !nid.is_empty() {
                if om == nm {
                    let _ = writeln!(out, "index {oid}..{nid} {om:06o}");
                } else {
                    let _ = writeln!(out, "index {oid}..{nid}");
                }
            }
        }
        (None, None) => {}
    }
    out
}

/// The `---`/`+++` lines and hunks of a text change, appended to `out`;
/// returns (added, removed).
pub fn hunks(
    out: &mut String,
    change: &FileChange<'_>,
    before: &[u8],
    after: &[u8],
    context: u32,
) -> (u64, u64) {
    let input = InternedInput::new(before, after);
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
    let added = u64::from(diff.count_additions());
    let removed = u64::from(diff.count_removals());
    if added == 0 && removed == 0 {
        return (0, 0);
    }
    let _ = writeln!(
        out,
        "--- {}",
        change
            .old_path
            .filter(|_| change.old.is_some())
            .map_or("/dev/null".to_owned(), |p| quote_path("a/", p))
    );
    let _ = writeln!(
        out,
        "+++ {}",
        change
            .new_path
            .filter(|_| change.new.is_some())
            .map_or("/dev/null".to_owned(), |p| quote_path("b/", p))
    );
    let old: Vec<&[u8]> = input.before.iter().map(|t| input.interner[*t]).collect();
    let new: Vec<&[u8]> = input.after.iter().map(|t| input.interner[*t]).collect();
    let all: Vec<imara_diff::Hunk> = diff.hunks().collect();
    let mut i = 0;
    while i < all.len() {
        // Group hunks whose gap is at most twice the context.
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].before.start - all[j].before.end <= 2 * context {
            j += 1;
        }
        let (first, last) = (&all[i], &all[j]);
        let pre = first.before.start.min(context);
        let start_b = first.before.start - pre;
        let start_a = first.after.start - pre;
        let end_b = (last.before.end + context).min(old.len() as u32);
        let post = end_b - last.before.end;
        let end_a = last.after.end + post;
        let range = |start: u32, len: u32| match len {
            0 => format!("{start},0"),
            1 => format!("{}", start + 1),
            n => format!("{},{n}", start + 1),
        };
        let _ = write!(
            out,
            "@@ -{} +{} @@",
            range(start_b, end_b - start_b),
            range(start_a, end_a - start_a)
        );
        if let Some(f) = funcname(&old[..start_b as usize]) {
            out.push(' ');
            out.push_str(&f);
        }
        out.push('\n');
        let mut pos = start_b;
        for h in &all[i..=j] {
            for line in &old[pos as usize..h.before.start as usize] {
                push_line(out, ' ', line);
            }
            for line in &old[h.before.start as usize..h.before.end as usize] {
                push_line(out, '-', line);
            }
            for line in &new[h.after.start as usize..h.after.end as usize] {
                push_line(out, '+', line);
            }
            pos = h.before.end;
        }
        for line in &old[pos as usize..end_b as usize] {
            push_line(out, ' ', line);
        }
        i = j + 1;
    }
    (added, removed)
}

fn push_line(out: &mut String, mark: char, line: &[u8]) {
    out.push(mark);
    out.push_str(&String::from_utf8_lossy(line));
    if !line.ends_with(b"\n") {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

/// git's default hunk-header function name: the nearest earlier line that
/// starts with a letter, `_` or `$`, without its line end, at most 80 bytes.
fn funcname(before: &[&[u8]]) -> Option<String> {
    let line = before.iter().rev().find(|l| {
        l.first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_' || *b == b'$')
    })?;
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end();
    let mut end = text.len().min(80);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(text[..end].to_owned())
}

/// Count added and removed lines without formatting.
#[must_use]
pub fn count(before: &[u8], after: &[u8]) -> (u64, u64) {
    let input = InternedInput::new(before, after);
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
    (
        u64::from(diff.count_additions()),
        u64::from(diff.count_removals()),
    )
}

/// One row of a `--stat`.
#[derive(Debug, Clone)]
pub struct StatRow {
    /// The name shown (`old => new` for a rename).
    pub name: String,
    /// Lines, or binary sizes (old, new).
    pub change: StatChange,
}

/// What a `--stat` row counts.
#[derive(Debug, Clone, Copy)]
pub enum StatChange {
    /// Added and removed lines.
    Lines(u64, u64),
    /// Binary: old and new sizes.
    Binary(u64, u64),
}

/// git's `--stat=200` block, summary line included.
#[must_use]
pub fn stat(rows: &[StatRow], width: usize) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let name_w = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    let max_change = rows
        .iter()
        .map(|r| match r.change {
            StatChange::Lines(a, d) => a + d,
            StatChange::Binary(..) => 0,
        })
        .max()
        .unwrap_or(0);
    let count_w = rows
        .iter()
        .map(|r| match r.change {
            StatChange::Lines(a, d) => (a + d).to_string().len(),
            StatChange::Binary(..) => 3,
        })
        .max()
        .unwrap_or(1);
    let graph_w = width.saturating_sub(name_w + count_w + 4).max(6) as u64;
    let (mut ins, mut del) = (0u64, 0u64);
    for r in rows {
        let pad = name_w - r.name.chars().count();
        match r.change {
            StatChange::Lines(a, d) => {
                ins += a;
                del += d;
                let (mut pa, mut pd) = (a, d);
                if max_change > graph_w {
                    let scale = |n: u64| {
                        if n == 0 {
                            0
                        } else {
                            (n * graph_w / max_change).max(1)
                        }
                    };
                    pa = scale(a);
                    pd = scale(d);
                }
                let graph = format!("{}{}", "+".repeat(pa as usize), "-".repeat(pd as usize));
                let sep = if graph.is_empty() { "" } else { " " };
                let _ = writeln!(
                    out,
                    " {}{} | {:>count_w$}{sep}{graph}",
                    r.name,
                    " ".repeat(pad),
                    a + d,
                );
            }
            StatChange::Binary(o, n) => {
                let _ = writeln!(
                    out,
                    " {}{} | {:>count_w$} {o} -> {n} bytes",
                    r.name,
                    " ".repeat(pad),
                    "Bin"
                );
            }
        }
    }
    let files = rows.len();
    let _ = write!(
        out,
        " {files} file{} changed",
        if files == 1 { "" } else { "s" }
    );
    if ins > 0 || del == 0 {
        let _ = write!(
            out,
            ", {ins} insertion{}(+)",
            if ins == 1 { "" } else { "s" }
        );
    }
    if del > 0 || ins == 0 {
        let _ = write!(
            out,
            ", {del} deletion{}(-)",
            if del == 1 { "" } else { "s" }
        );
    }
    out.push('\n');
    out
}

/// The page of a diff `text` from byte `skip`, at most `budget` bytes: up to the
/// last line end that fits, or (when one line is longer than a page) up to
/// the last character boundary that fits. Returns it and whether text
/// remains after it.
pub fn page_of(text: &str, skip: u64, budget: usize) -> (String, bool) {
    let mut start = usize::try_from(skip).unwrap_or(usize::MAX).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let rest = &text[start..];
    if rest.len() <= budget {
        return (rest.to_owned(), false);
    }
    let mut cut = budget.max(4);
    while !rest.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(i) = rest[..cut].rfind('\n') {
        cut = i + 1;
    }
    (rest[..cut].to_owned(), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hunk_as_git_prints_it() {
        let change = FileChange {
            old_path: Some("x"),
            new_path: Some("x"),
            old: Some((0o100644, "1111111".into())),
            new: Some((0o100644, "2222222".into())),
            similarity: None,
        };
        let mut out = String::new();
        let counts = hunks(&mut out, &change, b"a\nb\nc\n", b"a\nB\nc\nd", 3);
        assert_eq!(counts, (2, 1));
        assert_eq!(
            out,
            "--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@ a\n a\n-b\n+B\n c\n+d\n\\ No newline at end of file\n"
                .replace("@@ a\n", "@@\n")
        );
        assert_eq!(
            header(&change),
            "diff --git a/x b/x\nindex 1111111..2222222 100644\n"
        );
    }

    #[test]
    fn paths_with_control_bytes_are_quoted() {
        assert_eq!(quote_path("a/", "x\ny"), "\"a/x\\ny\"");
        assert_eq!(quote_path("a/", "plain.rs"), "a/plain.rs");
    }

    #[test]
    fn stat_summary() {
        let rows = [
            StatRow {
                name: "README.md".into(),
                change: StatChange::Lines(2, 1),
            },
            StatRow {
                name: "src/a.rs".into(),
                change: StatChange::Lines(1, 0),
            },
        ];
        assert_eq!(
            stat(&rows, 200),
            " README.md | 3 ++-\n src/a.rs  | 1 +\n 2 files changed, 3 insertions(+), 1 deletion(-)\n"
        );
    }
}
