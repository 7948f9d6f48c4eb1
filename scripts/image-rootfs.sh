#!/usr/bin/env bash
# Check the container image's runtime assumptions without Docker: lay out the
# image's root filesystem the way the Dockerfile does (distroless-cc-style
# glibc, the stripped release binary, no git; no
# shell, no package manager), then run it the way docker-compose.yml does:
#
#   - its own mount and PID namespaces, moat as PID 1;
#   - the root filesystem read-only, no writable /tmp, a minimal /dev;
#   - the workspace bind-mounted read-only;
#   - uid/gid 10001, no capabilities, no_new_privs;
#
# and run scripts/container-smoke.sh's HTTP checks against it, plus
# `moat healthcheck` and `moat doctor` inside it. Linux only, as root (it
# mounts), with the Debian release the Dockerfile uses (glibc comes from this
# host; git here only makes the test repository). The image itself is built and tested by
# .github/workflows/container.yml; this is the part that runs anywhere.
#
#   scripts/image-rootfs.sh [PORT]      (default 18080)
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${1:-18080}
[[ $(id -u) == 0 ]] || { echo "image-rootfs: run as root (it creates namespaces and mounts)" >&2; exit 2; }
for tool in unshare nsenter curl jq git objcopy; do
    command -v "$tool" >/dev/null || { echo "image-rootfs: $tool is needed" >&2; exit 2; }
done

work=$(mktemp -d /tmp/moat-rootfs.XXXXXX)
root="$work/rootfs"
server_pid=
cleanup() {
    if [[ -n $server_pid ]]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n==> %s\n' "$*"; }

step "cargo build --release --locked -p moat-broker --bin moat (the Dockerfile's command)"
cargo build --release --locked -p moat-broker --bin moat

step "root filesystem in $root"
mkdir -p "$root"/{usr/local/bin,etc,proc,dev,workspace,tmp,lib/x86_64-linux-gnu,lib64}
objcopy --strip-debug target/release/moat "$root/usr/local/bin/moat"
# What a distroless "cc" image provides that moat and git use: glibc and the
# loader (in /lib, not merged into /usr, as there), libgcc_s, and /etc/passwd.
for lib in libc.so.6 libm.so.6 libgcc_s.so.1 ld-linux-x86-64.so.2; do
    cp -L "/lib/x86_64-linux-gnu/$lib" "$root/lib/x86_64-linux-gnu/$lib"
done
ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root/lib64/ld-linux-x86-64.so.2"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > "$root/etc/group"
chmod 1777 "$root/tmp"
# Docker's minimal /dev: the nodes are bind targets.
for dev in null zero random urandom full; do touch "$root/dev/$dev"; done
for sh in bin/sh bin/bash usr/bin/sh; do
    [[ ! -e $root/$sh ]] || { echo "image-rootfs: a shell in the image: $sh" >&2; exit 1; }
done
find "$root" -type f -o -type l | sed "s|^$root||" | sort
mb() { du -s --apparent-size --block-size=1 "$@" | awk '{s += $1} END {printf "%.1f MB", s / 1e6}'; }
echo "size: $(mb "$root") in all; moat $(mb "$root/usr/local/bin/moat"), glibc and loader $(mb "$root"/lib/x86_64-linux-gnu/{libc.so.6,libm.so.6,libgcc_s.so.1,ld-linux-x86-64.so.2})"

step "fixture workspace (scripts/container-smoke.sh workspace)"
bash scripts/container-smoke.sh workspace "$work/ws"
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')

# PID 1 of the new PID namespace: mount, then become moat (uid 10001, no
# capabilities after the uid change, no_new_privs, chrooted by unshare --root).
cat > "$work/init.sh" <<EOF
set -eu
mount --make-rprivate /
mount --bind "$root" "$root"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
for dev in null zero random urandom full; do mount --bind "/dev/\$dev" "$root/dev/\$dev"; done
mount --bind -o ro "$work/ws" "$root/workspace"
mount -o remount,bind,ro "$root"
exec setpriv --no-new-privs unshare --root="$root" --wd=/ --setgid 10001 --setuid 10001 "\$@"
EOF

moat_env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    MOAT_ENVIRONMENT=production MOAT_SANDBOX__WORKSPACE=/workspace
    MOAT_HTTP__HOST=0.0.0.0 MOAT_HTTP__PORT="$PORT" MOAT_HTTP__BEARER_TOKEN="$token"
    MOAT_OBSERVABILITY__LOG_LEVEL=info)

step "moat serve --transport http as PID 1, read-only root, uid 10001"
"${moat_env[@]}" unshare --mount --pid --fork --kill-child \
    sh "$work/init.sh" /usr/local/bin/moat serve --transport http 2>"$work/stderr.log" &
server_pid=$!
for _ in $(seq 1 100); do
    curl -fsS --max-time 1 "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
curl -fsS --max-time 1 "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$work/stderr.log"; exit 1; }
# unshare --fork's child: sh init.sh, which execs into setpriv, unshare, moat.
broker=$(pgrep -P "$server_pid" | head -n1)
[[ $(cat "/proc/$broker/comm") == moat ]] || { echo "FAIL: pid $broker is $(cat "/proc/$broker/comm")"; exit 1; }

# Inside the namespaces, as the server's user: the same view the container has.
inside() {
    "${moat_env[@]}" nsenter --target "$broker" --mount --pid \
        setpriv --no-new-privs unshare --root="$root" --wd=/ --setgid 10001 --setuid 10001 "$@"
}

step "processes"
for pid in "$broker" $(pgrep -P "$broker"); do
    printf '%-8s %-40s %s\n' "$pid" "$(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-40)" \
        "$(grep -E '^(Uid|Gid|CapEff|NoNewPrivs|Seccomp):' "/proc/$pid/status" | tr -s '\t\n' ' ')"
    grep -Eq '^Uid:\s+10001\s+10001\s+10001\s+10001' "/proc/$pid/status" || { echo "FAIL: pid $pid is not uid 10001"; exit 1; }
    grep -Eq '^CapEff:\s+0+$' "/proc/$pid/status" || { echo "FAIL: pid $pid has capabilities"; exit 1; }
done
echo "ok: broker and workers run as uid 10001 with no capabilities"
grep -q 'NSpid:.*\b1$' "/proc/$broker/status" && echo "ok: moat is PID 1 of its namespace"

step "moat healthcheck / --ready (the image's HEALTHCHECK)"
inside /usr/local/bin/moat healthcheck
inside /usr/local/bin/moat healthcheck --ready

step "moat doctor --transport http"
inside /usr/local/bin/moat doctor --transport http | tee "$work/doctor.txt"
grep -Eq '^worker +started and confined' "$work/doctor.txt"

step "HTTP checks (scripts/container-smoke.sh http)"
bash scripts/container-smoke.sh http "http://127.0.0.1:$PORT" "$token"

step "SIGTERM"
kill -TERM "$broker"
status=0
wait "$server_pid" || status=$?
echo "exit status $status"
server_pid=
grep -E '"(http.draining|http.stopped)"' "$work/stderr.log" | cut -c1-160 || true
if grep -Ei 'read-only|EROFS|permission denied' "$work/stderr.log"; then
    echo "FAIL: a write was attempted"; exit 1
fi
[[ $status == 0 ]] || { cat "$work/stderr.log"; exit 1; }
echo
echo "image-rootfs: all checks passed"
