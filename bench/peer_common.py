"""What torch_bench.py and jax_bench.py share: the timing loops and the
command line, so both peers are measured exactly as bench/flex_bench.cpp
measures burn.

Each repetition times `iters` runs with time.perf_counter after one warm-up
run (which also compiles, for jit-compiled forms); the figure reported is the
median over repetitions of the mean time per run, in milliseconds (what
Google Benchmark's "median" aggregate reports for burn's side). Tiny
workloads run as many calls as fit in a minimum time per repetition.

A bench script prints one JSON object:
  {"meta": {...}, "results": {row: ms}, "forms": {row: "eager" | "compiled" | ...},
   "peak_rss_mib": N}
"""
import argparse
import json
import math
import re
import resource
import statistics
import time


def timed(fn, iters, reps, setup=None):
    """Median over reps of the mean milliseconds per call of fn (after one warm-up)."""
    fn()
    means = []
    for _ in range(reps):
        total = 0.0
        for i in range(iters):
            if setup is not None:
                setup(i)
            t0 = time.perf_counter()
            fn()
            total += time.perf_counter() - t0
        means.append(total / iters)
    return statistics.median(means) * 1e3


def min_time_loop(fn, min_time, reps):
    """For tiny ops: as many calls as fit in min_time seconds, per repetition."""
    fn()
    means = []
    for _ in range(reps):
        n = 0
        t0 = time.perf_counter()
        while True:
            fn()
            n += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= min_time:
                break
        means.append(elapsed / n)
    return statistics.median(means) * 1e3


def peak_rss_mib():
    """This process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--filter", default="",
                        help="run only workloads whose name matches this regular expression (as --benchmark_filter)")
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: the library's own choice)")
    parser.add_argument("--no-compile", action="store_true",
                        help="eager forms only (no torch.compile; JAX always runs jit-compiled)")
    return parser.parse_args()


def run(workloads, args, meta):
    """Runs every workload whose name matches args.filter; prints the JSON.

    workloads: [(name, fn)] where fn() returns ms, or (ms, form)."""
    results, forms = {}, {}
    for name, fn in workloads:
        if not re.search(args.filter, name):
            continue
        got = fn()
        ms, form = got if isinstance(got, tuple) else (got, "eager")
        if not math.isfinite(ms) or ms <= 0:
            raise SystemExit(f"[{meta.get('peer', 'peer')}] {name}: bad time {ms}")
        results[name] = ms
        forms[name] = form
    print(json.dumps({"meta": meta, "results": results, "forms": forms, "peak_rss_mib": peak_rss_mib()}, indent=1))
