//! Which language a file is in, decided by its suffix alone.
//!
//! The table holds the 23 common suffixes (compared lower-cased) and a few
//! less common but unambiguous spellings (`.mts`, `.cts`, `.cxx`, `.hh`,
//! `.hxx`, `.kts`, `.bash`). `project_overview` counts languages with the same table,
//! so both tools agree on what a "python file" is.

/// A source language `find_symbol` and `project_overview` recognise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// `.py`, `.pyi`.
    Python,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`.
    JavaScript,
    /// `.ts`, `.tsx`, `.mts`, `.cts`.
    TypeScript,
    /// `.go`.
    Go,
    /// `.rs`.
    Rust,
    /// `.rb`.
    Ruby,
    /// `.java`.
    Java,
    /// `.kt`, `.kts`.
    Kotlin,
    /// `.cs`.
    CSharp,
    /// `.php`.
    Php,
    /// `.swift`.
    Swift,
    /// `.c`, `.h`.
    C,
    /// `.cc`, `.cpp`, `.hpp`, `.cxx`, `.hh`, `.hxx`.
    Cpp,
    /// `.sh`, `.bash`.
    Shell,
    /// `.sql`.
    Sql,
}

/// Lower-cased suffix (without the dot) to language.
const SUFFIXES: &[(&str, Language)] = &[
    ("py", Language::Python),
    ("pyi", Language::Python),
    ("js", Language::JavaScript),
    ("jsx", Language::JavaScript),
    ("mjs", Language::JavaScript),
    ("cjs", Language::JavaScript),
    ("ts", Language::TypeScript),
    ("tsx", Language::TypeScript),
    ("mts", Language::TypeScript),
    ("cts", Language::TypeScript),
    ("go", Language::Go),
    ("rs", Language::Rust),
    ("rb", Language::Ruby),
    ("java", Language::Java),
    ("kt", Language::Kotlin),
    ("kts", Language::Kotlin),
    ("cs", Language::CSharp),
    ("php", Language::Php),
    ("swift", Language::Swift),
    ("c", Language::C),
    ("h", Language::C),
    ("cc", Language::Cpp),
    ("cpp", Language::Cpp),
    ("hpp", Language::Cpp),
    ("cxx", Language::Cpp),
    ("hh", Language::Cpp),
    ("hxx", Language::Cpp),
    ("sh", Language::Shell),
    ("bash", Language::Shell),
    ("sql", Language::Sql),
];

impl Language {
    /// Every language, in declaration order.
    #[cfg(test)]
    pub const ALL: [Language; 15] = [
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Go,
        Language::Rust,
        Language::Ruby,
        Language::Java,
        Language::Kotlin,
        Language::CSharp,
        Language::Php,
        Language::Swift,
        Language::C,
        Language::Cpp,
        Language::Shell,
        Language::Sql,
    ];

    /// The language of a file, from the suffix of its last path component
    /// (compared lower-cased), or `None` for a file that is not source.
    ///
    /// The suffix is the text after the last dot of the file name, where a
    /// name's leading dot does not count (`.py` alone is a hidden file, not
    /// Python) and a trailing dot means no suffix. Both `/` and `\` separate components.
    #[must_use]
    pub fn from_path(path: &str) -> Option<Language> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let dot = name.rfind('.')?;
        if dot == 0 {
            return None;
        }
        let suffix = &name[dot + 1..];
        // The longest suffix in the table is 5 bytes; anything longer cannot
        // match, so do not bother lower-casing it.
        if suffix.is_empty() || suffix.len() > 5 {
            return None;
        }
        let suffix = suffix.to_ascii_lowercase();
        SUFFIXES
            .iter()
            .find(|(known, _)| *known == suffix)
            .map(|&(_, language)| language)
    }

    /// The language's name as the tools report it (`"python"`, `"cpp"`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Go => "go",
            Language::Rust => "rust",
            Language::Ruby => "ruby",
            Language::Java => "java",
            Language::Kotlin => "kotlin",
            Language::CSharp => "csharp",
            Language::Php => "php",
            Language::Swift => "swift",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Shell => "shell",
            Language::Sql => "sql",
        }
    }

    /// Whether `find_symbol` parses this language (method `parsed`) rather
    /// than matching it with patterns.
    #[must_use]
    pub fn is_parsed(self) -> bool {
        matches!(
            self,
            Language::Python
                | Language::JavaScript
                | Language::TypeScript
                | Language::Go
                | Language::Rust
                | Language::Java
                | Language::C
                | Language::Cpp
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_suffixes_map_to_their_language_names() {
        let table = [
            (".py", "python"),
            (".pyi", "python"),
            (".js", "javascript"),
            (".jsx", "javascript"),
            (".mjs", "javascript"),
            (".cjs", "javascript"),
            (".ts", "typescript"),
            (".tsx", "typescript"),
            (".go", "go"),
            (".rs", "rust"),
            (".rb", "ruby"),
            (".java", "java"),
            (".kt", "kotlin"),
            (".cs", "csharp"),
            (".php", "php"),
            (".swift", "swift"),
            (".c", "c"),
            (".h", "c"),
            (".cc", "cpp"),
            (".cpp", "cpp"),
            (".hpp", "cpp"),
            (".sh", "shell"),
            (".sql", "sql"),
        ];
        for (suffix, name) in table {
            let path = format!("src/file{suffix}");
            assert_eq!(
                Language::from_path(&path).map(Language::name),
                Some(name),
                "{path}"
            );
        }
    }

    #[test]
    fn suffixes_are_compared_lower_cased() {
        assert_eq!(Language::from_path("Main.JAVA"), Some(Language::Java));
        assert_eq!(
            Language::from_path("x/Widget.TSX"),
            Some(Language::TypeScript)
        );
        assert_eq!(Language::from_path("a.Py"), Some(Language::Python));
    }

    #[test]
    fn added_suffixes_are_recognised() {
        assert_eq!(Language::from_path("a.mts"), Some(Language::TypeScript));
        assert_eq!(Language::from_path("a.hxx"), Some(Language::Cpp));
        assert_eq!(
            Language::from_path("build.gradle.kts"),
            Some(Language::Kotlin)
        );
        assert_eq!(Language::from_path("run.bash"), Some(Language::Shell));
    }

    #[test]
    fn files_without_a_known_suffix_are_not_source() {
        for path in [
            "README.md",
            "Makefile",
            ".py",
            "dir.py/file",
            "file.",
            "archive.tar.gz",
            "x.pyc",
            "weird.verylongsuffix",
            "",
        ] {
            assert_eq!(Language::from_path(path), None, "{path}");
        }
    }

    #[test]
    fn only_the_last_dot_counts() {
        assert_eq!(
            Language::from_path("jquery.min.js"),
            Some(Language::JavaScript)
        );
        assert_eq!(Language::from_path("a.d.ts"), Some(Language::TypeScript));
        assert_eq!(Language::from_path(".hidden.py"), Some(Language::Python));
    }

    #[test]
    fn all_lists_each_language_once_with_a_distinct_name() {
        let mut names: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 15);
        let parsed = Language::ALL.iter().filter(|l| l.is_parsed()).count();
        assert_eq!(parsed, 8);
    }
}
