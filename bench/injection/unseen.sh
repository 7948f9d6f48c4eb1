#!/usr/bin/env bash
# Injection scoring on corpora it was not built with, in one run: detection
# per source on payloads planted one line per paragraph and wrapped at 72
# columns in eleven carriers, and false alarms per benign corpus, split into
# documentation and source; every table for the `tune` split and, apart,
# for the `held` split that is never looked at while tuning.
#
# Prepares (once, under $INJECTION_DATA, default /work/shared/data/injection;
# nothing of it is committed):
#   * positives (English ones: wamerican word list, apt-get): spikee and pyrit from PyPI (`pip download --no-deps`, the
#     wheels unpacked, nothing imported or run); BIPIA and PurpleLlama
#     (CyberSecEval) as git directories given in $BIPIA_GIT and
#     $PURPLELLAMA_GIT (clones of the public repositories);
#     bench/injection/sources.py reads them -> new-samples.json;
#   * benign: the Linux tree (Debian's linux-source, as bench/search.sh gets
#     it), the crates of the local cargo registry, source distributions of
#     PyPI packages and npm packages (their READMEs, CHANGELOGs and guides
#     are the documentation), listed by bench/injection/benign.py ->
#     benign.json;
#   * moat: `cargo build --release`, or $MOAT_BIN.
# Then bench/injection/unseen.py reads everything through `moat serve`.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$(dirname "$here")")
data=${INJECTION_DATA:-/work/shared/data/injection}
mkdir -p "$data/pkgs/wheels" "$data/pkgs/x" "$data/sdists" "$data/npm" "$data/trees/pypi" "$data/trees/npm"

if [ ! -d "$data/pkgs/x/spikee-0.9.2-py3-none-any" ]; then
    python3 -m pip download --quiet --no-deps -d "$data/pkgs/wheels" spikee==0.9.2 pyrit==1.1.0
    for w in "$data"/pkgs/wheels/*.whl; do
        python3 -m zipfile -e "$w" "$data/pkgs/x/$(basename "$w" .whl)"
    done
fi
: "${BIPIA_GIT:?a git directory of microsoft/BIPIA}"
: "${PURPLELLAMA_GIT:?a git directory of meta-llama/PurpleLlama}"
python3 "$here/sources.py" "$data/pkgs/x" "$BIPIA_GIT" "$PURPLELLAMA_GIT" > "$data/new-samples.json"

if [ ! -f "$data/linux/Makefile" ]; then
    tarball=$(ls /usr/src/linux-source-*.tar.* 2>/dev/null | sort -V | tail -n1 || true)
    if [ -z "$tarball" ]; then
        apt-get install -y --no-install-recommends linux-source
        tarball=$(ls /usr/src/linux-source-*.tar.* | sort -V | tail -n1)
    fi
    mkdir -p "$data/linux"
    tar -xf "$tarball" -C "$data/linux" --strip-components=1
fi
for p in requests flask click jinja2 werkzeug pytest attrs sphinx docutils setuptools black isort \
         coverage urllib3 certifi idna packaging pyyaml sqlalchemy alembic httpx rich typer fastapi \
         starlette celery kombu redis scrapy twisted paramiko cryptography pygments markdown mkdocs \
         babel sympy networkx beautifulsoup4 lxml pillow tornado aiohttp gunicorn uvicorn pydantic marshmallow; do
    ls "$data/sdists/$p"-* >/dev/null 2>&1 || ls "$data/sdists/${p//-/_}"-* >/dev/null 2>&1 || \
        python3 -m pip download --quiet --no-deps --no-binary :all: -d "$data/sdists" "$p" || true
done
for f in "$data"/sdists/*; do
    d="$data/trees/pypi/$(basename "$f" | sed 's/\.tar\.gz$//;s/\.zip$//')"
    [ -d "$d" ] && continue
    mkdir -p "$d"
    case "$f" in *.zip) python3 -m zipfile -e "$f" "$d" ;; *) tar -xzf "$f" -C "$d" ;; esac
done
(cd "$data/npm" && for p in express react lodash axios webpack typescript eslint prettier jest mocha chalk \
    commander yargs debug vue next vite rollup esbuild babel-loader @babel/core moment dayjs uuid ws \
    socket.io mongoose sequelize knex pg redis body-parser cors dotenv jsonwebtoken bcrypt nodemon pm2 \
    underscore async bluebird rxjs immer zod ajv semver glob minimatch; do
    ls "$(echo "$p" | tr -d @ | tr / -)"-*.tgz >/dev/null 2>&1 || npm pack --silent "$p" >/dev/null || true
done)
for f in "$data"/npm/*.tgz; do
    d="$data/trees/npm/$(basename "$f" .tgz)"
    [ -d "$d" ] || { mkdir -p "$d"; tar -xzf "$f" -C "$d"; }
done
registry=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -n1)
python3 "$here/benign.py" linux="$data/linux" crates="$registry" pypi="$data/trees/pypi" \
    npm="$data/trees/npm" > "$data/benign.json"

moat=${MOAT_BIN:-}
if [ -z "$moat" ]; then
    (cd "$repo" && cargo build --release --quiet -p moat-broker --bin moat)
    moat=$repo/target/release/moat
fi
rm -rf "$data/planted"
echo "machine   $(uname -srm); $(nproc) cpus; moat $moat"
exec python3 "$here/unseen.py" --moat "$moat" --samples "$data/new-samples.json" \
    --manifest "$data/benign.json" --work "$data/planted" --split "${SPLIT:-both}" \
    --misses "$data/misses.json" --alarms "$data/alarms.json"
