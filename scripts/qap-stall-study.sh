#!/usr/bin/env bash
# Issue 25's restart-stall study on the GPU machine (docs/qap-gpu.md, "Crossover restarts run
# more often"): rots-block at the default and at other stalls, gap per seed in one CSV.
#
#   MATS=dir/mats QAPLIB=dir/instances OUT=out scripts/qap-stall-study.sh [tai150b|tai256c|taia|holdout]
#
# tai150b: 10 s, seeds 1-5, stall 3 (the default with crossover), 5 and 2 (~3 min).
# tai256c: 60 s, seeds 1-5, the default (~5 min).
# taia: tai60a/80a/100a, 10 s, seeds 1-2, random swaps (the default there) against crossover at
# stalls 3 and 2 (~3 min).
# holdout: the default against a stall of 5, paired by seed, where the choice of 3 never looked:
# tai150b on seeds 6-10 and tai256c at 10 s (seeds 1-5), tai80b and tai100b at 0.5 s (~5 min).
# default5: issue 25's 10 s figures: the default on tai60a, tai80a, tai100a and tai150b, seeds
# 1-5 (~3.5 min).
set -euo pipefail
: "${MATS:?MATS must name the mats binary}" "${QAPLIB:?QAPLIB must name the QAPLIB .dat folder}"
out=${OUT:-qap-stall-study}
what=${1:-tai150b}
mkdir -p "$out"
csv=$out/$what.csv
echo "flags,instance,seed,seconds,objective,gap_percent" > "$csv"

run() { # SECONDS INSTANCE SEED FLAGS...
    local secs=$1 name=$2 seed=$3
    shift 3
    local j o g
    j=$("$MATS" solve "$QAPLIB/$name.dat" --backend gpu --time-limit "$secs" --seed "$seed" "$@" --json)
    o=$(echo "$j" | grep -o '"objective": *[0-9]*' | grep -o '[0-9]*$')
    g=$(echo "$j" | grep -o '"gap_percent": *[0-9.e-]*' | sed 's/.*: *//')
    echo "${*:-default},$name,$seed,$secs,$o,$g" | tee -a "$csv"
}
warm() { for name in "$@"; do "$MATS" solve "$QAPLIB/$name.dat" --backend gpu --iterations 1 > /dev/null; done; }

case $what in
tai150b)
    warm tai150b
    for flags in "" "--restart-stall 5" "--restart-stall 2"; do
        # shellcheck disable=SC2086
        for seed in 1 2 3 4 5; do run 10 tai150b "$seed" $flags; done
    done
    ;;
tai256c)
    warm tai256c
    for seed in 1 2 3 4 5; do run 60 tai256c "$seed"; done
    ;;
taia)
    warm tai60a tai80a tai100a
    for flags in "" "--crossover on" "--crossover on --restart-stall 2"; do
        for name in tai60a tai80a tai100a; do
            # shellcheck disable=SC2086
            for seed in 1 2; do run 10 "$name" "$seed" $flags; done
        done
    done
    ;;
holdout)
    warm tai150b tai256c tai80b tai100b
    for flags in "" "--restart-stall 5"; do
        # shellcheck disable=SC2086
        for seed in 6 7 8 9 10; do run 10 tai150b "$seed" $flags; done
        # shellcheck disable=SC2086
        for seed in 1 2 3 4 5; do run 10 tai256c "$seed" $flags; done
        for name in tai80b tai100b; do
            # shellcheck disable=SC2086
            for seed in 1 2 3 4 5; do run 0.5 "$name" "$seed" $flags; done
        done
    done
    ;;
default5)
    warm tai60a tai80a tai100a tai150b
    for name in tai60a tai80a tai100a tai150b; do
        for seed in 1 2 3 4 5; do run 10 "$name" "$seed"; done
    done
    ;;
*)
    echo "unknown study $what (tai150b, tai256c, taia, holdout, default5)" >&2
    exit 2
    ;;
esac
