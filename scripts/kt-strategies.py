#!/usr/bin/env python3
"""Kernel Tuner's strategies in its simulation mode on brute-forced cache files.

Writes, per cache file and strategy, the objective of every distinct configuration in the
order the strategy evaluated it (null: a failed configuration), one list per seed, as JSON.
`mats bench strategies --external FILE` scores these curves with the same code that scores
mats' own strategies, so both tools are compared under one methodology.

Usage (Kernel Tuner is a PyPI package; install it into an ignored folder first):
    python3 -m venv .kt-venv && .kt-venv/bin/pip install kernel_tuner==1.5.0
    .kt-venv/bin/python scripts/kt-strategies.py --out kt-curves.json \
        ../shared/data/autotuning-caches/*.json.gz

Each run gets `max_fevals` = --max-fraction of the space (the largest budget mats reports) and
a seed; a shorter budget reads the same run's prefix, as the methodology's curves do.
"""

import argparse
import gzip
import json
import os
import random
import sys
import tempfile
import time
import warnings

DEFAULT_STRATEGIES = [
    "random_sample",
    "genetic_algorithm",
    "diff_evo",
    "dual_annealing",
    "basinhopping",
    "simulated_annealing",
    "greedy_ils",
    "greedy_mls",
    "mls",
    "pso",
    "firefly_algorithm",
]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def plain_cache(data, path, folder):
    """Kernel Tuner reads an uncompressed cache file; it also appends to it, so a copy."""
    name = os.path.basename(path).removesuffix(".gz")
    if not name.endswith(".json"):
        name += ".json"
    out = os.path.join(folder, name)
    with open(out, "w") as f:
        json.dump(data, f)
    return out


def seed_latin_hypercube():
    """Kernel Tuner's Latin hypercube samples (diff_evo's and bayes_opt's first points) come
    from scipy's LatinHypercube without a seed; draw its seed from the seeded generator."""
    import numpy
    import scipy.stats.qmc as qmc

    base = getattr(qmc.LatinHypercube, "_unseeded", qmc.LatinHypercube)

    class Seeded(base):
        _unseeded = base

        def __init__(self, *args, **kwargs):
            if kwargs.get("rng") is None and kwargs.get("seed") is None:
                kwargs["rng"] = numpy.random.randint(2**31)
            super().__init__(*args, **kwargs)

    qmc.LatinHypercube = Seeded


def run_one(data, cache_path, strategy, budget, seed):
    import numpy
    from kernel_tuner import tune_kernel

    # Kernel Tuner 1.5 passes `seed` to pymoo only; its own strategies draw from the global
    # generators, so a run is reproducible only when these are seeded here.
    random.seed(seed)
    numpy.random.seed(seed)
    seed_latin_hypercube()

    keys = data["tune_params_keys"]
    listed = set(data["cache"].keys())

    def listed_only(p):
        # The cache lists the valid configurations: its keys are the space's constraints.
        return ",".join(str(p[k]) for k in keys) in listed

    options = {"max_fevals": budget}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune_kernel(
            data["kernel_name"],
            "",
            data["problem_size"],
            [],
            data["tune_params"],
            restrictions=listed_only,
            strategy=strategy,
            strategy_options=options,
            cache=cache_path,
            simulation_mode=True,
            quiet=True,
            seed=seed,
        )
    seen = set()
    curve = []
    for r in results:
        key = ",".join(str(r[k]) for k in keys)
        if key in seen:
            continue
        seen.add(key)
        t = r.get("time")
        curve.append(t / 1e3 if isinstance(t, (int, float)) else None)
    return curve[:budget]


def main():
    # Set and string hashing order Kernel Tuner's searchspace sets; fixed, so that a seed gives
    # the same run in every process.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("caches", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--max-fraction", type=float, default=0.5)
    ap.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES))
    args = ap.parse_args()

    out = {"tool": "kernel_tuner", "strategies": {}}
    try:
        import kernel_tuner

        out["version"] = kernel_tuner.__version__
    except ImportError:
        sys.exit("kernel_tuner is not installed (see this script's header)")
    with tempfile.TemporaryDirectory() as folder:
        for path in args.caches:
            data = load(path)
            space = os.path.basename(path).removesuffix(".gz").removesuffix(".json")
            n = len(data["cache"])
            budget = max(1, round(args.max_fraction * n))
            for strategy in args.strategies.split(","):
                runs = []
                for seed in range(args.seeds):
                    # A fresh copy per run: simulation mode writes to the cache file.
                    cache_path = plain_cache(data, path, folder)
                    t0 = time.time()
                    try:
                        curve = run_one(data, cache_path, strategy, budget, seed)
                    except Exception as e:  # a strategy that fails on a space is reported
                        print(f"{space} {strategy} seed {seed}: failed: {e}", file=sys.stderr)
                        break
                    runs.append(curve)
                    print(
                        f"{space} {strategy} seed {seed}: {len(curve)} evaluations in {time.time() - t0:.1f} s",
                        file=sys.stderr,
                        flush=True,
                    )
                out["strategies"].setdefault(space, {})[strategy] = runs
                with open(args.out, "w") as f:
                    json.dump(out, f)


if __name__ == "__main__":
    main()
