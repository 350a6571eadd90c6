#!/usr/bin/env bash
# A one-node Slurm cluster from Debian's packages, and the sharded path on it: a CPU campaign
# (scripts/slurm/cpu-campaign.toml) split into 3 array tasks by tune-array.sbatch, merged
# with `mats merge`, and compared trial by trial with a single `mats tune` of the campaign.
#
#   sudo scripts/slurm/local-cluster.sh          # needs root: apt-get, munged, slurmd
#
# Everything lives in a private folder (WORK, default a new /tmp/mats-slurm.*): its own munge
# socket and Slurm ports, so a system Slurm or munge is left alone; the daemons it starts are
# stopped by pid on exit. Environment: MATS (the binary; default target/release/mats, built
# if missing), WORK, KEEP=1 to keep WORK. Output: docs/daemon.md quotes a run.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

if [ "$(id -u)" -ne 0 ]; then
    echo "local-cluster.sh: run as root (it installs packages and starts munged and slurmd)" >&2
    exit 2
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "== installing slurm-wlm and munge"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
mats=${MATS:-$repo/target/release/mats}
if [ ! -x "$mats" ]; then
    cargo build --release --bin mats
fi

work=${WORK:-$(mktemp -d /tmp/mats-slurm.XXXXXX)}
mkdir -p "$work"/{state,spool,log,out}
chmod 755 "$work"
host=$(hostname -s)
cpus=$(nproc)
cleanup() {
    local started=()
    for f in "$work"/slurmd.pid "$work"/slurmctld.pid "$work"/munged.pid; do
        if [ -s "$f" ]; then
            started+=("$(cat "$f")")
            kill "${started[-1]}" 2>/dev/null || true
        fi
    done
    # They shut down within seconds; wait so that a next run finds the ports free.
    for _ in $(seq 1 50); do
        local alive=0
        for p in "${started[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.2
    done
    if [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT

echo "== munge (socket $work/munge.sock)"
key=$work/munge.key
dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
chown munge:munge "$key" 2>/dev/null || true
chmod 400 "$key"
munged --force --socket="$work/munge.sock" --key-file="$key" \
    --pid-file="$work/munged.pid" --log-file="$work/log/munged.log" \
    --seed-file="$work/munge.seed"
MUNGE_SOCKET=$work/munge.sock
echo "test" | munge --socket="$MUNGE_SOCKET" | unmunge --socket="$MUNGE_SOCKET" >/dev/null
echo "munge works"

echo "== slurmctld and slurmd (node $host, $cpus CPUs)"
conf=$work/slurm.conf
cat >"$conf" <<CONF
ClusterName=mats-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$conf
slurmctld -f "$conf"
slurmd -f "$conf"
for _ in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then break; fi
    sleep 1
done
sinfo

echo "== the campaign as a 3-task array (tune-array.sbatch, --gres=none: a CPU campaign)"
campaign=$repo/scripts/slurm/cpu-campaign.toml
out=$work/out/sharded
start=$(date +%s.%N)
# --cpus-per-task 1: the three tasks share this node's cores.
sbatch --wait --array=1-3 --gres=none --cpus-per-task=1 --chdir="$work/out" \
    --export=ALL,MATS="$mats" "$repo/scripts/slurm/tune-array.sbatch" "$campaign" "$out" 3
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "array finished in %.1f s\n", b - a }'
for f in "$work"/out/mats-tune-*.out; do sed 's/^/  /' "$f"; done
"$mats" merge "$out/merged" "$out"/shard-*

echo "== the same campaign in one process"
"$mats" tune "$campaign" --out "$work/out/single" --quiet | head -1

echo "== comparison (search trials: point, instance, seed, status, objective)"
python3 - "$work/out/single/results.sqlite" "$out/merged/results.sqlite" <<'PY'
import sqlite3, sys
def trials(path):
    db = sqlite3.connect(path)
    seed = db.execute("SELECT json_extract(settings, '$.seed') FROM campaigns").fetchone()[0]
    rows = db.execute("""SELECT p.key, i.name, t.seed, t.status, t.objective FROM trials t
        JOIN points p ON p.id = t.point_id JOIN instances i ON i.id = t.instance_id
        WHERE t.seed = ? AND t.status != 'crashed'""", (seed,)).fetchall()
    return sorted(rows)
a, b = trials(sys.argv[1]), trials(sys.argv[2])
print(f"single process: {len(a)} trials; 3 shards merged: {len(b)} trials")
if a != b:
    for row in sorted(set(a) ^ set(b)):
        print("  differs:", row)
    sys.exit("NOT IDENTICAL")
print("identical: every (point, instance, seed) has the same status and objective")
PY
"$mats" report "$out/merged" | tail -1
"$mats" export "$out/merged" --out "$work/out/tuned" | tail -1
echo "== ok"
