#!/usr/bin/env bash
# ARCHITECTURE.md's determinism invariant on the GPU machine: a seed and an iteration budget
# (no time limit) give the same answer however fast the GPU runs. Each case runs one `mats solve
# --iterations` alone, then again while a second mats keeps the same GPU busy (a time-limited
# solve of a large flowshop), so its kernels run slower; the two answers must be identical.
# The cases restart often (a short stall), so any launch length that followed the clock would
# move the restarts and change the answer.
#
#   MATS=dir/mats DATA=dir/data OUT=out scripts/gpu-determinism.sh
#
# DATA holds taillard-pfsp/ and qaplib/instances/ (tai60a). Exits 1 naming each case whose two
# answers differ, or that gave no answer; writes OUT/determinism.csv. LOAD_SETTLE: seconds the
# load runs before the second solve starts (default 3).
set -euo pipefail
: "${MATS:?MATS must name the mats binary}" "${DATA:?DATA must name the shared data folder}"
out=${OUT:-gpu-determinism}
mkdir -p "$out"
tai=$DATA/taillard-pfsp/taillard
csv=$out/determinism.csv
echo "case,alone,shared,same" > "$csv"

cases=(
    "ig-block|$tai/tai100_20.txt --index 1 --iterations 200 --restart-stall 2"
    "ig-warp|$tai/tai50_20.txt --index 1 --algo ig-warp --iterations 200 --restart-stall 2"
    "rots-block|$DATA/qaplib/instances/tai60a.dat --iterations 30000 --restart-stall 2"
)
# --json prints the solution over several lines: flatten, keep objective and solution.
answer() { tr -d ' \n' < "$1" | grep -o '"objective":[0-9]*\|"solution":\[[^]]*\]' | tr '\n' ' '; }
objective() { grep -o '"objective": *[0-9]*' "$1" | grep -o '[0-9]*$'; }

failed=0
for c in "${cases[@]}"; do
    name=${c%%|*}
    args=${c#*|}
    # shellcheck disable=SC2086
    "$MATS" solve $args --backend gpu --seed 1 --json > "$out/$name-alone.json" 2> "$out/$name-alone.log" || true
    "$MATS" solve "$tai/tai200_20.txt" --index 1 --backend gpu --time-limit 30 > /dev/null 2>&1 &
    load=$!
    sleep "${LOAD_SETTLE:-3}" # let the load's kernels start
    # shellcheck disable=SC2086
    "$MATS" solve $args --backend gpu --seed 1 --json > "$out/$name-shared.json" 2> "$out/$name-shared.log" || true
    kill "$load" 2> /dev/null || true
    wait "$load" 2> /dev/null || true
    alone=$(objective "$out/$name-alone.json" || true)
    shared=$(objective "$out/$name-shared.json" || true)
    same=no
    [ -n "$alone" ] && [ "$(answer "$out/$name-alone.json")" = "$(answer "$out/$name-shared.json")" ] && same=yes
    echo "$name,$alone,$shared,$same" | tee -a "$csv"
    if [ -z "$alone" ] || [ -z "$shared" ]; then
        echo "NO ANSWER: $name ($(tail -1 "$out/$name-alone.log" "$out/$name-shared.log" | tr '\n' ' '))" >&2
        failed=1
    elif [ $same = no ]; then
        echo "DIFFERENT: $name alone and with the GPU shared" >&2
        failed=1
    fi
done
exit $failed
