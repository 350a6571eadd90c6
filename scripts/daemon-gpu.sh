#!/usr/bin/env bash
# On the GPU machine, after scripts/gpu-test.sh built gpu-bundle/: the daemon with real GPU
# campaigns (docs/daemon.md, "On a real GPU").
#
# 1. Busy share: the quickstart campaign (GPU backend) alone under a private daemon, then two
#    quickstarts submitted together (--jobs 2, sharing GPU 0 trial by trial). For each phase:
#    wall time, the device-lock leases' union over their span (MATS_LOCK_TRACE) and the share
#    of nvidia-smi's 100 ms samples with the GPU busy (utilization.gpu > 0) over the phase.
# 2. The GPU lock across a daemon and a plain `mats tune`: while the daemon runs a campaign, a
#    `mats tune --no-wait` on the same GPU must fail naming the holder; without --no-wait it
#    takes turns and finishes.
# Writes $OUT/daemon/ (or gpu-results/daemon). Usage: bash scripts/daemon-gpu.sh
set -u
root=$PWD
mats=$root/gpu-bundle/bin/mats
out=${OUT:-$root/gpu-results}/daemon
tmp=$(mktemp -d)
mkdir -p "$out"
export MATS_STATE_DIR=$tmp/state MATS_DAEMON_SOCKET=$tmp/daemon.sock MATS_LOCK_DIR=$tmp/locks
export CUDA_CACHE_DISABLE=1 MATS_CACHE_DIR=$tmp/cache
# Every lease of every process (the daemon's campaigns inherit it): `key pid start_ns end_ns`.
export MATS_LOCK_TRACE=$tmp/trace
log=$out/daemon-gpu.txt
: > "$log"
say() { echo "$*" | tee -a "$log"; }

sampler=
"$mats" daemon --jobs 2 > "$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; kill $sampler 2>/dev/null' EXIT
for _ in $(seq 50); do [ -S "$MATS_DAEMON_SOCKET" ] && break; sleep 0.1; done

# Waits until no campaign is queued or running.
drain() {
    while "$mats" status --json 2>/dev/null | grep -Eq '"state": *"(queued|running)"'; do
        sleep 0.5
    done
}

# Phase NAME COUNT: COUNT quickstarts at once; prints wall time, lease union share, sampled
# busy share.
phase() {
    local name=$1 count=$2
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 100 \
        > "$out/util-$name.csv" 2>/dev/null &
    sampler=$!
    local t0
    t0=$(date +%s.%N)
    for k in $(seq "$count"); do
        "$mats" submit campaigns/quickstart.toml --out "$tmp/runs/$name-$k" >> "$log" 2>&1
    done
    drain
    local t1
    t1=$(date +%s.%N)
    kill $sampler 2>/dev/null
    wait $sampler 2>/dev/null
    python3 - "$name" "$count" "$t0" "$t1" "$tmp/trace" "$out/util-$name.csv" <<'PY' | tee -a "$log"
import sys
name, count, t0, t1, trace, util = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
leases = []
try:
    for line in open(trace):
        parts = line.split()
        if len(parts) >= 4:
            s, e = int(parts[2]) / 1e9, int(parts[3]) / 1e9
            if s >= t0 and e <= t1:
                leases.append((s, e))
except FileNotFoundError:
    pass
leases.sort()
union, end = 0.0, None
for s, e in leases:
    if end is None or s > end:
        union += e - s
        end = e
    elif e > end:
        union += e - end
        end = e
span = (leases[-1][1] - leases[0][0]) if leases else 0.0
samples = [float(x) for x in open(util).read().split() if x.replace('.', '', 1).isdigit()]
busy = sum(1 for x in samples if x > 0) / len(samples) if samples else 0.0
print(f"{name}: {count} campaign(s), wall {t1 - t0:.1f} s, {len(leases)} leases, "
      f"lease union {union:.1f} s = {100 * union / span if span else 0:.1f}% of their span, "
      f"nvidia-smi busy {100 * busy:.1f}% of {len(samples)} samples, mean utilization "
      f"{sum(samples) / len(samples) if samples else 0:.1f}%")
PY
}

phase alone 1
phase shared 2
"$mats" status >> "$log" 2>&1

# The lock across the daemon and a plain `mats tune`.
"$mats" submit campaigns/quickstart.toml --out "$tmp/runs/held" >> "$log" 2>&1
for _ in $(seq 100); do
    ls "$tmp"/runs/held/results.sqlite > /dev/null 2>&1 && break
    sleep 0.2
done
sleep 3
say "== plain mats tune --no-wait while the daemon's campaign measures:"
"$mats" tune campaigns/quickstart.toml --out "$tmp/runs/plain-nowait" --no-wait --quiet \
    >> "$log" 2>&1
say "exit $? (expected non-zero, naming the holder)"
say "== plain mats tune (waits, takes turns):"
t0=$(date +%s)
"$mats" tune campaigns/quickstart.toml --out "$tmp/runs/plain-wait" --quiet 2>&1 |
    grep -E "new trials|GPU busy|waiting|error" | tee -a "$log"
say "exit ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
drain
"$mats" status >> "$log" 2>&1
cp "$MATS_LOCK_TRACE" "$out/lock-trace.txt"
python3 - "$MATS_LOCK_TRACE" <<'PY' | tee -a "$log"
import sys
leases = sorted((int(l.split()[2]), int(l.split()[3]), l.split()[1]) for l in open(sys.argv[1]) if len(l.split()) >= 4)
overlaps = sum(1 for a, b in zip(leases, leases[1:]) if b[0] < a[1])
print(f"lock trace: {len(leases)} leases by {len({p for _, _, p in leases})} processes, {overlaps} overlapping (must be 0)")
PY
