#!/usr/bin/env bash
# Builds the small bundle the flowshop GPU work needs on the GPU machine (it has CUDA but no
# Rust and no ../shared) into DIR (default gpu-bundle/): the release `mats`, the pfsp GPU test
# binary and Taillard's instances with their best-known table. On the GPU machine, from the
# repository root: bash DIR/run.sh [tests|bench|all] [BENCH ARGS...] (scripts/pfsp-gpu-run.sh), or
# bash DIR/igw.sh probe|final|vrf (scripts/pfsp-igw-run.sh, the ig-warp runs).
# Usage: scripts/pfsp-gpu-bundle.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-gpu-bundle}
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/tests"
cargo build --release --bin mats
cp target/release/mats "$bundle/bin/mats"
cargo test --release -p mats-solvers --test pfsp_gpu --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        print(m["executable"])
' | while read -r exe; do cp "$exe" "$bundle/tests/pfsp_gpu"; done
strip "$bundle"/bin/* "$bundle"/tests/* 2>/dev/null || true
shared=../shared/data/taillard-pfsp
if [ -d "$shared" ]; then
    mkdir -p "$bundle/taillard-pfsp"
    cp -r "$shared/bks.csv" "$shared/taillard" "$bundle/taillard-pfsp/"
    # VRF's largest, for ig-warp's run against the CPU (scripts/pfsp-igw-run.sh).
    cp "$shared/vrf/large/VFR800_60_1_Gap.txt" "$bundle/" 2>/dev/null || true
else
    echo "note: $shared not found; bench pfsp --quality cannot run on the GPU machine" >&2
fi
pwd > "$bundle/ORIGIN"
cp scripts/pfsp-gpu-run.sh "$bundle/run.sh"
cp scripts/pfsp-igw-run.sh "$bundle/igw.sh"
du -sh "$bundle"
