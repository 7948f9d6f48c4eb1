//! Paths moat never reads, whatever the request: credential files, key material,
//! and directories that hold them.
//!
//! The list is built in and can only grow (`sandbox.deny_extra`). Matching is
//! case-insensitive and examines **every** component of a workspace-relative
//! path, so a denied name is denied at any depth, and a denied directory denies
//! its whole subtree. Multi-segment entries (`.config/gcloud`) match at any
//! depth too: a nested home directory or vendored tree holds the same files.
//!
//! The denylist is checked *after* containment, on the resolved path, so
//! `docs/../.env` is the same request as `.env`.

use moat_protocol::wire_error::Denial;

/// Exact file names, never read. Each entry's reason is in
/// `docs/redaction.md`.
pub const DENIED_NAMES: &[&str] = &[
    ".env",
    ".envrc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".htpasswd",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    "credentials",
    "credentials.json",
    "service-account.json",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "known_hosts",
    "secring.gpg",
    "shadow",
    // Tool credential stores and key files found in public secret-scanner
    // path lists and the tools' own documentation.
    "credentials.toml",
    "credentials.xml",
    "credentials.tfrc.json",
    ".vault-token",
    ".my.cnf",
    ".mylogin.cnf",
    ".s3cfg",
    ".boto",
    ".passwd-s3fs",
    "passwd-s3fs",
    ".yarnrc.yml",
    ".dockercfg",
    ".terraformrc",
    "terraform.rc",
    "terraform.tfvars",
    "terraform.tfvars.json",
    "kubeconfig",
    ".databrickscfg",
    ".sentryclirc",
    ".msmtprc",
    ".fetchmailrc",
    ".xauthority",
    "auth.json",
    "secrets.yml",
    "secrets.yaml",
    "secrets.json",
    "secrets.toml",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "id_xmss",
];

/// Glob patterns matched against each lower-cased component. Each entry's
/// reason is in `docs/redaction.md`.
pub const DENIED_PATTERNS: &[&str] = &[
    ".env.*",
    "*.pem",
    "*.key",
    "*.pfx",
    "*.p12",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.ppk",
    "*.asc",
    "*_rsa",
    "*_ed25519",
    "*.tfstate",
    "*.tfstate.backup",
    ".env-*",
    ".env_*",
    "*.env",
    "*.p8",
    "*.pkcs12",
    "*.ovpn",
    "*.keychain",
    "*.keychain-db",
    "*.tfvars",
    "*.tfvars.json",
    "*_dsa",
    "*_ecdsa",
    "*_ecdsa_sk",
    "*_ed25519_sk",
    "ssh_host_*_key",
    "client_secret*.json",
    "*firebase-adminsdk*.json",
    ".*_history",
];

/// Directories (and, with more than one segment, files) whose whole subtree
/// is refused. Each entry's reason is in `docs/redaction.md`.
pub const DENIED_DIRECTORIES: &[&str] = &[
    ".git",
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".kube",
    ".docker",
    ".config/gcloud",
    "node_modules/.cache",
    ".cargo/credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".terraform.d/credentials.tfrc.json",
];

/// The compiled denylist.
///
/// # Invariants
///
/// Every entry is lower case and non-empty; the built-in entries are always
/// present (construction only adds).
#[derive(Debug, Clone)]
pub struct Denylist {
    names: Vec<String>,
    patterns: Vec<String>,
    /// `patterns`, compiled once (same order).
    compiled: Vec<Glob>,
    /// Single-segment directories.
    dirs: Vec<String>,
    /// Multi-segment directories, as component lists.
    dir_paths: Vec<Vec<String>>,
}

impl Denylist {
    /// The built-in list plus `extra` entries. An extra entry containing `/` is
    /// a directory path (matched literally) that denies its subtree at any
    /// depth; one containing `*`, `?` or `[` is a pattern matched against each
    /// component; anything else is an exact name.
    /// Entries are trimmed and lower-cased; empty ones are dropped.
    #[must_use]
    pub fn new(extra: &[String]) -> Denylist {
        let mut list = Denylist {
            names: DENIED_NAMES.iter().map(|s| (*s).to_owned()).collect(),
            patterns: DENIED_PATTERNS.iter().map(|s| (*s).to_owned()).collect(),
            compiled: Vec::new(),
            dirs: Vec::new(),
            dir_paths: Vec::new(),
        };
        for d in DENIED_DIRECTORIES {
            list.add_dir(d);
        }
        for raw in extra {
            let e = raw.trim().to_lowercase();
            let e = e.trim_matches('/');
            if e.is_empty() {
                continue;
            }
            if e.contains('/') {
                list.add_dir(e);
            } else if e.contains(['*', '?', '[']) {
                list.patterns.push(e.to_owned());
            } else {
                list.names.push(e.to_owned());
            }
        }
        list.compiled = list.patterns.iter().map(|p| Glob::new(p)).collect();
        list
    }

    /// Why the *last* component of `rel` is denied, assuming every parent
    /// directory has already passed this check (walks and listings, which
    /// never descend into a denied directory). Same verdicts as
    /// [`Denylist::check_path`] under that assumption; no allocation for
    /// lower-case ASCII names.
    #[must_use]
    pub fn check_last(&self, rel: &str) -> Option<Denial> {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let lower: std::borrow::Cow<'_, str> = if name
            .bytes()
            .any(|b| b.is_ascii_uppercase() || !b.is_ascii())
        {
            std::borrow::Cow::Owned(name.to_lowercase())
        } else {
            std::borrow::Cow::Borrowed(name)
        };
        let lower = lower.as_ref();
        if let Some(d) = self.dirs.iter().find(|d| d.as_str() == lower) {
            return Some(Denial::Directory(d.clone()));
        }
        for dp in &self.dir_paths {
            let mut tail = rel.rsplit('/');
            let all = dp.iter().rev().all(|want| {
                tail.next()
                    .is_some_and(|got| got.chars().flat_map(char::to_lowercase).eq(want.chars()))
            });
            if all {
                return Some(Denial::Directory(dp.join("/")));
            }
        }
        if let Some(n) = self.names.iter().find(|n| n.as_str() == lower) {
            return Some(Denial::Name(n.clone()));
        }
        self.patterns
            .iter()
            .zip(&self.compiled)
            .find(|(_, c)| c.matches(lower))
            .map(|(p, _)| Denial::Pattern(p.clone()))
    }

    fn add_dir(&mut self, d: &str) {
        let parts: Vec<String> = d
            .split('/')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        match parts.len() {
            0 => {}
            1 => self.dirs.extend(parts),
            _ => self.dir_paths.push(parts),
        }
    }

    /// Number of exact names (built-in plus extra), for `doctor`.
    #[must_use]
    pub fn name_count(&self) -> usize {
        self.names.len()
    }

    /// Number of patterns (built-in plus extra), for `doctor`.
    #[must_use]
    pub fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    /// Why `components` (a workspace-relative path split on `/`) is denied,
    /// or `None`. Order: denied directories, then multi-segment directories,
    /// then for each component the names, then the patterns; first hit wins.
    #[must_use]
    pub fn check<S: AsRef<str>>(&self, components: &[S]) -> Option<Denial> {
        let lower: Vec<String> = components
            .iter()
            .map(|c| c.as_ref().to_lowercase())
            .collect();
        for c in &lower {
            if let Some(d) = self.dirs.iter().find(|d| *d == c) {
                return Some(Denial::Directory(d.clone()));
            }
        }
        for dp in &self.dir_paths {
            if lower.windows(dp.len()).any(|w| w == dp.as_slice()) {
                return Some(Denial::Directory(dp.join("/")));
            }
        }
        for c in &lower {
            if let Some(n) = self.names.iter().find(|n| *n == c) {
                return Some(Denial::Name(n.clone()));
            }
            if let Some(i) = self.compiled.iter().position(|p| p.matches(c)) {
                return Some(Denial::Pattern(self.patterns[i].clone()));
            }
        }
        None
    }

    /// The part of `rel` the denylist refuses first: the path of the first
    /// denied directory or name on the way to it (`.ssh` for
    /// `.ssh/keys/id`), or `None` when `rel` is not denied.
    ///
    /// An answer that accounts for denied paths counts these, never the
    /// paths beneath them: what a denied directory holds, and whether it
    /// changed, is as hidden as its files' contents.
    #[must_use]
    pub fn denied_root<'r>(&self, rel: &'r str) -> Option<&'r str> {
        self.check_path(rel)?;
        let mut end = 0;
        for (i, _) in rel
            .match_indices('/')
            .chain(std::iter::once((rel.len(), "")))
        {
            if i > end && self.check_path(&rel[..i]).is_some() {
                return Some(&rel[..i]);
            }
            end = i;
        }
        Some(rel)
    }

    /// [`Denylist::check`] on a `/`-separated relative path.
    #[must_use]
    pub fn check_path(&self, rel: &str) -> Option<Denial> {
        let parts: Vec<&str> = rel
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        self.check(&parts)
    }
}

/// [`Denylist::check_path`] over many paths, each parent directory checked
/// once while consecutive paths share it (an index or a tree, in order): a
/// path's verdict is its parent's, else its last component's, which is the
/// verdict of the whole path.
pub struct PathChecker<'a> {
    list: &'a Denylist,
    /// The last parent directory that passed.
    passed: Option<String>,
}

impl<'a> PathChecker<'a> {
    /// A checker with nothing cached.
    #[must_use]
    pub fn new(list: &'a Denylist) -> Self {
        Self { list, passed: None }
    }

    /// The verdict [`Denylist::check_path`] gives `rel`.
    pub fn check(&mut self, rel: &str) -> Option<Denial> {
        let Some((parent, _)) = rel.rsplit_once('/') else {
            return self.list.check_path(rel);
        };
        if self.passed.as_deref() != Some(parent) {
            if let Some(denial) = self.list.check_path(parent) {
                return Some(denial);
            }
            self.passed = Some(parent.to_owned());
        }
        self.list.check_last(rel)
    }
}

/// [`glob_match_chars`] on a pattern not yet split, as the tests write one.
#[cfg(test)]
#[must_use]
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    glob_match_chars(&p, text)
}

/// A pattern compiled for [`glob_match_chars`]'s semantics: `*LITERAL` and
/// `LITERAL*` (most of the built-in list) become suffix and prefix tests,
/// anything else is matched character by character.
#[derive(Debug, Clone)]
enum Glob {
    /// `*` followed by text without `*`, `?` or `[`.
    Suffix(String),
    /// Text without `*`, `?` or `[`, followed by `*`.
    Prefix(String),
    /// Any other pattern, split into characters.
    Chars(Vec<char>),
}

impl Glob {
    fn new(pattern: &str) -> Glob {
        let literal = |s: &str| !s.contains(['*', '?', '[']);
        if let Some(rest) = pattern.strip_prefix('*')
            && literal(rest)
        {
            return Glob::Suffix(rest.to_owned());
        }
        if let Some(rest) = pattern.strip_suffix('*')
            && literal(rest)
        {
            return Glob::Prefix(rest.to_owned());
        }
        Glob::Chars(pattern.chars().collect())
    }

    fn matches(&self, text: &str) -> bool {
        match self {
            Glob::Suffix(s) => text.ends_with(s.as_str()),
            Glob::Prefix(p) => text.starts_with(p.as_str()),
            Glob::Chars(p) => glob_match_chars(p, text),
        }
    }
}

/// `fnmatch`-style match of one path component, the pattern split into
/// characters: `*` any run, `?` one character, `[abc]`/`[a-z]`/`[!x]` a
/// class. Runs in O(len(p) * len(s)) at worst (no exponential backtracking:
/// one saved star position). An ASCII `text` (nearly every file name) is
/// matched in place, without allocating.
fn glob_match_chars(p: &[char], text: &str) -> bool {
    if text.is_ascii() {
        glob_match_in(p, text.as_bytes(), char::from)
    } else {
        let s: Vec<char> = text.chars().collect();
        glob_match_in(p, &s, |c| c)
    }
}

fn glob_match_in<T: Copy>(p: &[char], s: &[T], at: impl Fn(T) -> char) -> bool {
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let c = at(s[si]);
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, si));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                '[' => {
                    if let Some((matched, next)) = class_match(p, pi, c) {
                        if matched {
                            pi = next;
                            si += 1;
                            continue;
                        }
                    } else if c == '[' {
                        // An unclosed `[` is a literal.
                        pi += 1;
                        si += 1;
                        continue;
                    }
                }
                pc if pc == c => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Match `c` against the class starting at `p[start] == '['`. Returns
/// `(matched, index after the class)`, or `None` if the class is unclosed.
fn class_match(p: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = matches!(p.get(i), Some('!') | Some('^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied(list: &Denylist, path: &str) -> bool {
        list.check_path(path).is_some()
    }

    #[test]
    fn common_credential_files_are_denied() {
        let list = Denylist::new(&[]);
        for p in [
            ".env",
            ".env.production",
            "config/.env",
            "keys/server.pem",
            "id_rsa",
            "nested/deep/id_ed25519",
            ".git/config",
            ".ssh/known_hosts",
            ".aws/credentials",
            "terraform.tfstate",
            ".ENV",
            "Deploy.PEM",
            ".git",
            ".git/HEAD",
            ".ssh/config",
        ] {
            assert!(denied(&list, p), "{p} should be denied");
        }
    }

    /// Credential files of common tools, at the root and deeper, in any case.
    pub(crate) const TOOL_CREDENTIALS: &[&str] = &[
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".config/gh/hosts.yml",
        ".config/hub",
        ".terraform.d/credentials.tfrc.json",
        ".vault-token",
        "AuthKey_ABC123.p8",
        "terraform.tfvars",
        "infra/prod.auto.tfvars",
        "infra/prod.tfvars.json",
        "kubeconfig",
        ".kube/config",
        ".my.cnf",
        ".s3cfg",
        ".boto",
        ".yarnrc.yml",
        "prod.env",
        ".env-production",
        ".env_local",
        ".env.staging",
        ".ssh-free/id_ecdsa_sk",
        "id_ed25519_sk",
        "backup_ecdsa",
        "etc/ssh/ssh_host_ed25519_key",
        "client_secret_123.apps.googleusercontent.com.json",
        "app-firebase-adminsdk-x1y2.json",
        ".bash_history",
        "vpn/office.ovpn",
        "login.keychain-db",
        ".dockercfg",
        ".terraformrc",
        ".databrickscfg",
        ".sentryclirc",
        "config/secrets.yml",
        ".streamlit/secrets.toml",
        "composer/auth.json",
        "jenkins/credentials.xml",
        "store.pkcs12",
        ".passwd-s3fs",
        ".mylogin.cnf",
    ];

    #[test]
    fn tool_credential_files_are_denied() {
        let list = Denylist::new(&[]);
        for p in TOOL_CREDENTIALS {
            assert!(denied(&list, p), "{p} should be denied");
            assert!(denied(&list, &format!("deep/er/{p}")), "{p} deeper");
            assert!(denied(&list, &p.to_uppercase()), "{p} upper case");
        }
        // Near misses stay readable.
        for p in [
            "src/env.rs",
            "docs/environment.md",
            "p8.txt",
            "history.md",
            "secrets.py",
        ] {
            assert!(!denied(&list, p), "{p} should be allowed");
        }
    }

    #[test]
    fn ordinary_files_with_similar_names_are_allowed() {
        let list = Denylist::new(&[]);
        for p in [
            "src/main.py",
            "README.md",
            "docs/env-setup.md",
            "environment.py",
            "node_modules/leftpad/index.js",
            ".github/workflows/ci.yml",
            "keyboard.rs",
        ] {
            assert!(!denied(&list, p), "{p} should be allowed");
        }
    }

    #[test]
    fn multi_segment_directories_match_at_any_depth() {
        let list = Denylist::new(&[]);
        assert!(denied(&list, ".config/gcloud/creds.json"));
        assert!(denied(&list, "home/user/.config/gcloud/creds.json"));
        assert!(denied(&list, "web/node_modules/.cache/x"));
        assert!(!denied(&list, ".config/other"));
    }

    #[test]
    fn reasons_name_the_entry() {
        let list = Denylist::new(&[]);
        assert_eq!(list.check_path(".env"), Some(Denial::Name(".env".into())));
        assert_eq!(
            list.check_path("a/b.pem"),
            Some(Denial::Pattern("*.pem".into()))
        );
        assert_eq!(
            list.check_path(".ssh/x"),
            Some(Denial::Directory(".ssh".into()))
        );
        // Directories are checked before names.
        assert_eq!(
            list.check_path(".git/.env"),
            Some(Denial::Directory(".git".into()))
        );
    }

    #[test]
    fn extras_extend_and_never_shorten() {
        let list = Denylist::new(&[
            "README.md".into(),
            " SECRET*.txt ".into(),
            "".into(),
            "priv/keys".into(),
        ]);
        assert!(denied(&list, "readme.md"));
        assert!(denied(&list, "a/secret-1.txt"));
        assert!(denied(&list, "a/priv/keys/k"));
        assert!(denied(&list, ".env"));
        assert_eq!(list.name_count(), DENIED_NAMES.len() + 1);
        assert_eq!(list.pattern_count(), DENIED_PATTERNS.len() + 1);
        let empty = Denylist::new(&[String::new()]);
        assert!(denied(&empty, ".env"));
    }

    #[test]
    fn check_last_agrees_with_the_full_check_below_allowed_parents() {
        let list = Denylist::new(&["priv/keys".into(), "Secret*.TXT".into()]);
        for p in [
            ".env",
            "a/.env",
            "A/.ENV",
            "x/deploy.PEM",
            "src/main.rs",
            "a/.ssh",
            ".config/gcloud",
            "h/.config/gcloud",
            "node_modules/.cache",
            "docs/env-setup.md",
            "a/priv/keys",
            "x/secret-1.txt",
            ".env.local",
            "k_rsa",
            "k.tfstate.backup",
            "readme.md",
        ] {
            assert_eq!(list.check_last(p), list.check_path(p), "{p}");
        }
    }

    #[test]
    fn the_path_checker_agrees_with_the_full_check_in_any_order() {
        let list = Denylist::new(&["priv/keys".into(), "Secret*.TXT".into()]);
        let mut paths = vec![
            ".env",
            "a/.env",
            "a/b.rs",
            "a/priv/keys",
            "a/priv/keys/x",
            "a/priv/ok.rs",
            "a/priv/keysx",
            ".ssh/config",
            ".ssh/x/y",
            "src/.git/config",
            "src/main.rs",
            "src/secret-1.txt",
            "src/secret-1.txt/inner",
            "x/deploy.PEM",
            "x/deploy.PEM/y",
            "x/y/z.rs",
            "node_modules/a/b",
            "readme.md",
        ];
        for _ in 0..2 {
            let mut checker = PathChecker::new(&list);
            for p in &paths {
                assert_eq!(checker.check(p), list.check_path(p), "{p}");
            }
            paths.sort_unstable();
        }
    }

    #[test]
    fn glob_semantics() {
        assert!(glob_match("*.pem", "a.pem"));
        assert!(glob_match("*.pem", ".pem"));
        assert!(!glob_match("*.pem", "a.pem.txt"));
        assert!(glob_match(".env.*", ".env.local"));
        assert!(!glob_match(".env.*", ".env"));
        assert!(glob_match("a?c", "abc"));
        assert!(glob_match("[ab]x", "bx"));
        assert!(!glob_match("[!ab]x", "bx"));
        assert!(glob_match("[a-c]*", "cat"));
        assert!(glob_match("[", "["));
        assert!(glob_match("*_rsa", "deploy_rsa"));
        // Non-ASCII text takes the other path, with the same answers.
        assert!(glob_match("*.pem", "clé.pem"));
        assert!(glob_match("?.key", "é.key"));
        assert!(!glob_match("?.key", "éé.key"));
        assert!(glob_match("[é]x", "éx"));
        // The compiled shortcuts agree with the general matcher.
        for pattern in DENIED_PATTERNS
            .iter()
            .chain(&["*", "a*", "*a", "**", "*.*", "x?*", "[ab]*"])
        {
            for text in [
                "",
                "a",
                "a.pem",
                ".env.local",
                ".env",
                "key.tfstate.backup",
                "x_rsa",
                "éa",
                "ab",
                "*",
            ] {
                assert_eq!(
                    Glob::new(pattern).matches(text),
                    glob_match(pattern, text),
                    "{pattern} on {text}"
                );
            }
        }
        // Pathological input stays fast.
        let long = "a".repeat(10_000);
        assert!(!glob_match("*a*a*a*a*a*a*b", &long));
    }
}
