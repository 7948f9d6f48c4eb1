# syntax=docker/dockerfile:1.9
#
# moat: the HTTP server in a minimal, non-root, read-only-friendly image.
#
#   docker build -t moat:local .
#   docker run --rm --read-only --cap-drop ALL --security-opt no-new-privileges:true \
#     -e MOAT_HTTP__BEARER_TOKEN -v "$PWD:/workspace:ro" -p 127.0.0.1:8080:8080 moat:local
#
# Two stages, one Debian release (bookworm) throughout, so the binary and the
# C library it loads come from the same distribution:
#   builder  rust 1.95.0 (the version rust-toolchain.toml pins), `cargo build --release --locked`
#   runtime  distroless "cc" (glibc, libgcc, CA certificates, /etc/passwd; no shell, no package
#            manager) + moat. No git: moat reads repositories in-process and its workers can
#            execute no program.
# See docs/deploy/container.md for the choices, and for Landlock and seccomp in a container.
# To move to trixie, change both images together (rust:…-slim-trixie,
# gcr.io/distroless/cc-debian13).

ARG RUST_IMAGE=rust:1.95.0-slim-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/cc-debian12

# ---------------------------------------------------------------------------
FROM ${RUST_IMAGE} AS builder
WORKDIR /src
# The image's toolchain is the pinned one; naming it here keeps rustup from
# fetching the rustfmt/clippy components rust-toolchain.toml lists for
# developers (a release build needs neither). container.yml checks the two
# versions agree.
ENV RUSTUP_TOOLCHAIN=1.95.0 \
    CARGO_TERM_COLOR=never \
    CARGO_INCREMENTAL=0
COPY . .
# --locked: exactly Cargo.lock. The seccomp policies (sandbox/seccomp/*.json)
# are compiled into the binary here, by sandbox/build.rs. Debug line tables are
# stripped from the copy that ships (panics abort; nothing symbolises them in
# the container), which halves the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,target=/src/target,sharing=locked \
    cargo build --release --locked -p moat-broker --bin moat \
 && objcopy --strip-debug target/release/moat /usr/local/bin/moat \
 && /usr/local/bin/moat --version

# ---------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime

ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="moat" \
      org.opencontainers.image.description="Serves one code workspace read-only to a language model over MCP (Streamable HTTP); every tool request runs in a Landlock+seccomp-confined worker." \
      org.opencontainers.image.source="https://github.com/moat-mcp/moat" \
      org.opencontainers.image.documentation="https://github.com/moat-mcp/moat/blob/main/docs/deploy/container.md" \
      org.opencontainers.image.licenses="MIT OR Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"

COPY --from=builder /usr/local/bin/moat /usr/local/bin/moat

# The workspace is mounted here, read-only. moat writes nothing anywhere (no
# temporary files, no cache, no state), so the root filesystem can be
# read-only and no /tmp is needed.
ENV MOAT_SANDBOX__WORKSPACE=/workspace \
    MOAT_HTTP__HOST=0.0.0.0 \
    MOAT_HTTP__PORT=8080

# A fixed unprivileged uid/gid with no entry in /etc/passwd and no home:
# nothing in moat needs one.
USER 10001:10001
WORKDIR /
EXPOSE 8080

# No curl and no shell in the image: moat probes itself (GET /healthz on
# http.host:http.port, 0.0.0.0 probed on loopback). Exit 0 healthy, 1 not.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["moat", "healthcheck"]

# SIGTERM drains: in-flight requests finish (up to 30 s), then exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["moat"]
CMD ["serve", "--transport", "http"]
