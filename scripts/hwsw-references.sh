#!/usr/bin/env bash
# Reference values (best-known costs) of the HW/SW graphs campaigns/hwsw-synthetic.toml
# generates: `mats instance reference` runs a long 1-flip and swap tabu search on each graph
# (solvers/src/hwsw/reference.rs; best of SEEDS seeds x ITERATIONS iterations) and writes the
# table that mats embeds (data/hwsw/synthetic-bks.csv). Rebuild mats afterwards so the
# embedded table is the new one. This starts the table afresh; to lower it with GPU answers
# instead (keeping every value nothing beats), see scripts/hwsw-gpu-answers.sh.
#
#   bash scripts/hwsw-references.sh [SEEDS] [ITERATIONS]      # defaults: 8 500000
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-8}
iterations=${2:-500000}
cargo build --release --bin mats
target/release/mats instance reference --campaign campaigns/hwsw-synthetic.toml \
    --seeds "$seeds" --iterations "$iterations" -o data/hwsw/synthetic-bks.csv
cargo build --release --bin mats
