//! Fencing and injection scanning over arbitrary content, through the
//! assembly the broker really does (`broker::content::Controls::success`:
//! redact the text, assess what is left, fence it, redact the rest).
//!
//! Properties:
//! * the fenced text opens with the fence line and ends with the closing line
//!   with the nonce; that closing line appears exactly once, and it is the
//!   last line; the nonce appears nowhere else (the content was written before
//!   the nonce existed);
//! * between the two fence lines is the redacted content, unchanged otherwise
//!   (numbered file lines start with the first line's number);
//! * the scanner never panics; its risk is in [0, 1], it reports at most
//!   `MAX_FINDINGS` findings (at most `FINDINGS_PER_SIGNAL` per signal), each
//!   with a line number within the text (file line numbers when the lines
//!   are numbered), and the level agrees with the risk.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use moat_broker::redact::{RedactionReport, Redactor};
use moat_broker::scan::{
    ELEVATED_RISK, FINDINGS_PER_SIGNAL, HIGH_RISK, Level, MAX_FINDINGS, Scanner,
};
use moat_broker::{Controls, FenceText, Rendered, Tool};
use serde_json::{Map, Value};

#[derive(Arbitrary, Debug)]
struct Input {
    tool: u8,
    content: String,
    /// The first line's number when the content is shown as numbered file
    /// lines (read_file).
    numbered_from: Option<u16>,
    summary: String,
}

const FENCED: [Tool; 5] = [
    Tool::ReadFile,
    Tool::SearchCode,
    Tool::FindSymbol,
    Tool::GitLog,
    Tool::GitDiff,
];

fn lines_in(text: &str) -> u64 {
    text.bytes().filter(|&b| b == b'\n').count() as u64 + 1
}

fn check_assessment(text: &str) {
    let a = Scanner::new().assess(text);
    assert!((0.0..=1.0).contains(&a.risk), "risk {}", a.risk);
    assert!(
        a.signals.len() <= MAX_FINDINGS,
        "{} findings",
        a.signals.len()
    );
    let lines = lines_in(text);
    for f in &a.signals {
        assert!(f.line >= 1 && f.line <= lines, "line {} of {lines}", f.line);
        let same = a.signals.iter().filter(|g| g.signal == f.signal).count();
        assert!(
            same <= FINDINGS_PER_SIGNAL,
            "{same} findings for {}",
            f.signal
        );
    }
    let expected = if a.signals.is_empty() && a.invisible_characters == 0 {
        Level::None
    } else if a.risk >= HIGH_RISK {
        Level::High
    } else if a.risk >= ELEVATED_RISK {
        Level::Elevated
    } else {
        Level::Low
    };
    // The level comes from the unrounded risk; rounding to 3 places can
    // cross a threshold, so only a level more than one step away is wrong.
    let step = |l: Level| l as i32;
    assert!(
        (step(a.level) - step(expected)).abs() <= 1
            && (a.level == Level::None) == (expected == Level::None),
        "level {:?} for risk {}",
        a.level,
        a.risk
    );
}

fuzz_target!(|input: Input| {
    check_assessment(&input.content);

    let tool = FENCED[usize::from(input.tool) % FENCED.len()];
    let label = tool.fence_label().expect("a fenced tool has a label");
    let controls = Controls::new(true, true);
    let start = input.numbered_from.map(|n| u64::from(n).max(1));
    let fence_text = match start {
        Some(start) => FenceText::Numbered {
            start,
            end: start + lines_in(&input.content) - 1,
        },
        None => FenceText::Whole,
    };
    let rendered = Rendered {
        summary: input.summary.clone(),
        structured: Map::new(),
        untrusted: Some(input.content.clone()),
        scan_path: None,
        fence_text,
        worker_redaction: Default::default(),
    };
    let (result, _) = controls.success(tool.fence_label(), rendered);

    let Some(fenced) = result["content"][1]["text"].as_str() else {
        // Only an empty listing goes without a fence (its summary says it
        // is empty); a file's lines, even none, are always fenced.
        assert!(
            input.content.is_empty() && start.is_none(),
            "no fence for {:?}",
            input.content
        );
        return;
    };
    let first = fenced.split('\n').next().unwrap_or_default();
    let nonce = first
        .strip_prefix(&format!("<untrusted-{label} id="))
        .and_then(|rest| rest.strip_suffix('>'))
        .expect("the fence opens with its label and id");
    assert!(
        nonce.len() == 16
            && nonce
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "nonce {nonce:?}"
    );
    let close = format!("</untrusted-{label} id={nonce}>");
    let lines: Vec<&str> = fenced.split('\n').collect();
    let closing: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| **l == close)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        closing,
        vec![lines.len() - 1],
        "the closing line is not the last, or not alone"
    );
    assert_eq!(
        fenced.matches(nonce).count(),
        2,
        "the nonce appears elsewhere"
    );

    let inner = &fenced[first.len() + 1..fenced.len() - close.len() - 1];
    if let Some(start) = start {
        assert!(
            inner
                .trim_start_matches(' ')
                .starts_with(&format!("{start}  ")),
            "numbered lines start at {start}"
        );
    } else {
        let mut report = RedactionReport::new();
        let redacted = Redactor::new(true)
            .redact_str(&input.content, &mut report)
            .unwrap_or_else(|| input.content.clone());
        assert_eq!(
            inner, redacted,
            "the fenced content is not the redacted content"
        );
    }

    // The assessment the client sees: file line numbers when numbered.
    let assessment = &result["structuredContent"]["content_assessment"];
    let text = input.content.as_str();
    let offset = start.map_or(0, |s| s - 1);
    let risk = assessment["risk"].as_f64().expect("a risk");
    assert!((0.0..=1.0).contains(&risk));
    let signals = assessment["signals"].as_array().expect("signals");
    assert!(signals.len() <= MAX_FINDINGS);
    for s in signals {
        let line = s["line"].as_u64().expect("a line");
        assert!(
            line > offset && line <= offset + lines_in(text),
            "line {line}, offset {offset}"
        );
    }
    assert_eq!(result["isError"], Value::Bool(false));
});
