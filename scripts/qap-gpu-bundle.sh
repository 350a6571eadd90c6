#!/usr/bin/env bash
# Builds gpu-bundle-qap/ for scripts/qap-gpu-run.sh (issue 25: layouts, int16 matrices, all of
# QAPLIB): the release `mats`, the qap_gpu test binary, QAPLIB with bks.csv, the runner.
# Usage: scripts/qap-gpu-bundle.sh [DEST]   (DEST: default gpu-bundle-qap in this checkout;
# a helper worktree copies it into the checkout the device tool sends).
# Then on the GPU machine: bash gpu-bundle-qap/run.sh   (carry ["gpu-bundle-qap"]).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-gpu-bundle-qap}
cargo build --release --bin mats
exe=$(cargo test --release -p mats-solvers --test qap_gpu --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "qap_gpu":
        print(m["executable"])')
rm -rf "$dest"
mkdir -p "$dest/qaplib"
cp target/release/mats "$dest/mats"
cp "$exe" "$dest/qap_gpu"
strip "$dest/mats" "$dest/qap_gpu"
cp -r ../shared/data/qaplib/instances ../shared/data/qaplib/bks.csv "$dest/qaplib/"
# The test binary reads this checkout's paths (CARGO_MANIFEST_DIR); the runner recreates them.
pwd > "$dest/ORIGIN"
cp scripts/qap-gpu-run.sh "$dest/run.sh"
du -sh "$dest"
