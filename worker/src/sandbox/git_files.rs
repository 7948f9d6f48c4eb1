//! Which files git needs inside the sandbox, derived from the git binary itself:
//! the ELF interpreter (`PT_INTERP`) and the shared libraries (`DT_NEEDED`,
//! transitively), found the way the loader finds them **without**
//! `/etc/ld.so.cache` (which Landlock hides from the worker):
//!
//! 1. a `DT_NEEDED` name containing `/` is a path;
//! 2. the needing object's `DT_RUNPATH`, or, without one, its `DT_RPATH` and the
//!    executable's (`$ORIGIN` expanded; entries with `$LIB`/`$PLATFORM` skipped);
//! 3. the loader's default directories: the interpreter's own directory (as
//!    named and canonical) with its `/usr` twin (`/lib/<triplet>` ↔
//!    `/usr/lib/<triplet>`, for systems with and without merged `/usr`), then
//!    `/lib`, `/usr/lib` (and `/lib64`, `/usr/lib64` for 64-bit objects).
//!
//! A candidate is taken only if it is an ELF file of the same class, byte order
//! and machine (the loader skips others, e.g. 32-bit libraries in `/usr/lib`).
//! glibc's `glibc-hwcaps/*/` subdirectories are searched first in each directory,
//! and every variant present is granted (the loader picks one by CPU level).
//!
//! Everything returned is canonical (symlinks resolved), deduplicated and
//! minimal: the git binary and the interpreter need ReadFile + Execute, the
//! libraries only ReadFile. git's exec-path (`git-core/`) is not included: the
//! tools only run builtins (`log`, `diff`).
//!
//! Not handled: libraries reachable only through `ld.so.conf` directories
//! (the cache), `LD_LIBRARY_PATH` (the broker clears the environment), and
//! `LD_PRELOAD`/`/etc/ld.so.preload`. Such a git fails here, at broker start-up,
//! with an error naming the missing library: fail closed, not at first use.

use std::collections::{BTreeSet, VecDeque};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::SandboxError;

/// Largest ELF file examined. git is a few MB, libc about 2 MB; the cap only
/// keeps a hostile or mistaken path from making the broker read gigabytes.
const MAX_ELF_BYTES: u64 = 256 * 1024 * 1024;

/// Most shared objects followed: git needs 3-10; a loop or a huge graph is an
/// error instead of a long start-up.
const MAX_OBJECTS: usize = 256;

const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const PT_LOAD: u32 = 1;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
const DT_STRSZ: u64 = 10;
const DT_RPATH: u64 = 15;
const DT_RUNPATH: u64 = 29;

/// Resolves the files git needs to run: `(exec, read)`, where `exec` holds the
/// git binary and its ELF interpreter (ReadFile + Execute) and `read` the
/// shared libraries (ReadFile). All canonical. Called once by the broker at
/// start-up; the result goes into [`super::Policy`].
pub fn resolve_git_files(git: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), SandboxError> {
    let git_path = canonical(git)?;
    let exe = Elf::load(&git_path)?;
    let interp_named = exe.interp.clone().ok_or_else(|| SandboxError::GitFiles {
        path: git_path.clone(),
        reason: "no PT_INTERP: a static or non-executable ELF is not supported".to_owned(),
        source: None,
    })?;
    let interp = canonical(&interp_named)?;

    let default_dirs = default_dirs(&interp_named, &interp, exe.class);
    let exe_rpath = expand_paths(&exe.rpath, &git_path);

    let mut exec = vec![git_path.clone(), interp.clone()];
    exec.dedup();
    let mut read: BTreeSet<PathBuf> = BTreeSet::new();
    let mut seen_names: BTreeSet<String> = BTreeSet::new();
    let mut queue: VecDeque<(PathBuf, Elf)> = VecDeque::from([(git_path.clone(), exe.clone())]);
    let mut objects = 0;
    while let Some((path, elf)) = queue.pop_front() {
        objects += 1;
        if objects > MAX_OBJECTS {
            return Err(git_err(&git_path, "too many shared objects"));
        }
        let search = if elf.runpath.is_empty() {
            let mut dirs = expand_paths(&elf.rpath, &path);
            dirs.extend(exe_rpath.iter().cloned());
            dirs
        } else {
            expand_paths(&elf.runpath, &path)
        };
        for name in &elf.needed {
            if !seen_names.insert(name.clone()) {
                continue;
            }
            let found = find_library(name, &search, &default_dirs, &exe)?
                .ok_or_else(|| git_err(&path, &format!("library {name} not found")))?;
            let (first, variants) = found
                .split_first()
                .ok_or_else(|| git_err(&path, "empty search result"))?;
            let primary = canonical(first)?;
            if primary == interp {
                // libc names the loader as DT_NEEDED; it is already in `exec`.
                continue;
            }
            for variant in variants {
                read.insert(canonical(variant)?);
            }
            if read.insert(primary.clone()) {
                let lib = Elf::load(&primary)?;
                queue.push_back((primary, lib));
            }
        }
    }
    Ok((exec, read.into_iter().collect()))
}

fn git_err(path: &Path, reason: &str) -> SandboxError {
    SandboxError::GitFiles {
        path: path.to_owned(),
        reason: reason.to_owned(),
        source: None,
    }
}

fn canonical(path: &Path) -> Result<PathBuf, SandboxError> {
    fs::canonicalize(path).map_err(|e| SandboxError::GitFiles {
        path: path.to_owned(),
        reason: "cannot canonicalize".to_owned(),
        source: Some(e),
    })
}

/// The loader's default directories (see the module docs), deduplicated, in
/// search order.
fn default_dirs(interp_named: &Path, interp: &Path, class: u8) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut push = |dir: PathBuf| {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    };
    for file in [interp, interp_named] {
        if let Some(dir) = file.parent() {
            push(dir.to_owned());
            if let Ok(rest) = dir.strip_prefix("/usr") {
                push(Path::new("/").join(rest));
            } else if dir.is_absolute() {
                push(Path::new("/usr").join(dir.strip_prefix("/").unwrap_or(dir)));
            }
        }
    }
    push(PathBuf::from("/lib"));
    push(PathBuf::from("/usr/lib"));
    if class == ELFCLASS64 {
        push(PathBuf::from("/lib64"));
        push(PathBuf::from("/usr/lib64"));
    }
    dirs
}

/// Splits `DT_RPATH`/`DT_RUNPATH` strings and expands `$ORIGIN` to the
/// directory of `object`. Entries naming `$LIB` or `$PLATFORM` (whose values
/// only the loader knows) and relative entries are skipped.
fn expand_paths(entries: &[String], object: &Path) -> Vec<PathBuf> {
    let origin = object
        .parent()
        .unwrap_or(Path::new("/"))
        .to_string_lossy()
        .into_owned();
    entries
        .iter()
        .flat_map(|e| e.split(':'))
        .filter(|e| !e.is_empty())
        .map(|e| e.replace("${ORIGIN}", &origin).replace("$ORIGIN", &origin))
        .filter(|e| !e.contains('$') && e.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// Finds `name` like the loader: returns the file the loader would load
/// first, followed by every `glibc-hwcaps` variant in that same directory.
fn find_library(
    name: &str,
    search: &[PathBuf],
    default_dirs: &[PathBuf],
    exe: &Elf,
) -> Result<Option<Vec<PathBuf>>, SandboxError> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return Ok(compatible(&path, exe).then(|| vec![path]));
    }
    for dir in search.iter().chain(default_dirs) {
        let mut hwcaps: Vec<PathBuf> = Vec::new();
        if let Ok(entries) = fs::read_dir(dir.join("glibc-hwcaps")) {
            for entry in entries.flatten() {
                let candidate = entry.path().join(name);
                if compatible(&candidate, exe) {
                    hwcaps.push(candidate);
                }
            }
        }
        hwcaps.sort();
        let plain = dir.join(name);
        if compatible(&plain, exe) {
            let mut found = vec![plain];
            found.extend(hwcaps);
            return Ok(Some(found));
        }
        if !hwcaps.is_empty() {
            return Ok(Some(hwcaps));
        }
    }
    Ok(None)
}

/// Is `path` an ELF object the loader would accept for `exe`?
fn compatible(path: &Path, exe: &Elf) -> bool {
    let Ok(mut file) = fs::File::open(path) else {
        return false;
    };
    let mut ident = [0u8; 20];
    if file.read_exact(&mut ident).is_err() {
        return false;
    }
    let Ok(header) = Header::parse(&ident) else {
        return false;
    };
    header.class == exe.class && header.little == exe.little && header.machine == exe.machine
}

const ELFCLASS32: u8 = 1;
const ELFCLASS64: u8 = 2;

/// The first 20 bytes of an ELF file: identification and machine.
struct Header {
    class: u8,
    little: bool,
    machine: u16,
}

impl Header {
    fn parse(bytes: &[u8]) -> Result<Header, &'static str> {
        if bytes.get(..4) != Some(b"\x7fELF") {
            return Err("not an ELF file");
        }
        let class = *bytes.get(4).ok_or("truncated")?;
        if class != ELFCLASS32 && class != ELFCLASS64 {
            return Err("unknown ELF class");
        }
        let little = match bytes.get(5) {
            Some(1) => true,
            Some(2) => false,
            _ => return Err("unknown ELF byte order"),
        };
        let machine = Reader {
            data: bytes,
            little,
        }
        .u16(18)?;
        Ok(Header {
            class,
            little,
            machine,
        })
    }
}

/// What the resolver needs from one ELF object.
#[derive(Debug, Clone)]
struct Elf {
    class: u8,
    little: bool,
    machine: u16,
    interp: Option<PathBuf>,
    needed: Vec<String>,
    rpath: Vec<String>,
    runpath: Vec<String>,
}

impl Elf {
    /// Reads only the parts of the file the resolver needs (the header, the
    /// program headers, `PT_INTERP`, `PT_DYNAMIC` and the dynamic string
    /// table: a few KB), not the whole object. git and its libraries are
    /// several MB, and this runs at every broker start.
    fn load(path: &Path) -> Result<Elf, SandboxError> {
        let io_err = |e| SandboxError::GitFiles {
            path: path.to_owned(),
            reason: "cannot read".to_owned(),
            source: Some(e),
        };
        let file = fs::File::open(path).map_err(io_err)?;
        let len = file.metadata().map_err(io_err)?.len();
        if len > MAX_ELF_BYTES {
            return Err(git_err(path, "ELF file too large"));
        }
        let image = FileImage {
            file: std::cell::RefCell::new(file),
            len,
        };
        Elf::parse(&image).map_err(|reason| git_err(path, reason))
    }

    fn parse<I: Image + ?Sized>(image: &I) -> Result<Elf, &'static str> {
        let head = image.bytes(0, image.len().min(64))?;
        let header = Header::parse(&head)?;
        let little = header.little;
        let r = Reader {
            data: &head,
            little,
        };
        let is64 = header.class == ELFCLASS64;
        // e_phoff, e_phentsize, e_phnum
        let (phoff, phentsize, phnum) = if is64 {
            (r.u64(32)?, r.u16(54)?, r.u16(56)?)
        } else {
            (u64::from(r.u32(28)?), r.u16(42)?, r.u16(44)?)
        };
        let table = image.bytes(phoff, u64::from(phentsize) * u64::from(phnum))?;
        let ph = Reader {
            data: &table,
            little,
        };
        let mut interp = None;
        let mut dynamic = None;
        let mut loads = Vec::new();
        for i in 0..u64::from(phnum) {
            let at = usize_of(i * u64::from(phentsize))?;
            let p_type = ph.u32(at)?;
            // (p_offset, p_vaddr, p_filesz)
            let (offset, vaddr, filesz) = if is64 {
                (ph.u64(at + 8)?, ph.u64(at + 16)?, ph.u64(at + 32)?)
            } else {
                (
                    u64::from(ph.u32(at + 4)?),
                    u64::from(ph.u32(at + 8)?),
                    u64::from(ph.u32(at + 16)?),
                )
            };
            match p_type {
                PT_INTERP => {
                    let bytes = image.bytes(offset, filesz)?;
                    let text = bytes.split(|b| *b == 0).next().ok_or("empty PT_INTERP")?;
                    let text = std::str::from_utf8(text).map_err(|_| "PT_INTERP not UTF-8")?;
                    interp = Some(PathBuf::from(text));
                }
                PT_DYNAMIC => dynamic = Some((offset, filesz)),
                PT_LOAD => loads.push((offset, vaddr, filesz)),
                _ => {}
            }
        }

        let mut elf = Elf {
            class: header.class,
            little: header.little,
            machine: header.machine,
            interp,
            needed: Vec::new(),
            rpath: Vec::new(),
            runpath: Vec::new(),
        };
        let Some((dyn_off, dyn_size)) = dynamic else {
            return Ok(elf);
        };
        let entry = if is64 { 16 } else { 8 };
        let dynamic = image.bytes(dyn_off, dyn_size)?;
        let d = Reader {
            data: &dynamic,
            little,
        };
        let (mut strtab, mut strsz) = (None, None);
        let mut entries = Vec::new();
        for i in 0..dyn_size / entry {
            let at = usize_of(i * entry)?;
            let (tag, val) = if is64 {
                (d.u64(at)?, d.u64(at + 8)?)
            } else {
                (u64::from(d.u32(at)?), u64::from(d.u32(at + 4)?))
            };
            match tag {
                DT_NULL => break,
                DT_STRTAB => strtab = Some(val),
                DT_STRSZ => strsz = Some(val),
                DT_NEEDED | DT_RPATH | DT_RUNPATH => entries.push((tag, val)),
                _ => {}
            }
        }
        if entries.is_empty() {
            return Ok(elf);
        }
        let strtab = strtab.ok_or("DT_STRTAB missing")?;
        let strsz = strsz.ok_or("DT_STRSZ missing")?;
        // DT_STRTAB is a virtual address: map it to a file offset through the
        // PT_LOAD segment that contains it.
        let str_off = loads
            .iter()
            .find(|(_, vaddr, filesz)| strtab >= *vaddr && strtab < vaddr + filesz)
            .map(|(offset, vaddr, _)| strtab - vaddr + offset)
            .ok_or("DT_STRTAB outside every PT_LOAD")?;
        let strings = image.bytes(str_off, strsz)?;
        for (tag, index) in entries {
            let tail = strings
                .get(usize_of(index)?..)
                .ok_or("string index out of range")?;
            let text = tail.split(|b| *b == 0).next().ok_or("bad string")?;
            let text = std::str::from_utf8(text).map_err(|_| "dynamic string not UTF-8")?;
            let list = match tag {
                DT_NEEDED => &mut elf.needed,
                DT_RPATH => &mut elf.rpath,
                _ => &mut elf.runpath,
            };
            list.push(text.to_owned());
        }
        Ok(elf)
    }
}

/// An ELF object to read ranges from: a file, or (tests) bytes in memory.
trait Image {
    /// Length in bytes.
    fn len(&self) -> u64;
    /// `len` bytes at `offset`, entirely inside the object.
    fn bytes(&self, offset: u64, len: u64) -> Result<Vec<u8>, &'static str>;
}

fn range_in(offset: u64, len: u64, size: u64) -> Result<(), &'static str> {
    let end = offset.checked_add(len).ok_or("range overflow")?;
    if end > size {
        return Err("range outside the file");
    }
    Ok(())
}

impl Image for [u8] {
    fn len(&self) -> u64 {
        self.len() as u64
    }

    fn bytes(&self, offset: u64, len: u64) -> Result<Vec<u8>, &'static str> {
        range_in(offset, len, Image::len(self))?;
        let start = usize_of(offset)?;
        Ok(self[start..start + usize_of(len)?].to_vec())
    }
}

/// A file read by range (its length was checked against [`MAX_ELF_BYTES`]).
struct FileImage {
    file: std::cell::RefCell<fs::File>,
    len: u64,
}

impl Image for FileImage {
    fn len(&self) -> u64 {
        self.len
    }

    fn bytes(&self, offset: u64, len: u64) -> Result<Vec<u8>, &'static str> {
        use std::io::{Seek, SeekFrom};
        range_in(offset, len, self.len)?;
        let mut buf = vec![0u8; usize_of(len)?];
        let mut file = self.file.try_borrow_mut().map_err(|_| "file busy")?;
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_exact(&mut buf))
            .map_err(|_| "cannot read the file")?;
        Ok(buf)
    }
}

fn usize_of(value: u64) -> Result<usize, &'static str> {
    usize::try_from(value).map_err(|_| "offset out of range")
}

/// Bounds-checked little/big-endian reads from an ELF image.
struct Reader<'a> {
    data: &'a [u8],
    little: bool,
}

impl Reader<'_> {
    fn array<const N: usize>(&self, at: usize) -> Result<[u8; N], &'static str> {
        let end = at.checked_add(N).ok_or("range overflow")?;
        let bytes = self.data.get(at..end).ok_or("truncated ELF")?;
        bytes.try_into().map_err(|_| "truncated ELF")
    }

    fn u16(&self, at: usize) -> Result<u16, &'static str> {
        let b = self.array::<2>(at)?;
        Ok(if self.little {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        })
    }

    fn u32(&self, at: usize) -> Result<u32, &'static str> {
        let b = self.array::<4>(at)?;
        Ok(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    fn u64(&self, at: usize) -> Result<u64, &'static str> {
        let b = self.array::<8>(at)?;
        Ok(if self.little {
            u64::from_le_bytes(b)
        } else {
            u64::from_be_bytes(b)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn names(paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    /// Both gits on the test machine (Debian's and a /usr/local build) link
    /// the same three libraries; the loader and libc come from the multiarch
    /// directory. Compare with `ldd` and the sandbox notes §2.4.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn check_git(git: &str) {
        let (exec, read) = resolve_git_files(Path::new(git)).unwrap();
        assert_eq!(exec.len(), 2, "{exec:?}");
        assert_eq!(exec[0], fs::canonicalize(git).unwrap());
        assert_eq!(
            exec[1],
            fs::canonicalize("/lib64/ld-linux-x86-64.so.2").unwrap()
        );
        let mut libs = names(&read);
        libs.sort();
        assert_eq!(libs.len(), 3, "{read:?}");
        assert_eq!(libs[0], "libc.so.6");
        assert!(libs[1].starts_with("libpcre2-8.so.0"), "{libs:?}");
        assert!(libs[2].starts_with("libz.so.1"), "{libs:?}");
        for path in exec.iter().chain(&read) {
            assert!(path.is_absolute() && fs::canonicalize(path).unwrap() == *path);
        }
    }

    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn resolves_usr_local_bin_git() {
        check_git("/usr/local/bin/git");
    }

    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn resolves_usr_bin_git() {
        check_git("/usr/bin/git");
    }

    #[test]
    fn a_non_elf_file_is_an_error() {
        let file = tempfile::NamedTempFile::new().unwrap();
        fs::write(file.path(), "#!/bin/sh\n").unwrap();
        let err = resolve_git_files(file.path()).unwrap_err();
        assert_eq!(err.exit_code(), 79);
    }

    #[test]
    fn a_missing_git_is_an_error() {
        assert!(resolve_git_files(Path::new("/nonexistent/git")).is_err());
    }

    #[test]
    fn origin_is_expanded_and_unknown_tokens_skipped() {
        let got = expand_paths(
            &[
                "$ORIGIN/../lib:/opt/x:${ORIGIN}/y".into(),
                "$LIB/z:rel".into(),
            ],
            Path::new("/app/bin/git"),
        );
        let want: Vec<PathBuf> = ["/app/bin/../lib", "/opt/x", "/app/bin/y"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn default_dirs_cover_merged_and_split_usr() {
        let dirs = default_dirs(
            Path::new("/lib64/ld-linux-x86-64.so.2"),
            Path::new("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
            ELFCLASS64,
        );
        let want: Vec<PathBuf> = [
            "/usr/lib/x86_64-linux-gnu",
            "/lib/x86_64-linux-gnu",
            "/lib64",
            "/usr/lib64",
            "/lib",
            "/usr/lib",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(dirs, want);
    }

    #[test]
    fn truncated_elf_is_an_error_not_a_panic() {
        let mut data = fs::read("/proc/self/exe").unwrap();
        for len in [0, 3, 10, 63, 64, 200, 1000] {
            data.truncate(len);
            let _ = Elf::parse(&data[..]);
        }
    }

    #[test]
    fn reading_by_range_finds_what_reading_everything_finds() {
        for path in ["/proc/self/exe", "/usr/bin/git", "/usr/local/bin/git"] {
            let Ok(path) = fs::canonicalize(path) else {
                continue;
            };
            let whole = fs::read(&path).unwrap();
            let a = Elf::parse(&whole[..]).unwrap();
            let b = Elf::load(&path).unwrap();
            assert_eq!(
                (
                    a.class, a.little, a.machine, &a.interp, &a.needed, &a.rpath, &a.runpath
                ),
                (
                    b.class, b.little, b.machine, &b.interp, &b.needed, &b.rpath, &b.runpath
                ),
                "{path:?}"
            );
        }
    }
}
