//! Memory of a process tree from `/proc`: a server and every descendant (for
//! moat: the broker and all its workers).

use std::collections::HashMap;
use std::fs;

/// Memory of a process tree, in KiB, summed over its processes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Memory {
    /// Processes counted.
    pub processes: usize,
    /// Sum of `VmRSS` (shared pages count once per process).
    pub rss_kib: u64,
    /// Sum of `VmHWM`, each process's peak RSS (an upper bound of the tree's peak).
    pub hwm_kib: u64,
    /// Sum of `Pss` (shared pages split between the processes sharing them).
    pub pss_kib: u64,
}

fn ppid(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // pid (comm) state ppid ...: comm may contain spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(1)?.parse().ok()
}

/// `root` and its descendants, `root` first.
pub fn tree(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(dir) = fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(pp) = ppid(pid) {
                children.entry(pp).or_default().push(pid);
            }
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        if let Some(c) = children.get(&out[i]) {
            out.extend(c);
        }
        i += 1;
    }
    out
}

fn field_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Memory of `root` and its descendants.
pub fn memory(root: u32) -> Memory {
    let mut m = Memory::default();
    for pid in tree(root) {
        let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        m.processes += 1;
        m.rss_kib += field_kib(&status, "VmRSS:").unwrap_or(0);
        m.hwm_kib += field_kib(&status, "VmHWM:").unwrap_or(0);
        if let Ok(roll) = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
            m.pss_kib += field_kib(&roll, "Pss:").unwrap_or(0);
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_memory_is_read() {
        let m = memory(std::process::id());
        assert!(m.processes >= 1);
        assert!(m.rss_kib > 0 && m.hwm_kib >= m.rss_kib);
    }
}
