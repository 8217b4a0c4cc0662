#!/usr/bin/python3
"""PyTorch's side of the CPU benchmark.

The same workloads, names, iteration counts and repetitions as
bench/flex_bench.cpp. Each repetition times `iters` runs with
time.perf_counter after one warm-up run; the reported figure is the median
over repetitions of the mean time per run, in milliseconds (what Google
Benchmark's "median" aggregate reports for our side).

Prints one JSON object: {"meta": {...}, "results": {name: ms}}.
Usage: torch_bench.py [--filter REGEX] [--threads N]
(--threads calls torch.set_num_threads; by default PyTorch keeps its own
choice, which for Debian's 1.13 on this machine is 1 thread.)
"""
import argparse
import json
import math
import os
import re
import statistics
import time

import torch
import torch.nn.functional as F

SEED = 42
N16M = 1 << 24


def timed(fn, iters, reps, setup=None):
    """Median over reps of the mean seconds per call of fn (after one warm-up)."""
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
    """For tiny ops: as many calls as fit in min_time, per repetition."""
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


def bench_sgemm(n, iters, reps):
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    return timed(lambda: torch.matmul(a, b), iters, reps)


def bench_bmm():
    a = torch.randn(32, 256, 256)
    b = torch.randn(32, 256, 256)
    return timed(lambda: torch.matmul(a, b), 2, 3)


def bench_add_fresh():
    a, b = torch.randn(N16M), torch.randn(N16M)
    return timed(lambda: a + b, 5, 5)


def bench_add_inplace():
    a, b = torch.randn(N16M), torch.randn(N16M)
    return timed(lambda: a.add_(b), 5, 5)


def bench_exp_fresh():
    a = torch.empty(N16M).uniform_(-0.5, 0.5)
    return timed(lambda: torch.exp(a), 5, 5)


def bench_exp_inplace():
    a = torch.empty(N16M).uniform_(-0.5, 0.5)

    def reset(i):
        # Repeated exp overflows after four rounds; reset outside the timer.
        if i % 3 == 0:
            a.uniform_(-0.5, 0.5)

    return timed(lambda: a.exp_(), 6, 5, setup=reset)


def bench_sum():
    a = torch.randn(N16M)
    return timed(lambda: a.sum(), 5, 5)


def bench_softmax():
    a = torch.randn(256, 256, 256)
    return timed(lambda: torch.softmax(a, -1), 3, 5)


def bench_cumsum():
    a = torch.randn(4096, 4096)
    return timed(lambda: torch.cumsum(a, -1), 3, 5)


def bench_gather():
    a = torch.randn(4096, 4096)
    idx = torch.randint(0, 4096, (4096, 4096))
    return timed(lambda: torch.gather(a, 1, idx), 3, 5)


def bench_argmax():
    a = torch.randn(4096, 4096)
    return timed(lambda: torch.argmax(a, -1, keepdim=True), 3, 5)


def layer_norm(x, gamma, beta, eps):
    # The same composite as flex_bench.cpp (burn has no layer_norm op yet).
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / (var + eps).sqrt() * gamma + beta


def bench_layer_norm():
    x = torch.randn(4096, 1024)
    gamma, beta = torch.ones(1024), torch.zeros(1024)
    return timed(lambda: layer_norm(x, gamma, beta, 1e-5), 3, 5)


def bench_layer_norm_16m():
    x = torch.randn(N16M // 1024, 1024)
    gamma, beta = torch.ones(1024), torch.zeros(1024)
    return timed(lambda: layer_norm(x, gamma, beta, 1e-5), 3, 5)


def bench_gelu_16m():
    # Eager: x * w + b and the (exact, erf) gelu each pass over memory.
    x = torch.randn(N16M // 1024, 1024)
    w, b = torch.randn(1024), torch.randn(1024)
    return timed(lambda: F.gelu(x * w + b), 3, 5)


def bench_conv_fwd():
    x = torch.randn(32, 64, 56, 56)
    w = torch.randn(64, 64, 3, 3) * 0.05
    bias = torch.zeros(64)
    with torch.no_grad():
        return timed(lambda: F.conv2d(x, w, bias, padding=1), 2, 3)


def bench_conv_chain_4():
    x = torch.randn(16, 64, 56, 56)
    ws = [torch.randn(64, 64, 3, 3) * 0.05 for _ in range(4)]
    bias = torch.zeros(64)

    def chain():
        h = x
        for i, w in enumerate(ws):
            h = F.relu(F.conv2d(h, w, bias, padding=1))
            if i == 1:
                h = F.max_pool2d(h, 2, 2)
        return h.sum()

    with torch.no_grad():
        return timed(chain, 2, 3)


def bench_conv_fwd_bwd():
    x = torch.randn(32, 64, 56, 56, requires_grad=True)
    w = (torch.randn(64, 64, 3, 3) * 0.05).requires_grad_()
    bias = torch.zeros(64, requires_grad=True)

    def step():
        x.grad = w.grad = bias.grad = None  # fresh gradients, as burn's backward returns
        F.conv2d(x, w, bias, padding=1).sum().backward()

    return timed(step, 1, 3)


def bench_max_pool():
    x = torch.randn(2, 32, 512, 512)
    return timed(lambda: F.max_pool2d(x, 5, 2), 2, 3)


def bench_mlp(n_in=784, hidden=1024, classes=10, batch=256, iters=2, reps=3):
    def param(i, o):
        scale = 1.0 / i
        return torch.empty(i, o).uniform_(-2 * scale, 2 * scale).requires_grad_()

    params = [param(n_in, hidden), param(hidden, hidden), param(hidden, classes),
              torch.zeros(hidden, requires_grad=True), torch.zeros(hidden, requires_grad=True),
              torch.zeros(classes, requires_grad=True)]
    x = torch.randn(batch, n_in)
    labels = torch.tensor([(i * 7) % classes for i in range(batch)]).reshape(batch, 1)
    lr = 0.01

    def step():
        w1, w2, w3, b1, b2, b3 = params
        # Burn's weight layout [in, out]: x @ W + b, as burn::module::linear.
        h1 = torch.relu(torch.addmm(b1, x, w1))
        h2 = torch.relu(torch.addmm(b2, h1, w2))
        logits = torch.addmm(b3, h2, w3)
        loss = -torch.log_softmax(logits, 1).gather(1, labels).mean()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for i, (p, g) in enumerate(zip(params, grads)):
                params[i] = (p - g * lr).requires_grad_()

    return timed(step, iters, reps)


def bench_tiny():
    a = torch.tensor([1.0, 2.0, 3.0, 4.0])
    b = torch.tensor([4.0, 3.0, 2.0, 1.0])
    return min_time_loop(lambda: a + b, 0.2, 5)


def bench_sgemm_small(n):
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    return min_time_loop(lambda: torch.matmul(a, b), 0.2, 5)


WORKLOADS = [
    ("sgemm_32", lambda: bench_sgemm_small(32)),
    ("sgemm_128", lambda: bench_sgemm_small(128)),
    ("sgemm_256", lambda: bench_sgemm(256, 50, 3)),
    ("sgemm_1024", lambda: bench_sgemm(1024, 2, 3)),
    ("sgemm_2048", lambda: bench_sgemm(2048, 1, 3)),
    ("bmm_32x256", bench_bmm),
    ("add_16m_fresh", bench_add_fresh),
    ("add_16m_inplace", bench_add_inplace),
    ("exp_16m_fresh", bench_exp_fresh),
    ("exp_16m_inplace", bench_exp_inplace),
    ("sum_16m", bench_sum),
    ("softmax_256x256x256", bench_softmax),
    ("layer_norm_4096x1024", bench_layer_norm),
    ("cumsum_4096x4096", bench_cumsum),
    ("gather_4096x4096", bench_gather),
    ("argmax_4096x4096", bench_argmax),
    ("conv2d_fwd", bench_conv_fwd),
    ("conv_chain_4", bench_conv_chain_4),
    ("conv2d_fwd_bwd", bench_conv_fwd_bwd),
    ("max_pool2d_k5s2", bench_max_pool),
    ("mlp_train_step", bench_mlp),
    ("mlp_small_step", lambda: bench_mlp(64, 64, 10, 16, iters=500, reps=5)),
    ("tiny_add_4", bench_tiny),
    ("gelu_16m", bench_gelu_16m),
    ("layer_norm_16m", bench_layer_norm_16m),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="",
                        help="run only workloads whose name matches this regular expression (as --benchmark_filter)")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads(N) first (0: as installed)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    results = {}
    for name, fn in WORKLOADS:
        if re.search(args.filter, name):
            ms = fn()
            if not math.isfinite(ms):
                raise SystemExit(f"[torch_bench] {name}: non-finite time {ms}")
            results[name] = ms
    meta = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
    }
    print(json.dumps({"meta": meta, "results": results}, indent=1))


if __name__ == "__main__":
    main()
