//! Rename detection as git does it by default (`diff.renames`, `-M50%`):
//! which deleted file became which added file.
//!
//! The rules, in git's order, so that the pairs (and so every `--stat`
//! total) are the ones git prints:
//!
//! 1. **Exact renames**: an added file whose blob id equals a deleted
//!    file's is paired with it, a deleted file of the same base name first,
//!    else the first in path order; links and submodules pair only with the
//!    same mode.
//! 2. **Base names**: a deleted and an added regular file whose base name is
//!    unique on both sides are paired when their similarity is at least
//!    75% (halfway between the threshold and 100%).
//! 3. **Similarity matrix**: every remaining added regular file is scored
//!    against every remaining deleted one (at most 1000 × 1000 pairs, git's
//!    `diff.renameLimit`), each keeps its four best candidates, and the
//!    pairs are taken best first (ties: same base name first, then the
//!    order found), each file at most once, down to 50%.
//!
//! Similarity is git's estimate, not a line diff: each side is cut into
//! chunks that end at a line feed or after 64 bytes (a CR before an LF is
//! left out of text), each chunk hashed; the bytes of the old side found in
//! the new side, counted chunk by chunk, over the larger side's size, give
//! the score (`MAX_SCORE` = 60000 is 100%). A pair whose sizes differ by
//! more than half the larger is never scored.
//!
//! The content scored is the content the diff shows: the caller passes each
//! side redacted (raw when redaction replaced nothing), so a value redaction
//! hides cannot change which files are paired.

use std::collections::HashMap;

use crate::deadline::Deadline;
use crate::git::check_deadline;
use moat_protocol::wire_error::WireError;

/// A score of 100%.
pub const MAX_SCORE: u64 = 60_000;
/// git's default rename threshold (50%).
pub const MIN_SCORE: u64 = 30_000;
/// git's default `diff.renameLimit`: beyond this many sources times
/// destinations (squared), only exact renames are found.
const RENAME_LIMIT: usize = 1000;
/// Candidates kept per destination.
const CANDIDATES: usize = 4;
/// Modulus of git's chunk hash.
const HASHBASE: u32 = 107_927;

/// One side of a possible rename: a deleted (source) or an added
/// (destination) file.
#[derive(Debug, Clone)]
pub struct Candidate<'a> {
    /// Its path.
    pub path: &'a str,
    /// Its git mode.
    pub mode: u32,
    /// Its blob id (work-tree bytes hashed as a blob).
    pub id: gix::ObjectId,
}

/// A found rename: indexes into the sources and destinations, and the score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    /// Index of the deleted file.
    pub src: usize,
    /// Index of the added file.
    pub dst: usize,
    /// Similarity, 0..=[`MAX_SCORE`].
    pub score: u64,
}

fn regular(mode: u32) -> bool {
    mode & 0o170000 == 0o100000
}

fn basename(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, b)| b)
}

/// The chunk counts of one side: sorted `(hash, bytes)` and its size.
#[derive(Debug, Clone)]
pub struct Spans {
    counts: Vec<(u32, u64)>,
    size: u64,
}

impl Spans {
    /// Cut `data` into git's chunks and count their bytes by hash.
    #[must_use]
    pub fn of(data: &[u8]) -> Spans {
        let text = !crate::git::patch::is_binary(data);
        let mut map: HashMap<u32, u64> = HashMap::new();
        let (mut a1, mut a2, mut n) = (0u32, 0u32, 0u64);
        let mut i = 0;
        while i < data.len() {
            let c = u32::from(data[i]);
            i += 1;
            if text && c == u32::from(b'\r') && data.get(i) == Some(&b'\n') {
                continue;
            }
            let old1 = a1;
            a1 = (a1 << 7) ^ (a2 >> 25);
            a2 = (a2 << 7) ^ (old1 >> 25);
            a1 = a1.wrapping_add(c);
            n += 1;
            if n < 64 && c != u32::from(b'\n') {
                continue;
            }
            let h = a1.wrapping_add(a2.wrapping_mul(0x61)) % HASHBASE;
            *map.entry(h).or_default() += n;
            n = 0;
            a1 = 0;
            a2 = 0;
        }
        let mut counts: Vec<(u32, u64)> = map.into_iter().collect();
        counts.sort_unstable();
        Spans {
            counts,
            size: data.len() as u64,
        }
    }

    /// Bytes of `self` (the old side) found in `dst`.
    fn copied_into(&self, dst: &Spans) -> u64 {
        let (mut i, mut j, mut copied) = (0, 0, 0);
        while i < self.counts.len() && j < dst.counts.len() {
            let (sh, sc) = self.counts[i];
            let (dh, dc) = dst.counts[j];
            match sh.cmp(&dh) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    copied += sc.min(dc);
                    i += 1;
                    j += 1;
                }
            }
        }
        copied
    }
}

/// git's similarity of an old side `src` to a new side `dst`, 0..=MAX_SCORE.
#[must_use]
pub fn similarity(src: &Spans, dst: &Spans) -> u64 {
    let max = src.size.max(dst.size);
    let delta = max - src.size.min(dst.size);
    if max * (MAX_SCORE - MIN_SCORE) < delta * MAX_SCORE {
        return 0;
    }
    if dst.size == 0 {
        return 0;
    }
    src.copied_into(dst) * MAX_SCORE / max
}

/// Whether two sizes could reach the threshold at all (checked before any
/// content is loaded).
fn sizes_allow(a: u64, b: u64) -> bool {
    let max = a.max(b);
    let delta = max - a.min(b);
    max * (MAX_SCORE - MIN_SCORE) >= delta * MAX_SCORE
}

/// Find renames between `srcs` (deleted files, in path order) and `dsts`
/// (added files, in path order). `spans(is_src, index)` gives a side's
/// chunk counts (its size first, via `size`); `None` when it cannot be read
/// (it then takes part in exact renames only).
pub fn find(
    srcs: &[Candidate<'_>],
    dsts: &[Candidate<'_>],
    size: &mut dyn FnMut(bool, usize) -> Option<u64>,
    spans: &mut dyn FnMut(bool, usize) -> Option<Spans>,
    deadline: &Deadline,
) -> Result<Vec<Pair>, WireError> {
    let mut pairs = Vec::new();
    if srcs.is_empty() || dsts.is_empty() {
        return Ok(pairs);
    }
    let mut src_used = vec![false; srcs.len()];
    let mut dst_done = vec![false; dsts.len()];
    // 1. Exact renames.
    let mut by_id: HashMap<gix::ObjectId, Vec<usize>> = HashMap::new();
    for (i, s) in srcs.iter().enumerate() {
        by_id.entry(s.id).or_default().push(i);
    }
    for (d, dst) in dsts.iter().enumerate() {
        let Some(list) = by_id.get(&dst.id) else {
            continue;
        };
        let mut best: Option<(usize, bool)> = None;
        for &s in list.iter().take(100) {
            let src = &srcs[s];
            if (!regular(src.mode) || !regular(dst.mode)) && src.mode != dst.mode {
                continue;
            }
            if src_used[s] {
                continue;
            }
            let same = basename(src.path) == basename(dst.path);
            if best.is_none_or(|(_, b)| same && !b) {
                best = Some((s, same));
                if same {
                    break;
                }
            }
        }
        if let Some((s, _)) = best {
            src_used[s] = true;
            dst_done[d] = true;
            pairs.push(Pair {
                src: s,
                dst: d,
                score: MAX_SCORE,
            });
        }
    }
    let mut cache_src: HashMap<usize, Option<Spans>> = HashMap::new();
    let mut cache_dst: HashMap<usize, Option<Spans>> = HashMap::new();
    let mut score = |s: usize,
                     d: usize,
                     size: &mut dyn FnMut(bool, usize) -> Option<u64>,
                     spans: &mut dyn FnMut(bool, usize) -> Option<Spans>|
     -> u64 {
        if !regular(srcs[s].mode) || !regular(dsts[d].mode) {
            return 0;
        }
        let (Some(a), Some(b)) = (size(true, s), size(false, d)) else {
            return 0;
        };
        if !sizes_allow(a, b) {
            return 0;
        }
        cache_src.entry(s).or_insert_with(|| spans(true, s));
        cache_dst.entry(d).or_insert_with(|| spans(false, d));
        match (cache_src.get(&s), cache_dst.get(&d)) {
            (Some(Some(a)), Some(Some(b))) => similarity(a, b),
            _ => 0,
        }
    };
    // 2. Unique base names, at the higher threshold.
    let min_basename = MIN_SCORE + (MAX_SCORE - MIN_SCORE) / 2;
    let mut src_names: HashMap<&str, Option<usize>> = HashMap::new();
    for (i, s) in srcs.iter().enumerate() {
        if src_used[i] {
            continue;
        }
        src_names
            .entry(basename(s.path))
            .and_modify(|v| *v = None)
            .or_insert(Some(i));
    }
    let mut dst_names: HashMap<&str, Option<usize>> = HashMap::new();
    for (i, d) in dsts.iter().enumerate() {
        if dst_done[i] {
            continue;
        }
        dst_names
            .entry(basename(d.path))
            .and_modify(|v| *v = None)
            .or_insert(Some(i));
    }
    for s in 0..srcs.len() {
        if src_used[s] {
            continue;
        }
        check_deadline(deadline)?;
        let base = basename(srcs[s].path);
        let (Some(Some(si)), Some(Some(d))) = (src_names.get(base), dst_names.get(base)) else {
            continue;
        };
        if *si != s || dst_done[*d] {
            continue;
        }
        let sc = score(s, *d, size, spans);
        if sc < min_basename {
            continue;
        }
        src_used[s] = true;
        dst_done[*d] = true;
        pairs.push(Pair {
            src: s,
            dst: *d,
            score: sc,
        });
    }
    // 3. The matrix.
    let left_src: Vec<usize> = (0..srcs.len()).filter(|&s| !src_used[s]).collect();
    let left_dst: Vec<usize> = (0..dsts.len()).filter(|&d| !dst_done[d]).collect();
    if left_src.is_empty()
        || left_dst.is_empty()
        || left_src.len() * left_dst.len() > RENAME_LIMIT * RENAME_LIMIT
    {
        return Ok(finish(pairs));
    }
    // (score, same base name, order found, src, dst)
    let mut matrix: Vec<(u64, bool, usize, usize, usize)> = Vec::new();
    let mut order = 0usize;
    for &d in &left_dst {
        check_deadline(deadline)?;
        let mut best: Vec<(u64, bool, usize, usize, usize)> = Vec::new();
        for &s in &left_src {
            let sc = score(s, d, size, spans);
            let same = basename(srcs[s].path) == basename(dsts[d].path);
            let cand = (sc, same, order, s, d);
            order += 1;
            if best.len() < CANDIDATES {
                best.push(cand);
            } else if let Some(worst) = worst_of(&best)
                && better(&cand, &best[worst])
            {
                best[worst] = cand;
            }
        }
        matrix.extend(best);
    }
    // Best first; equal scores: same base name first, then as found (git
    // sorts the matrix stably).
    matrix.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    for (sc, _, _, s, d) in matrix {
        if sc < MIN_SCORE {
            break;
        }
        if dst_done[d] || src_used[s] {
            continue;
        }
        dst_done[d] = true;
        src_used[s] = true;
        pairs.push(Pair {
            src: s,
            dst: d,
            score: sc,
        });
    }
    Ok(finish(pairs))
}

/// Whether `a` ranks before `b` (higher score, then same base name).
fn better(a: &(u64, bool, usize, usize, usize), b: &(u64, bool, usize, usize, usize)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 && !b.1)
}

/// The index of the lowest-ranked candidate (the first of equals).
fn worst_of(best: &[(u64, bool, usize, usize, usize)]) -> Option<usize> {
    let mut worst = 0;
    for i in 1..best.len() {
        if better(&best[worst], &best[i]) {
            worst = i;
        }
    }
    (!best.is_empty()).then_some(worst)
}

fn finish(mut pairs: Vec<Pair>) -> Vec<Pair> {
    pairs.sort_by_key(|p| p.dst);
    pairs
}

/// The percentage git prints for a score (`similarity index N%`).
#[must_use]
pub fn percent(score: u64) -> u64 {
    score * 100 / MAX_SCORE
}

/// git's name of a renamed file in a `--stat` row: the common leading
/// directories and trailing part written once, the differing middle in
/// braces (`src/{a.rs => b.rs}`), or `old => new` when nothing is shared.
#[must_use]
pub fn stat_name(old: &str, new: &str) -> String {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    // Common prefix, up to and including its last '/'.
    let mut pfx = 0;
    let mut k = 0;
    while k < a.len() && k < b.len() && a[k] == b[k] {
        if a[k] == b'/' {
            pfx = k + 1;
        }
        k += 1;
    }
    // Common suffix, from its first '/', not reaching back past the prefix
    // (but allowed to share the prefix's closing '/').
    let adjust = usize::from(pfx > 0);
    let mut sfx = 0;
    let (mut i, mut j) = (a.len() as isize, b.len() as isize);
    let floor = (pfx - adjust) as isize;
    while i >= floor && j >= floor {
        let ca = if i as usize == a.len() {
            0
        } else {
            a[i as usize]
        };
        let cb = if j as usize == b.len() {
            0
        } else {
            b[j as usize]
        };
        if ca != cb {
            break;
        }
        if ca == b'/' {
            sfx = a.len() - i as usize;
        }
        i -= 1;
        j -= 1;
    }
    let a_mid = a.len().saturating_sub(pfx + sfx);
    let b_mid = b.len().saturating_sub(pfx + sfx);
    let slice = |s: &str, from: usize, len: usize| -> String {
        String::from_utf8_lossy(&s.as_bytes()[from.min(s.len())..(from + len).min(s.len())])
            .into_owned()
    };
    if pfx + sfx == 0 {
        return format!("{} => {}", slice(old, 0, a_mid), slice(new, 0, b_mid));
    }
    format!(
        "{}{{{} => {}}}{}",
        slice(old, 0, pfx),
        slice(old, pfx, a_mid),
        slice(new, pfx, b_mid),
        slice(old, a.len() - sfx, sfx)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_names_as_git_prints_them() {
        assert_eq!(stat_name("a.txt", "b.txt"), "a.txt => b.txt");
        assert_eq!(stat_name("src/a.rs", "src/b.rs"), "src/{a.rs => b.rs}");
        assert_eq!(stat_name("a/x/f.c", "b/x/f.c"), "{a => b}/x/f.c");
        assert_eq!(stat_name("d/a/f", "d/b/f"), "d/{a => b}/f");
        assert_eq!(stat_name("d/f", "d/e/f"), "d/{ => e}/f");
        assert_eq!(stat_name("f", "e/f"), "f => e/f");
    }

    #[test]
    fn similarity_counts_shared_chunks() {
        let a = Spans::of(b"one\ntwo\nthree\nfour\n");
        let b = Spans::of(b"one\ntwo\nthree\nFOUR\n");
        // 14 of 19 bytes copied.
        assert_eq!(similarity(&a, &b), 14 * MAX_SCORE / 19);
        assert_eq!(similarity(&a, &a), MAX_SCORE);
        let crlf = Spans::of(b"one\r\ntwo\r\n");
        assert_eq!(crlf.counts.iter().map(|c| c.1).sum::<u64>(), 8);
    }
}
