//! `project_overview`: languages, manifests, entry points, tests, the largest
//! files and version control, measured in one parallel walk. The walk also
//! notes which directories hold a `Cargo.toml` or a `package.json`, so a
//! workspace manifest's member patterns are answered with the members.

use std::collections::BTreeMap;
use std::sync::Mutex;

use moat_protocol::limits::OVERVIEW_MAX_FILE_BYTES;
use moat_protocol::request::ProjectOverviewArgs;
use moat_protocol::response::{
    Declares, LanguageStat, Limit, Manifest, ProjectOverviewOutput, SizedPath, ToolOutput,
};
use moat_protocol::wire_error::{Missing, WireError};

use crate::deadline::Deadline;
use crate::fs::Workspace;
use crate::fs::containment;
use crate::fs::open::{self, Kind};
use crate::overview::{classify, manifest};
use crate::redact::RedactionReport;
use crate::sources;
use crate::symbols::Language;
use crate::walk;

#[derive(Default)]
struct Acc {
    total_files: u64,
    total_bytes: u64,
    languages: BTreeMap<&'static str, (u64, u64, u64)>,
    entry_points: Vec<String>,
    test_files: u64,
    largest: Vec<(u64, String)>,
    /// Directories below the surveyed one holding a `Cargo.toml` or a
    /// `package.json` (relative to it): the candidates for workspace members.
    cargo_dirs: Vec<String>,
    package_dirs: Vec<String>,
}

/// Most manifest directories remembered per kind (workspace members are
/// resolved among them).
const MEMBER_DIRS: usize = 10_000;

/// Run `project_overview`.
pub fn run(
    ws: &Workspace,
    args: &ProjectOverviewArgs,
    deadline: &Deadline,
) -> Result<ToolOutput, WireError> {
    let start = containment::resolve(ws, &args.path)?;
    match open::stat(ws, &start).map(|m| m.kind) {
        Ok(Kind::Directory) => {}
        Ok(_) => return Err(WireError::NotADirectory),
        Err(_) => return Err(WireError::NotFound(Missing::Directory)),
    }
    let acc = Mutex::new(Acc::default());
    let base = start.rel();
    let opts = walk::Options {
        respect_gitignore: args.respect_gitignore,
        include_generated: args.include_generated,
        max_files: ws.limits().max_search_files,
    };
    let summary = walk::walk(ws, &start, opts, deadline, || {
        |found: walk::Found<'_>| {
            let size = open::stat_rel(ws, found.rel).map(|m| m.size).unwrap_or(0);
            let lang = Language::from_path(found.rel);
            let lines = match lang {
                Some(_) if size <= OVERVIEW_MAX_FILE_BYTES => {
                    open::read_for_scan(ws, found.rel, OVERVIEW_MAX_FILE_BYTES)
                        .map(|b| memchr::memchr_iter(b'\n', &b).count() as u64 + 1)
                        .unwrap_or(0)
                }
                _ => 0,
            };
            let test = classify::is_test_file(found.rel);
            let entry = lang.is_some() && classify::is_entry_point(found.name);
            let Ok(mut a) = acc.lock() else { return false };
            // A manifest below the surveyed directory: its directory, relative
            // to the surveyed one.
            let member_dir = found
                .rel
                .strip_suffix(found.name)
                .map(|d| d.trim_end_matches('/'))
                .and_then(|d| {
                    if base.is_empty() {
                        Some(d)
                    } else {
                        d.strip_prefix(base)
                    }
                })
                .map(|d| d.trim_start_matches('/'))
                .filter(|d| !d.is_empty());
            if let Some(dir) = member_dir {
                let dirs = match found.name {
                    "Cargo.toml" => Some(&mut a.cargo_dirs),
                    "package.json" => Some(&mut a.package_dirs),
                    _ => None,
                };
                if let Some(dirs) = dirs.filter(|d| d.len() < MEMBER_DIRS) {
                    dirs.push(dir.to_owned());
                }
            }
            a.total_files += 1;
            a.total_bytes += size;
            if test {
                a.test_files += 1;
            }
            if let Some(l) = lang {
                let e = a.languages.entry(l.name()).or_default();
                e.0 += 1;
                e.1 += lines;
                e.2 += size;
                if entry {
                    a.entry_points.push(found.rel.to_owned());
                }
                a.largest.push((size, found.rel.to_owned()));
                if a.largest.len() > 64 {
                    a.largest
                        .sort_by(|x, y| y.0.cmp(&x.0).then_with(|| x.1.cmp(&y.1)));
                    a.largest.truncate(10);
                }
            }
            true
        }
    });
    let mut a = acc.into_inner().unwrap_or_default();
    a.cargo_dirs.sort();
    a.package_dirs.sort();
    let mut languages: Vec<LanguageStat> = a
        .languages
        .into_iter()
        .map(|(language, (files, lines, bytes))| LanguageStat {
            language: language.to_owned(),
            files,
            lines,
            bytes,
        })
        .collect();
    languages.sort_by(|x, y| {
        y.files
            .cmp(&x.files)
            .then_with(|| x.language.cmp(&y.language))
    });
    a.largest
        .sort_by(|x, y| y.0.cmp(&x.0).then_with(|| x.1.cmp(&y.1)));
    a.largest.truncate(10);
    a.entry_points.sort();

    // Manifests are redacted whole before they are parsed: what they declare
    // (names, versions, dependency specs) is cut from redacted text.
    let mut report = RedactionReport::default();
    let mut manifests = Vec::new();
    for name in manifest::MANIFESTS {
        let path = start.child(name);
        let Ok(meta) = open::stat(ws, &path) else {
            continue;
        };
        if meta.kind != Kind::File {
            continue;
        }
        let declares = if meta.size > 0 && meta.size <= OVERVIEW_MAX_FILE_BYTES {
            open::read_for_scan(ws, path.rel(), OVERVIEW_MAX_FILE_BYTES)
                .ok()
                .and_then(|b| {
                    let text = sources::redact_source_bytes(
                        ws.redactor(),
                        &b,
                        &mut report,
                        deadline.work(),
                    );
                    manifest::declares(name, &text)
                })
                .map(|d| resolved(d, &a.cargo_dirs, &a.package_dirs))
        } else {
            None
        };
        manifests.push(Manifest {
            file: (*name).to_owned(),
            declares,
        });
    }
    let git = open::stat_rel(ws, ".git").is_ok();
    // A workspace that is a subdirectory of a repository is under version
    // control too (the broker looked above the root before the worker was
    // confined to it); the git tools read a repository only at the root.
    let above = !git && ws.inside_repository();
    Ok(ToolOutput::ProjectOverview(ProjectOverviewOutput {
        path: start.display().to_owned(),
        total_files: a.total_files,
        total_bytes: a.total_bytes,
        languages,
        manifests,
        entry_points: a.entry_points,
        test_files: a.test_files,
        largest_files: a
            .largest
            .into_iter()
            .map(|(size_bytes, path)| SizedPath { path, size_bytes })
            .collect(),
        version_control: if git || above { "git" } else { "none" }.to_owned(),
        repository_above: above,
        timed_out: summary.timed_out,
        skipped_reasons: summary.skipped,
        stopped_by: [
            (summary.capped, Limit::Files),
            (summary.timed_out, Limit::Time),
        ]
        .into_iter()
        .filter_map(|(hit, limit)| hit.then_some(limit))
        .collect(),
        redaction: sources::counts(&report),
    }))
}

/// `declares` with its workspace member patterns resolved to the member
/// directories the walk found.
fn resolved(mut declares: Declares, cargo_dirs: &[String], package_dirs: &[String]) -> Declares {
    match &mut declares {
        Declares::Cargo {
            workspace_members, ..
        } => *workspace_members = manifest::resolve_members(workspace_members, cargo_dirs),
        Declares::PackageJson { workspaces, .. } => {
            *workspaces = manifest::resolve_members(workspaces, package_dirs);
        }
        _ => {}
    }
    declares
}
