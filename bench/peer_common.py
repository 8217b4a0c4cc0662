"""What torch_bench.py and jax_bench.py share: the timing loops and the
command line, so both peers are measured exactly as bench/flex_bench.cpp
measures burn.

Each repetition times `iters` runs with time.perf_counter after one warm-up
run (which also compiles, for jit-compiled forms); the figure reported is the
median over repetitions of the mean time per run, in milliseconds (what
Google Benchmark's "median" aggregate reports for burn's side). Tiny
workloads run as many calls as fit in a minimum time per repetition.

The rows both peers run are WORKLOADS below, one table for both: each peer
defines the bench_* functions it names. A bench script prints one JSON
object:
  {"meta": {...}, "results": {row: ms}, "forms": {row: "eager" | "compiled" | "jit"}}
"""
import argparse
import json
import math
import re
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


N16M = 1 << 24

# (row, the peer's function bench_<name>, its arguments): the rows, sizes,
# iteration and repetition counts of bench/flex_bench.cpp.
WORKLOADS = [
    ("sgemm_32", "sgemm_small", (32,)),
    ("sgemm_128", "sgemm_small", (128,)),
    ("sgemm_256", "sgemm", (256, 50, 3)),
    ("sgemm_1024", "sgemm", (1024, 2, 3)),
    ("sgemm_2048", "sgemm", (2048, 1, 3)),
    ("bmm_32x256", "bmm", ()),
    ("add_16m_fresh", "add_fresh", ()),
    ("add_16m_inplace", "add_inplace", ()),
    ("exp_16m_fresh", "exp_fresh", ()),
    ("exp_16m_inplace", "exp_inplace", ()),
    ("sum_16m", "sum", ()),
    ("softmax_256x256x256", "softmax", ()),
    ("layer_norm_4096x1024", "layer_norm", (4096,)),
    ("cumsum_4096x4096", "cumsum", ()),
    ("gather_4096x4096", "gather", ()),
    ("argmax_4096x4096", "argmax", ()),
    ("conv2d_fwd", "conv_fwd", ()),
    ("bf16_matmul_2048", "bf16_matmul", (2048, 1, 3)),
    ("bf16_conv2d_fwd", "bf16_conv_fwd", ()),
    ("linear_4096_b64", "linear_4096", ()),  # batch 64, 4096 -> 4096 with bias, 10 iterations x 3
    ("int8_linear_4096_b64", "int8_linear_4096", ()),  # the same, int8 weights, activations quantized per batch
    ("quantize_3x4096", "quantize_3x4096", ()),  # three 4096x4096 Linear weights to int8 per channel, 1 iteration x 3
    ("conv_chain_4", "conv_chain_4", ()),
    ("conv2d_fwd_bwd", "conv_fwd_bwd", ()),
    ("max_pool2d_k5s2", "max_pool", ()),
    ("mlp_train_step", "mlp", ()),  # 784-1024-1024-10, batch 256, 20 iterations x 5
    ("mlp_small_step", "mlp", (64, 64, 10, 16, 500, 5)),  # in, hidden, classes, batch, iters, reps
    ("bf16_mlp_train_step", "bf16_mlp", (5, 3)),  # mlp_train_step under bf16 autocast, 5 iterations x 3
    ("tiny_add_4", "tiny", ()),
    ("gelu_16m", "gelu_16m", ()),
    ("layer_norm_16m", "layer_norm", (N16M // 1024,)),
]


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--filter", default="",
                        help="run only workloads whose name matches this regular expression (as --benchmark_filter)")
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: the library's own choice)")
    parser.add_argument("--no-compile", action="store_true",
                        help="eager forms only (no torch.compile; JAX always runs jit-compiled)")
    return parser.parse_args()


def run(functions, args, meta, form="eager"):
    """Runs every row of WORKLOADS whose name matches args.filter with the
    peer's functions (its module's globals()); prints the JSON.

    A bench_* function returns ms, or (ms, form) where it chose among forms;
    `form` names the rest."""
    results, forms = {}, {}
    for name, fn, fn_args in WORKLOADS:
        if not re.search(args.filter, name):
            continue
        got = functions["bench_" + fn](*fn_args)
        ms, form_used = got if isinstance(got, tuple) else (got, form)
        if not math.isfinite(ms) or ms <= 0:
            raise SystemExit(f"[{meta.get('peer', 'peer')}] {name}: bad time {ms}")
        results[name] = ms
        forms[name] = form_used
    print(json.dumps({"meta": meta, "results": results, "forms": forms}, indent=1))
