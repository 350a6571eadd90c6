#!/usr/bin/env bash
# Reference values (best-known costs) of the HW/SW graphs campaigns/hwsw-synthetic.toml
# generates: `mats instance reference` runs a long 1-flip and swap tabu search on each graph
# (solvers/src/hwsw/reference.rs; best of SEEDS seeds x ITERATIONS iterations) and writes the
# table that mats embeds (data/hwsw/synthetic-bks.csv). Rebuild mats afterwards so the
# embedded table is the new one. The current table is the search's --previous, so a value
# found earlier (by a longer search or a re-scored GPU answer, scripts/hwsw-gpu-answers.sh)
# is kept unless the new search goes lower; FRESH=1 starts the table afresh.
#
#   bash scripts/hwsw-references.sh [SEEDS] [ITERATIONS]      # defaults: 8 500000
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-8}
iterations=${2:-500000}
cargo build --release --bin mats
table=data/hwsw/synthetic-bks.csv
previous=()
[ "${FRESH:-0}" = 1 ] || [ ! -e "$table" ] || previous=(--previous "$table")
target/release/mats instance reference --campaign campaigns/hwsw-synthetic.toml \
    --seeds "$seeds" --iterations "$iterations" "${previous[@]}" -o "$table"
cargo build --release --bin mats
