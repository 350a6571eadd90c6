#!/usr/bin/env bash
# Builds the bundle the HW/SW GPU work needs on the GPU machine (CUDA, no Rust) into DIR
# (default gpu-bundle-hwsw/, git-ignored): the release `mats` and the hwsw GPU test binaries.
# The graphs are generated there (the paper's generator), so no data travels. On the GPU
# machine, from the repository root: bash DIR/run.sh [tests|bench|all] [BENCH ARGS...]
# (scripts/hwsw-gpu-run.sh). With --tests-only the `mats` binary is left out.
# Usage: scripts/hwsw-gpu-bundle.sh [DIR] [--tests-only]
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-gpu-bundle-hwsw}
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/tests"
if [ "${2:-}" != --tests-only ]; then
    cargo build --release --bin mats
    cp target/release/mats "$bundle/bin/mats"
fi
for t in hwsw_gpu hwsw_gpu_host; do
    cargo test --release -p mats-solvers --test $t --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        print(m["executable"])
' | while read -r exe; do cp "$exe" "$bundle/tests/$t"; done
done
strip "$bundle"/bin/* "$bundle"/tests/* 2>/dev/null || true
cp scripts/hwsw-gpu-run.sh "$bundle/run.sh"
du -sh "$bundle"
