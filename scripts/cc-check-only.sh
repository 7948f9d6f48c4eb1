#!/usr/bin/env bash
# A stand-in C compiler for `cargo check` of targets this machine has no C
# toolchain for (x86_64-apple-darwin): it writes an empty object wherever one is
# asked for. `cargo check` type-checks all Rust code and never links, so the
# tree-sitter grammars' C sources only need to "compile", not to exist.
# Never use it for `cargo build`.
out=""
while (($#)); do
  case "$1" in
    -o) out="$2"; shift 2 ;;
    -o*) out="${1#-o}"; shift ;;
    -Fo*) out="${1#-Fo}"; shift ;;  # cc takes an unknown compiler for MSVC-style
    *) shift ;;
  esac
done
[[ -n "$out" ]] && : > "$out"
exit 0
