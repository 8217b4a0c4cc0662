#!/usr/bin/env python3
"""PyTorch's side of the CPU benchmark.

The same workloads, names, iteration counts and repetitions as
bench/flex_bench.cpp, each in PyTorch's fastest idiomatic form: its native
ops (F.layer_norm, F.gelu, F.cross_entropy, torch.optim.SGD), in-place ops
for the in-place rows, and, for the composites and training steps,
torch.compile as well as eager, the faster of the two counting ("forms" in
the output says which). Timing and output: bench/peer_common.py.

Usage: torch_bench.py [--filter REGEX] [--threads N] [--no-compile]
Run by bench/run.sh with PyTorch 2.x from PyPI (bench/peers_venv.sh) and,
as an extra column, with Debian's python3-torch where it is installed.
"""
import os
import sys

import torch
import torch.nn.functional as F

from peer_common import N16M, min_time_loop, parse_args, run, timed

SEED = 42
COMPILE = hasattr(torch, "compile")


def eager_or_compiled(make_fn, iters, reps, setup=None):
    """Times make_fn(eager) and, where torch.compile exists and works, the
    compiled form; returns (the faster ms, its form)."""
    best = (timed(make_fn(lambda f: f), iters, reps, setup), "eager")
    if not COMPILE:
        return best
    try:
        ms = timed(make_fn(torch.compile), iters, reps, setup)
    except Exception as e:  # noqa: BLE001 - a compiler failure leaves the eager time
        print(f"[torch_bench] torch.compile failed, eager time kept: {type(e).__name__}: {e}"[:400], file=sys.stderr)
        return best
    return min(best, (ms, "compiled"))


def bench_sgemm(n, iters, reps):
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    return timed(lambda: torch.matmul(a, b), iters, reps)


def bench_sgemm_small(n):
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    return min_time_loop(lambda: torch.matmul(a, b), 0.2, 5)


def bench_bmm():
    a = torch.randn(32, 256, 256)
    b = torch.randn(32, 256, 256)
    return timed(lambda: torch.bmm(a, b), 2, 3)


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

    def make(c):
        f = c(lambda t: torch.softmax(t, -1))
        return lambda: f(a)

    return eager_or_compiled(make, 3, 5)


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


def bench_layer_norm(rows):
    x = torch.randn(rows, 1024)
    gamma, beta = torch.ones(1024), torch.zeros(1024)

    def make(c):
        f = c(lambda t: F.layer_norm(t, (1024,), gamma, beta, 1e-5))
        return lambda: f(x)

    return eager_or_compiled(make, 3, 5)


def bench_gelu_16m():
    # gelu(x * w + b), exact (erf) gelu, w and b broadcast over the rows.
    x = torch.randn(N16M // 1024, 1024)
    w, b = torch.randn(1024), torch.randn(1024)

    def make(c):
        f = c(lambda t: F.gelu(t * w + b))
        return lambda: f(x)

    return eager_or_compiled(make, 3, 5)


def bench_conv_fwd():
    x = torch.randn(32, 64, 56, 56)
    w = torch.randn(64, 64, 3, 3) * 0.05
    bias = torch.zeros(64)
    with torch.no_grad():
        return timed(lambda: F.conv2d(x, w, bias, padding=1), 2, 3)


def bench_bf16_matmul(n, iters, reps):
    a = torch.randn(n, n).bfloat16()
    b = torch.randn(n, n).bfloat16()
    return timed(lambda: torch.matmul(a, b), iters, reps)


def bench_bf16_conv_fwd():
    x = torch.randn(32, 64, 56, 56).bfloat16()
    w = (torch.randn(64, 64, 3, 3) * 0.05).bfloat16()
    bias = torch.zeros(64).bfloat16()
    with torch.no_grad():
        return timed(lambda: F.conv2d(x, w, bias, padding=1), 2, 3)


def bench_linear_4096():
    layer = torch.nn.Linear(4096, 4096)
    x = torch.randn(64, 4096)
    with torch.no_grad():
        return timed(lambda: layer(x), 10, 3)


def bench_int8_linear_4096():
    # quantize_dynamic: int8 weights per output channel, each batch's
    # activations quantized on the fly (fbgemm on x86).
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
    model = quantize_dynamic(torch.nn.Sequential(torch.nn.Linear(4096, 4096)),
                             {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)
    x = torch.randn(64, 4096)
    with torch.no_grad():
        return timed(lambda: model(x), 10, 3)


def bench_quantize_3x4096():
    # quantize_dynamic with per-channel int8 weights: what burn's
    # quantize_model does for Linear layers (no calibration pass needed).
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
    model = torch.nn.Sequential(*(torch.nn.Linear(4096, 4096) for _ in range(3)))
    return timed(lambda: quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8),
                 1, 3)


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


def bench_mlp(n_in=784, hidden=1024, classes=10, batch=256, iters=20, reps=5):
    """One SGD step (lr 0.01) of an n_in-hidden-hidden-classes relu MLP with
    cross-entropy, as PyTorch users write it."""
    torch.manual_seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden),
                                torch.nn.ReLU(), torch.nn.Linear(hidden, classes))
    x = torch.randn(batch, n_in)
    labels = torch.tensor([(i * 7) % classes for i in range(batch)])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def make(c):
        forward = c(model)

        def step():
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(forward(x), labels).backward()
            opt.step()

        return step

    return eager_or_compiled(make, iters, reps)


def bench_bf16_mlp(iters, reps):
    """mlp_train_step with the forward under torch.autocast(bfloat16): the
    matmuls in bf16, the weights and the update in f32. Eager only: CPUs
    without AVX-512 BF16 make each step take seconds, and compiling it
    takes longer still."""
    torch.manual_seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                                torch.nn.ReLU(), torch.nn.Linear(1024, 10))
    x = torch.randn(256, 784)
    labels = torch.tensor([(i * 7) % 10 for i in range(256)])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), labels)
        loss.backward()
        opt.step()

    return timed(step, iters, reps)


def bench_tiny():
    a = torch.tensor([1.0, 2.0, 3.0, 4.0])
    b = torch.tensor([4.0, 3.0, 2.0, 1.0])
    return min_time_loop(lambda: a + b, 0.2, 5)


def main():
    global COMPILE
    args = parse_args(__doc__.splitlines()[0])
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.no_compile:
        COMPILE = False
    torch.manual_seed(SEED)
    meta = {
        "peer": "torch",
        "version": torch.__version__.split("+")[0],
        "threads": torch.get_num_threads(),
        "compile": COMPILE,
        "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
    }
    run(globals(), args, meta)


if __name__ == "__main__":
    main()
