//! `directory_tree`: a directory's tree, bounded by depth and entries.
//!
//! Each directory is listed exactly as `list_directory` lists it, by the
//! one listing rule (`fs/listing.rs`: no symbolic link followed or named,
//! denied entries counted and never named, FIFOs, sockets and devices
//! counted and never opened, names starting with `.` only when asked for).
//! Generated trees that walks skip (`node_modules`, `target`,
//! ...) are shown but not expanded.
//!
//! Directories are listed breadth first, so an entry cap (or the answer
//! budget, which ends a page where its text would pass it) keeps the shallow
//! levels whole and cuts the deep ones; the answer is then given in
//! pre-order (a parent before its children; directories first, then files,
//! each group by lower-cased name). A directory that is not expanded (depth
//! limit, skip list, or left over when the entry cap was reached) carries the
//! number of entries it would show, so a cut is always visible where it
//! happened.
//!
//! A later page (`skip`, from a cursor) walks the same breadth-first order
//! and gives the entries after the first `skip`: the order is fixed by the
//! tree alone, so pages neither repeat nor skip an entry. An entry whose
//! directory was given on an earlier page names that directory (`dir`), so
//! each page reads on its own.

use std::collections::VecDeque;

use moat_protocol::request::DirectoryTreeArgs;
use moat_protocol::response::{DirectoryTreeOutput, EntryKind, Limit, ToolOutput, TreeEntry};
use moat_protocol::wire_error::WireError;

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::fs::containment::{self, ContainedPath};
use crate::fs::listing::{self, PassedOver};
use crate::fs::{open, skiplist};
use crate::tools::list_directory::ENTRY_CHARS;

struct Node {
    entry: TreeEntry,
    children: Vec<usize>,
}

/// Run `directory_tree`.
pub fn run(
    ws: &Workspace,
    args: &DirectoryTreeArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let top = containment::resolve(ws, &args.path)?;
    let top_raw = open::read_dir(ws, &top)?;
    let depth = args.depth.clamp(1, moat_protocol::limits::MAX_TREE_DEPTH);
    let cap = args.max_entries.clamp(1, ws.limits().max_directory_entries) as usize;
    let mut counts = PassedOver::default();
    let mut unreadable = 0u64;
    let mut nodes: Vec<Node> = Vec::new();
    let mut roots: Vec<usize> = Vec::new();
    // (directory, its node on this page (None for the top, or a directory
    // given on an earlier page), its path from the top, depth of its entries)
    let mut queue: VecDeque<(ContainedPath, Option<usize>, String, u8)> = VecDeque::new();
    // Entries met in breadth-first order; those before `skip` were given on
    // earlier pages and are walked through, not shown.
    let mut met: u64 = 0;
    let mut cut: Option<Limit> = None;
    let mut depth_cut = false;
    // The page's text so far: an entry costs its name, its indent and its
    // line's words; a page holds at least one.
    let budget = ws.limits().answer_bytes();
    let mut used = 0usize;
    let mut pending = Some(top_raw);
    queue.push_back((top.clone(), None, String::new(), 1));
    while let Some((dir, parent, from_top, level)) = queue.pop_front() {
        if deadline.expired() {
            cut = Some(Limit::Time);
            queue.push_front((dir, parent, from_top, level));
            break;
        }
        let raw = match pending.take() {
            Some(raw) => raw,
            None => match open::read_dir(ws, &dir) {
                Ok(raw) => raw,
                Err(_) => {
                    unreadable += 1;
                    continue;
                }
            },
        };
        for listing::Shown { name, is_dir, size } in
            listing::visible(ws, &dir, raw, args.include_hidden, &mut counts)
        {
            if nodes.len() >= cap {
                cut = Some(Limit::Entries);
                break;
            }
            let child = dir.child(&name);
            let expand = is_dir && level < depth && !skiplist::is_skipped(child.file_name());
            met += 1;
            if met <= args.skip {
                // Given on an earlier page: only its place in the order and
                // its children matter.
                if expand {
                    let path = joined(&from_top, &name);
                    queue.push_back((child, None, path, level + 1));
                }
                continue;
            }
            // Names as the answer shows them: where a page ends tells nothing
            // of what a placeholder hides.
            used += ws.shown(&name).len() + 2 * usize::from(level) + ENTRY_CHARS;
            if parent.is_none() && args.skip > 0 {
                // A later page names the entry's directory on a line of its
                // own.
                used += ws.shown(&from_top).len() + ENTRY_CHARS;
            }
            if used > budget && !nodes.is_empty() {
                cut = Some(Limit::Bytes);
                break;
            }
            let index = nodes.len();
            let child_path = expand.then(|| joined(&from_top, &name));
            nodes.push(Node {
                entry: TreeEntry {
                    name,
                    depth: level,
                    kind: if is_dir {
                        EntryKind::Directory
                    } else {
                        EntryKind::File
                    },
                    size_bytes: if is_dir { 0 } else { size },
                    unexpanded: None,
                    dir: (parent.is_none() && args.skip > 0).then(|| from_top.clone()),
                },
                children: Vec::new(),
            });
            match parent {
                Some(p) => nodes[p].children.push(index),
                None => roots.push(index),
            }
            if !is_dir {
                continue;
            }
            match child_path {
                Some(path) => queue.push_back((child, Some(index), path, level + 1)),
                None => {
                    let held = count_visible(ws, &child, args.include_hidden);
                    nodes[index].entry.unexpanded = Some(held);
                    if held > 0 && level >= depth {
                        depth_cut = true;
                    }
                }
            }
        }
        if cut.is_some() {
            break;
        }
    }
    // Directories that were due to be listed when the tree stopped say what
    // they hold, like those at the depth limit.
    for (dir, parent, _, _) in queue {
        if let Some(p) = parent {
            nodes[p].entry.unexpanded = Some(count_visible(ws, &dir, args.include_hidden));
        }
    }
    if cut.is_none() && depth_cut {
        cut = Some(Limit::Depth);
    }
    let mut entries = Vec::with_capacity(nodes.len());
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        stack.extend(nodes[i].children.iter().rev());
        entries.push(i);
    }
    let mut slots: Vec<Option<TreeEntry>> = nodes.into_iter().map(|n| Some(n.entry)).collect();
    let entries = entries
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect();
    Ok(ToolOutput::DirectoryTree(DirectoryTreeOutput {
        path: top.display().to_owned(),
        entries,
        depth,
        cut,
        hidden_by_denylist: counts.denied,
        symlinks_skipped: counts.symlinks,
        special_skipped: counts.special,
        unreadable,
    }))
}

/// `name` under the directory `from_top` (a path from the tree's top).
fn joined(from_top: &str, name: &str) -> String {
    if from_top.is_empty() {
        name.to_owned()
    } else {
        format!("{from_top}/{name}")
    }
}

/// How many entries listing `dir` would show (0 if it cannot be listed).
fn count_visible(ws: &Workspace, dir: &ContainedPath, include_hidden: bool) -> u64 {
    match open::read_dir(ws, dir) {
        Ok(raw) => {
            listing::visible(ws, dir, raw, include_hidden, &mut PassedOver::default()).len() as u64
        }
        Err(_) => 0,
    }
}
