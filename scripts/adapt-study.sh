#!/usr/bin/env bash
# Issue 28, item 5: `mats solve --backend gpu --adapt` against the default on five instances per
# family that no campaign names, paired by seed, at a 10 s limit. Runs on the GPU machine from
# the repository root after scripts/gpu-test.sh (or a bundle with bin/mats and shared/data) is
# there. Usage: bash scripts/adapt-study.sh FAMILY [SECONDS] [SEEDS]
#   FAMILY: qap | pfsp | hwsw (one family is 5 instances x SEEDS x 2 runs x SECONDS: 300 s at
#   the defaults, so one device call holds one family); hwsw-cases: one 2,000-node graph of
#   each other CCR x R case than hwsw's (CCR 1, R low); hwsw-short: five graphs of CCR 0.1,
#   R high, where 10 s is short; pfsp-large: 100 x 20 to 500 x 20;
#   pfsp-vrf: VRF's 60-machine classes, n = 100-500; tsp: five TSPLIB instances of 3,038 to
#   15,112 cities (the focused colony races its ants' numbers of new edges); tsp-clustered:
#   the five planar TSPLIB instances of 1,000+ cities whose layout is clustered (for
#   FLAGS='--lists nearest': the default's quadrant lists against nearest ones);
#   qap-tuned, pfsp-tuned, hwsw-tuned: the issue's other check, `--adapt` against a tuned
#   bundle on the class it was tuned for; TUNED names the export and both modes run
#   `--tuned $TUNED`: qap-tuned, campaigns/qap-power-cap.toml (class tai-a: tai35a, tai60a,
#   holdout tai50a); pfsp-tuned, campaigns/pfsp-power-cap.toml (taillard-20: ta051, ta081,
#   holdout ta052); hwsw-tuned, class hwsw:ccr=1,r=low,size=large of
#   campaigns/hwsw-synthetic.toml (`mats tune ... --shard 7/12`: its graph of seed 1, holdout
#   seed 2); tsp-tuned: the instances of campaigns/tsp-large-gpu.toml (rl5915, rl5934, pla7397,
#   holdout rl11849), whose export held the defaults (docs/tsp-gpu.md), so without TUNED
#   both modes run the defaults.
# Prints per instance the default's and --adapt's mean objective, the paired difference
# (adapt - default) with its standard error, and whether --adapt is lower by more than two
# standard errors (the issue's criterion); raw runs go to $OUT/adapt-FAMILY.csv, each run's
# --json answer to $OUT/runs-FAMILY/.
# ONLY='NAME ...' runs only those instances of the set.
# FLAGS replaces --adapt by other flags for the compared mode (e.g. FLAGS='--restart-from own'
# measures a candidate default the same way; the raw runs then go to adapt-FAMILY-LABEL.csv,
# LABEL from the environment, default "flags").
set -u
family=${1:?usage: adapt-study.sh qap|pfsp|pfsp-large|pfsp-vrf|hwsw|hwsw-cases|hwsw-short|tsp|tsp-clustered|qap-tuned|pfsp-tuned|hwsw-tuned|tsp-tuned [SECONDS] [SEEDS]}
seconds=${2:-10}
seeds=${3:-3}
root=$PWD
bundle=$root/gpu-bundle
mats=$bundle/bin/mats
[ -x "$mats" ] || mats=$root/target/release/mats
data=$bundle/shared/data
[ -d "$data" ] || data=$root/../shared/data
out=${OUT:-$root/gpu-results}
mkdir -p "$out"
flags_b=${FLAGS:---adapt}
label=$family
[ "$flags_b" = --adapt ] || label=$family-${LABEL:-flags}
csv=$out/adapt-$label.csv
echo "instance,seed,mode,objective,gap_percent,seconds,adaptation" > "$csv"
export CUDA_CACHE_DISABLE=1 MATS_CACHE_DIR=${MATS_CACHE_DIR:-/tmp/mats-cache}

# The instances DIR/NAME.EXT of a tuned class, each run with `--tuned $TUNED`.
tuned_files() {
    local dir=$1 ext=$2 name
    shift 2
    instances=()
    for name in "$@"; do
        instances+=("$dir/$name.$ext|$name|--tuned $TUNED")
    done
}

# A generated graph of 2,000 nodes and 6,000 edges: FILE CCR R-LEVEL SEED NAME [FLAGS].
add_graph() {
    "$mats" instance generate hwsw --nodes 2000 --edges 6000 --ccr "$2" --r-level "$3" \
        --seed "$4" -o "$1" > /dev/null || exit 1
    instances+=("$1|$5|${6:-}")
}

case $family in
    qap)
        # sko100a and tai100b reach the best known in 10 s either way (H100): nothing to show.
        instances=()
        for name in tai80a tai100a tai150b tho150 tai256c; do
            instances+=("$data/qaplib/instances/$name.dat|$name|")
        done ;;
    qap-tuned)
        : "${TUNED:?qap-tuned needs TUNED, the export folder of campaigns/qap-power-cap.toml}"
        tuned_files "$data/qaplib/instances" dat tai35a tai60a tai50a ;;
    pfsp-tuned)
        : "${TUNED:?pfsp-tuned needs TUNED, the export folder of campaigns/pfsp-power-cap.toml}"
        tuned_files "$root/data/taillard" txt ta051 ta081 ta052 ;;
    hwsw-tuned)
        : "${TUNED:?hwsw-tuned needs TUNED, the export of class hwsw:ccr=1,r=low,size=large of campaigns/hwsw-synthetic.toml}"
        instances=()
        # The campaign's generator entries: the same graphs byte for byte.
        for s in 1 2; do
            add_graph "$out/tuned-g$s.hwsw" 1 low "$s" "g2000-ccr1-low-s$s" "--tuned $TUNED"
        done ;;
    tsp-tuned)
        instances=()
        for name in rl5915 rl5934 pla7397 rl11849; do
            instances+=("$data/tsplib/instances/$name.tsp|$name|${TUNED:+--tuned $TUNED}")
        done ;;
    pfsp)
        t=$data/taillard-pfsp/taillard
        # Classes where ten seconds leave a gap (100x10 and 200x10 reach the best known).
        instances=("$t/tai50_10.txt|ta043|--index 3" "$t/tai50_20.txt|ta053|--index 3"
            "$t/tai50_20.txt|ta058|--index 8" "$t/tai100_20.txt|ta083|--index 3"
            "$t/tai200_20.txt|ta104|--index 4") ;;
    pfsp-large)
        # Sizes where 10 s from the beam's start leaves the walks room (the pfsp set's
        # instances end at the same makespan in both modes since the beam start, 2026-11-28).
        t=$data/taillard-pfsp/taillard
        # None of them is named by a campaign (ta081, ta082, ta101-103 are).
        instances=("$t/tai100_20.txt|ta084|--index 4" "$t/tai200_20.txt|ta105|--index 5"
            "$t/tai200_20.txt|ta106|--index 6" "$t/tai500_20.txt|ta111|--index 1"
            "$t/tai500_20.txt|ta112|--index 2") ;;
    pfsp-vrf)
        # Taillard's instances end at the same makespan in both modes even at 500 x 20 (the
        # beam's start is within 0.03% there, 2026-11-28); VRF's 60-machine classes leave more.
        # Instance 1 of the 60-machine classes of n = 100-500 (no campaign names VRF).
        v=$data/taillard-pfsp/vrf/large
        instances=()
        for n in 100 200 300 400 500; do
            instances+=("$v/VFR${n}_60_1_Gap.txt|VFR${n}_60_1|")
        done ;;
    hwsw)
        instances=()
        for s in 11 12 13 14 15; do
            add_graph "$out/adapt-g$s.hwsw" 1 low "$s" "g2000-s$s"
        done ;;
    hwsw-cases)
        # The other five CCR x R cases at the same size (hwsw: CCR 1, R low), one graph each.
        instances=()
        for c in "0.1 low" "0.1 high" "1 high" "10 low" "10 high"; do
            read -r ccr level <<< "$c"
            add_graph "$out/adapt-c$ccr-$level.hwsw" "$ccr" "$level" 21 "ccr$ccr-$level"
        done ;;
    hwsw-short)
        # CCR 0.1, R high: the case where 10 s is short for 2,000 nodes (the runs of
        # scripts/hwsw-gpu-answers.sh on its two campaign graphs differed by 0.1-0.8% between
        # seeds); five fresh graphs, chosen before their first run.
        instances=()
        for s in 11 12 13 14 15; do
            add_graph "$out/adapt-h$s.hwsw" 0.1 high "$s" "g2000-ccr0.1-high-s$s"
        done ;;
    tsp)
        # Sizes where 10 s leave the colony room (pr2392 reaches 0.15%, rl11849 0.19% at 10 s,
        # docs/tsp-gpu.md); no campaign names these five (chosen before their first run).
        instances=()
        for name in pcb3038 fl3795 fnl4461 brd14051 d15112; do
            instances+=("$data/tsplib/instances/$name.tsp|$name|")
        done ;;
    tsp-clustered)
        # `mats instance info` says layout=clustered for these (and for smaller or GEO ones).
        instances=()
        for name in d1291 fl1400 d1655 fl3795 usa13509; do
            instances+=("$data/tsplib/instances/$name.tsp|$name|")
        done ;;
    *) echo "unknown family $family (qap, pfsp, pfsp-large, pfsp-vrf, hwsw, hwsw-cases, hwsw-short, tsp, tsp-clustered, qap-tuned, pfsp-tuned, hwsw-tuned, tsp-tuned)" >&2; exit 2 ;;
esac

for entry in "${instances[@]}"; do
    IFS='|' read -r path name extra <<< "$entry"
    # ONLY="a b" re-runs some of the set's instances (the others are skipped).
    if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then
        continue
    fi
    # Compile the instance's kernels once untimed: otherwise the first run alone pays the
    # NVRTC compile out of its time limit (both modes run the same kernels).
    # shellcheck disable=SC2086
    timeout 60 "$mats" solve "$path" $extra --backend gpu --time-limit 1 --seed 99 > /dev/null \
        2>> "$out/adapt-$label.err"
    for seed in $(seq 1 "$seeds"); do
        for mode in default adapt; do
            flags=()
            # shellcheck disable=SC2206
            [ "$mode" = adapt ] && flags=($flags_b)
            # shellcheck disable=SC2086
            json=$(timeout $((seconds * 3 + 30)) "$mats" solve "$path" $extra --backend gpu \
                --time-limit "$seconds" --seed "$seed" --json "${flags[@]}" 2>> "$out/adapt-$label.err")
            # The race's end state (arms and their blocks) is the last, quoted column.
            line=$(printf '%s\n' "$json" | python3 "$root/scripts/json-fields.py" objective \
                gap_percent seconds gpu.adaptation)
            echo "$name,$seed,$mode,$line" >> "$csv"
            # The whole answer (its permutation or partition), for a record worth keeping.
            mkdir -p "$out/runs-$label"
            printf '%s\n' "$json" > "$out/runs-$label/$name-$seed-$mode.json"
        done
    done
done

echo "compared mode: $flags_b"
python3 - "$csv" "$flags_b" <<'EOF'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    runs = by.setdefault(r["instance"], {}).setdefault(int(r["seed"]), {})
    if r["objective"]:
        runs[r["mode"]] = int(r["objective"])
wins = 0
print(f"{'instance':12s} {'default':>14s} {'adapt':>14s} {'adapt - default':>18s} {'2 SE':>10s}  verdict")
for name, seeds in by.items():
    pairs = [(s["default"], s["adapt"]) for s in seeds.values() if "default" in s and "adapt" in s]
    if not pairs:
        print(f"{name:12s} no complete pair (see the .err file)")
        continue
    d = [a - b for b, a in pairs]
    mean = sum(d) / len(d)
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1) / len(d)) if len(d) > 1 else float("nan")
    better = len(d) > 1 and mean < 0 and -mean > 2 * se
    wins += better
    mb = sum(p[0] for p in pairs) / len(pairs)
    ma = sum(p[1] for p in pairs) / len(pairs)
    print(f"{name:12s} {mb:14.1f} {ma:14.1f} {mean:18.1f} {2 * se:10.1f}  {'lower (> 2 SE)' if better else 'not shown'}")
print(f"{sys.argv[2]} lower by more than two standard errors on {wins} of {len(by)} instances")
EOF
