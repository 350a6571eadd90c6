#!/usr/bin/env bash
# The figures of issue 30 on a host with several GPUs (nvidia-h200-x2 or -x4), from the
# repository root after scripts/gpu-test.sh built gpu-bundle/ (or with MATS=path/to/mats):
#
#   bash scripts/islands-figures.sh            # both parts
#   PARTS=solve bash scripts/islands-figures.sh    # island solve vs one GPU only
#   PARTS=campaign bash scripts/islands-figures.sh # campaign scaling only
#
# Part `solve`: each instance, seeds 1-3, one GPU (`--gpu 0`) and every GPU (`--gpus all`) at
# the same --time-limit ($SECONDS_PER_RUN, default 30); the table gives both objectives, the
# gap to the best known where there is one, the exchanges and the GPU that found the best.
# Instances: tai256c (QAP), pla33810 (TSP), VFR800_60_1 (PFSP) from $DATA (../shared/data),
# and the largest HW/SW size of the paper's tables, 2000 nodes x 6000 edges, generated here.
#
# Part `campaign`: $CAMPAIGN (default campaigns/qap-paper.toml: first-improvement hill
# climbing, which looks as many neighbours ahead as keep every GPU busy) run with devices = [0]
# and with every GPU; the table gives trials, wall time, trials/s and its ratio, each GPU's
# busy share (its trials' measuring seconds over the wall time) and how far the times of the
# trials both runs made (same point, instance and seed) lie apart: median and largest relative
# difference, how many lie within their timed runs' ranges, and the mean signed difference per
# GPU (a GPU that times differently shows there).
#
# GPUS overrides the number of GPUs found (the devices of the second campaign run).
# Everything lands in $OUT (default islands-results/): the JSON of every solve, both
# campaign folders, and islands-figures.md, the tables to paste into docs/islands.md.
set -u
root=$PWD
mats=${MATS:-$root/gpu-bundle/bin/mats}
data=${DATA:-$root/../shared/data}
out=${OUT:-$root/islands-results}
parts=${PARTS:-solve campaign}
seconds=${SECONDS_PER_RUN:-30}
campaign=${CAMPAIGN:-campaigns/qap-paper.toml}
export MATS_CACHE_DIR=${MATS_CACHE_DIR:-/tmp/mats-cache}
mkdir -p "$out"
table=$out/islands-figures.md
: > "$table"
gpus=${GPUS:-$("$mats" devices --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')}
echo "# islands figures: $gpus GPUs, $(date -u +%F)" >> "$table"
status=0

solve_part() {
    local hwsw=$out/hwsw-2000x6000.hwsw
    "$mats" instance generate hwsw --nodes 2000 --edges 6000 --ccr 1 --r-level low --seed 1 \
        -o "$hwsw" || return 1
    local instances=(
        "$data/qaplib/instances/tai256c.dat|"
        "$data/tsplib/instances/pla33810.tsp|"
        "$data/taillard-pfsp/vrf/large/VFR800_60_1_Gap.txt|"
        "$hwsw|"
    )
    printf '\n## Island solve vs one GPU, %s s each\n\n' "$seconds" >> "$table"
    echo "| instance | seed | one GPU | gap % | $gpus GPUs (islands) | gap % | exchanges | best on GPU |" >> "$table"
    echo "|---|---|---|---|---|---|---|---|" >> "$table"
    for entry in "${instances[@]}"; do
        local file=${entry%|*}
        local name
        name=$(basename "$file")
        for seed in 1 2 3; do
            local one=$out/solve-$name-$seed-one.json many=$out/solve-$name-$seed-all.json
            echo "== $name seed $seed ($(date -u +%T))"
            "$mats" solve "$file" --backend gpu --gpu 0 --time-limit "$seconds" --seed "$seed" \
                --json > "$one" 2> "$one.err" || { cat "$one.err"; status=1; continue; }
            "$mats" solve "$file" --backend gpu --gpus all --time-limit "$seconds" --seed "$seed" \
                --json > "$many" 2> "$many.err" || { cat "$many.err"; status=1; continue; }
            python3 - "$one" "$many" "$name" "$seed" >> "$table" <<'PY'
import json, sys
one, many = (json.load(open(p)) for p in sys.argv[1:3])
isl = many.get("gpu", {}).get("islands") or {}
gap = lambda r: "-" if r.get("gap_percent") is None else f'{r["gap_percent"]:.3f}'
print(f'| {sys.argv[3]} | {sys.argv[4]} | {one["objective"]} | {gap(one)} | {many["objective"]} '
      f'| {gap(many)} | {isl.get("exchanges", "-")} | {isl.get("best_gpu", "-")} |')
PY
        done
    done
}

campaign_part() {
    local base
    base=$(basename "$campaign" .toml)
    printf '\n## Campaign scaling: %s\n\n' "$base" >> "$table"
    echo "| GPUs | trials | wall s | trials/s | ratio | busy share per GPU | same trials' time difference (median, max; within range; per GPU) |" >> "$table"
    echo "|---|---|---|---|---|---|---|" >> "$table"
    local one_dir=$out/campaign-1gpu
    for n in 1 "$gpus"; do
        local dir=$out/campaign-${n}gpu toml=$out/$base-${n}gpu.toml
        local devices
        devices=$(python3 -c "print(', '.join(str(i) for i in range($n)))")
        # Paths in a campaign are relative to its file: made absolute for the copy; the
        # devices line goes before the first table.
        sed "s#\"\\.\\./#\"$root/#g" "$campaign" | awk -v d="devices = [$devices]" \
            '!done && /^\[/ { print d; print ""; done = 1 } { print }' > "$toml"
        echo "== $base on $n GPU(s) ($(date -u +%T))"
        "$mats" tune "$toml" --out "$dir" --fresh --quiet > "$dir.txt" 2>&1 || {
            cat "$dir.txt"; status=1; continue; }
        python3 - "$dir" "$one_dir" "$n" >> "$table" <<'PY'
import json, sqlite3, statistics, sys
dir, one_dir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def load(d):
    s = json.load(open(f"{d}/summary.json"))
    db = sqlite3.connect(f"{d}/results.sqlite")
    busy = db.execute("SELECT device, SUM(COALESCE(measure_s, 0)) FROM trials "
                      "WHERE status = 'ok' GROUP BY device ORDER BY device").fetchall()
    # One time per trial, keyed by what it measured: (point, instance, seed).
    times = {(k, i, seed): (t, spread or 0.0, dev) for k, i, seed, t, spread, dev in db.execute(
        "SELECT p.key, i.name, t.seed, t.time_s, t.time_spread, t.device FROM trials t "
        "JOIN points p ON p.id = t.point_id JOIN instances i ON i.id = t.instance_id "
        "WHERE t.status = 'ok' AND t.time_s > 0")}
    return s, busy, times
s, busy, times = load(dir)
rate = s["new_trials"] / s["wall_s"]
s1, _, times1 = load(one_dir)
ratio = rate / (s1["new_trials"] / s1["wall_s"])
shares = ", ".join(f"{b / s['wall_s'] * 100:.0f}%" for _, b in busy)
# The trials both runs made: the relative difference of their times, and whether it lies
# within the two trials' own ranges (max - min over median of the timed runs, summed).
common = [k for k in times if k in times1]  # both queries keep only times > 0
diff = [abs(times[k][0] - times1[k][0]) / times1[k][0] for k in common]
within = sum(d <= times[k][1] + times1[k][1] for d, k in zip(diff, common))
if common and n > 1:
    per_gpu = []
    for dev in sorted({times[k][2] for k in common}):
        signed = [(times[k][0] - times1[k][0]) / times1[k][0] for k in common if times[k][2] == dev]
        per_gpu.append(f"{dev.split()[-1]} {statistics.mean(signed) * 100:+.1f}% ({len(signed)})")
    agree = (f"{statistics.median(diff) * 100:.1f}%, {max(diff) * 100:.1f}%; "
             f"{within} of {len(common)} trials within their timed runs' ranges; "
             f"mean signed per GPU: {', '.join(per_gpu)}")
else:
    agree = "-"
print(f'| {n} | {s["new_trials"]} | {s["wall_s"]:.1f} | {rate:.3f} | {ratio:.2f}x | {shares} | {agree} |')
PY
    done
    # Where each GPU waited, from its trials' start and end times: the gaps between its
    # trials, by the step of the campaign (the store's run) during which each gap began.
    printf '\n### Idle seconds per GPU by campaign step\n\n' >> "$table"
    for n in 1 "$gpus"; do
        [ -f "$out/campaign-${n}gpu/results.sqlite" ] || continue
        python3 - "$out/campaign-${n}gpu" "$n" >> "$table" <<'PY'
import collections, datetime, sqlite3, sys
db = sqlite3.connect(f"{sys.argv[1]}/results.sqlite")
at = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
runs = [(at(s), step) for step, s in db.execute("SELECT strategy, started_at FROM runs ORDER BY started_at")]
trials = [(d, at(a), at(b)) for d, a, b in db.execute(
    "SELECT device, started_at, ended_at FROM trials WHERE ended_at IS NOT NULL")]
if not trials:
    sys.exit()
first, last = min(t[1] for t in trials), max(t[2] for t in trials)
step_at = lambda t: ([s for r, s in runs if r <= t + 0.01] or ["start"])[-1]
for device in sorted({t[0] for t in trials}):
    idle, end = collections.Counter(), first
    for _, a, b in sorted(t for t in trials if t[0] == device):
        if a - end > 0.02:
            idle[step_at(a)] += a - end
        end = max(end, b)
    idle["after its last trial"] += last - end
    steps = ", ".join(f"{k} {v:.1f}" for k, v in idle.most_common() if v >= 0.05)
    print(f"- {sys.argv[2]} GPU(s), {device}: {sum(idle.values()):.1f} s of {last - first:.1f} ({steps})")
PY
    done
}

for part in $parts; do
    case $part in
        solve) solve_part || status=1 ;;
        campaign) campaign_part || status=1 ;;
        *) echo "unknown part $part (solve, campaign)"; status=1 ;;
    esac
done
cat "$table"
exit $status
