#!/bin/sh
# Copy git, and the shared libraries it needs that a distroless "cc" image
# lacks, into DEST at their canonical paths:
#
#   scripts/collect-git.sh DEST [GIT]      (GIT defaults to /usr/bin/git)
#
# The Dockerfile runs it in a debian-slim stage and copies DEST over the
# distroless runtime image, which has glibc and the loader but no git;
# scripts/image-rootfs.sh runs it on the host to lay out the same tree. The
# C library itself (libc, libm, the loader, ...) is left out on purpose: git
# must use the runtime image's glibc, the same one moat uses, so the two never
# mix versions. Both stages use the same Debian release.
#
# Only `git log` and `git diff` run (as builtins of the main binary, with no
# system or global configuration, no pager, no helpers), so nothing from
# /usr/lib/git-core or /usr/share/git-core is needed. moat finds git on PATH
# at start-up, resolves its libraries itself (PT_INTERP, DT_NEEDED) and lets
# the Landlock domain read and execute exactly those files.
set -eu

dest=${1:?usage: collect-git.sh DEST [GIT]}
git=${2:-/usr/bin/git}

copy() {
    # $1: a file; copied (links resolved) under the canonical form of its
    # directory, keeping the name it is asked for by (a soname link).
    dir=$(realpath -e "$(dirname "$1")")
    mkdir -p "$dest$dir"
    cp -L "$1" "$dest$dir/$(basename "$1")"
    echo "collect-git: $dir/$(basename "$1")"
}

copy "$git"
ldd "$git" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
    case "$(basename "$lib")" in
        libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) ;;
        *) copy "$lib" ;;
    esac
done
