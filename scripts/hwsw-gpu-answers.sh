#!/usr/bin/env bash
# GPU answers for the reference table of campaigns/hwsw-synthetic.toml's 24 graphs: on the GPU
# machine, generates each graph (named as the campaign names it) and runs `mats solve --backend
# gpu --json` on it, seed 1 with the defaults and seed 2 with --adapt, writing one report per
# run to $OUT/answers/. Then, where mats was built, fold them into the table (each solution is
# re-scored there; the earlier table's value stands unless an answer is lower):
#
#   MATS=gpu-bundle/bin/mats OUT=... bash scripts/hwsw-gpu-answers.sh    # GPU machine, ~7 min
#   mats instance reference --campaign campaigns/hwsw-synthetic.toml --seeds 0 \
#       --previous data/hwsw/synthetic-bks.csv --answers OUT/answers -o data/hwsw/synthetic-bks.csv
#
# then rebuild mats (it embeds the table). SMALL_S and LARGE_S set the seconds per run on the
# 300- and 2000-node graphs (defaults 5 and 10).
set -euo pipefail
mats=${MATS:-target/release/mats}
out=${OUT:-gpu-results}
small_s=${SMALL_S:-5}
large_s=${LARGE_S:-10}
mkdir -p "$out/answers" "$out/graphs"
export CUDA_CACHE_DISABLE=1
for size in 300x600 2000x6000; do
    nodes=${size%x*}
    edges=${size#*x}
    seconds=$small_s
    [ "$nodes" = 2000 ] && seconds=$large_s
    for ccr in 0.1 1 10; do
        for level in low high; do
            for graph_seed in 1 2; do
                name="hwsw-${nodes}n-${edges}e-ccr${ccr}-${level}-s${graph_seed}"
                graph="$out/graphs/$name.hwsw"
                "$mats" instance generate hwsw --nodes "$nodes" --edges "$edges" --ccr "$ccr" \
                    --r-level "$level" --seed "$graph_seed" -o "$graph"
                for run in "1" "2 --adapt"; do
                    set -- $run
                    seed=$1
                    shift
                    "$mats" solve "$graph" --backend gpu --time-limit "$seconds" --seed "$seed" \
                        "$@" --json > "$out/answers/$name-r$seed.json" 2> "$out/answers/$name-r$seed.log"
                    echo "$name-r$seed,$(python3 "$(dirname "$0")/json-fields.py" algorithm \
                        objective best_known gap_percent < "$out/answers/$name-r$seed.json")"
                done
            done
        done
    done
done
