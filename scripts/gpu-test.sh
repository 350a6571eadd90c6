#!/usr/bin/env bash
# Builds everything the GPU machine needs (it has CUDA but no Rust) into gpu-bundle/:
# the release `mats` binary, every workspace test binary, and the runner scripts/gpu-run.sh.
# Then prints the device command. Usage: scripts/gpu-test.sh [TEST-GLOB...]
# With globs (test target names, e.g. 'gpu' 'tsp_gpu*') only those test binaries are bundled,
# which keeps the bundle under the device tool's 64 MiB carry limit (the full one is ~80 MB).
set -euo pipefail
cd "$(dirname "$0")/.."

bundle=gpu-bundle
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/tests"

cargo build --release --bin mats
cp target/release/mats "$bundle/bin/mats"
# Diagnostic: prints NVRTC's options and log for one variant (compile_log SOURCE [FLAG...]).
cargo build --release -p mats-kernels --example compile_log
cp target/release/examples/compile_log "$bundle/bin/compile_log"

# Test binaries, as cargo reports them (one per test target).
cargo test --release --workspace --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        print(m["target"]["name"] + "\t" + m["executable"])
' | sort -u | while IFS=$'\t' read -r name exe; do
        if [ $# -gt 0 ]; then
            wanted=0
            for g in "$@"; do
                # shellcheck disable=SC2254
                case $name in $g) wanted=1 ;; esac
            done
            [ $wanted = 1 ] || continue
        fi
        cp "$exe" "$bundle/tests/$name-$(basename "$exe" | sed 's/.*-//')"
    done
strip "$bundle"/bin/* "$bundle"/tests/* 2>/dev/null || true

# QAPLIB instances for `mats bench qap --quality` (the GPU machine has no ../shared).
shared=../shared/data/qaplib/instances
if [ -d "$shared" ]; then
    mkdir -p "$bundle/qaplib"
    for name in tai20a tai25a tai30a tai35a tai40a tai50a tai60a tai80a tai100a; do
        cp "$shared/$name.dat" "$bundle/qaplib/"
    done
else
    echo "note: $shared not found; bench qap --quality will be skipped on the GPU machine" >&2
fi

# The data the GPU and figure tests read from ../shared/data (Taillard's flowshop files, all of
# QAPLIB, the TSPLIB instances of the Ant System figure), linked back beside the checkout by
# run.sh.
if [ -d ../shared/data ]; then
    mkdir -p "$bundle/shared/data/tsplib/instances"
    cp -r ../shared/data/taillard-pfsp "$bundle/shared/data/"
    # qap_gpu reads all of QAPLIB (every instance on the GPU; tai256c past shared memory).
    mkdir -p "$bundle/shared/data/qaplib"
    cp -r ../shared/data/qaplib/instances ../shared/data/qaplib/bks.csv "$bundle/shared/data/qaplib/"
    cp ../shared/data/tsplib/bks.csv "$bundle/shared/data/tsplib/"
    # pla33810: the island figures (scripts/islands-figures.sh); pcb3038 to usa13509 and
    # rl5915 to pla7397: the TSP sets of scripts/adapt-study.sh.
    for name in d198 pcb442 rat783 pr2392 rl11849 pla33810 pcb3038 fl3795 fnl4461 brd14051 \
        d15112 d1291 fl1400 d1655 usa13509 rl5915 rl5934 pla7397; do
        cp "../shared/data/tsplib/instances/$name.tsp" "$bundle/shared/data/tsplib/instances/"
    done
fi

# Test binaries carry this checkout's absolute paths (CARGO_MANIFEST_DIR, CARGO_BIN_EXE_mats);
# the runner recreates them on the GPU machine.
pwd > "$bundle/ORIGIN"
cp scripts/gpu-run.sh "$bundle/run.sh"

du -sh "$bundle"
cat <<TXT

Bundle ready. On the GPU machine (device tool), run:
    command: bash gpu-bundle/run.sh
    carry:   ["gpu-bundle"]
Results (summary, test log, devices, bench figures) come back under \$OUT.
TXT
