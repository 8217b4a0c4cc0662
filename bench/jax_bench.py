#!/usr/bin/env python3
"""JAX's side of the CPU benchmark.

The same workloads, names, iteration counts and repetitions as
bench/flex_bench.cpp, each as a JAX user writes it: every workload
jit-compiled (XLA), NHWC convolutions and pooling (Flax's layout), buffer
donation for the in-place rows (XLA writes the result into the donated
input), and the whole training step (forward, jax.grad, SGD update) as one
compiled function. Each call ends with block_until_ready. Timing and output:
bench/peer_common.py.

Usage: jax_bench.py [--filter REGEX] [--threads N]
(XLA's CPU client uses every core; --threads is recorded, not applied.)
"""
import os

import jax
import jax.numpy as jnp
from jax import lax

from peer_common import N16M, min_time_loop, parse_args, run, timed

SEED = 42
KEYS = iter(jax.random.split(jax.random.PRNGKey(SEED), 64))


def randn(*shape):
    return jax.random.normal(next(KEYS), shape, jnp.float32)


def uniform(lo, hi, *shape):
    return jax.random.uniform(next(KEYS), shape, jnp.float32, lo, hi)


def call(f, *args):
    """A timed call: f(*args), waited for."""
    return lambda: f(*args).block_until_ready()


def bench_sgemm(n, iters, reps):
    return timed(call(jax.jit(jnp.matmul), randn(n, n), randn(n, n)), iters, reps)


def bench_sgemm_small(n):
    return min_time_loop(call(jax.jit(jnp.matmul), randn(n, n), randn(n, n)), 0.2, 5)


def bench_bmm():
    return timed(call(jax.jit(jnp.matmul), randn(32, 256, 256), randn(32, 256, 256)), 2, 3)


def bench_add_fresh():
    return timed(call(jax.jit(jnp.add), randn(N16M), randn(N16M)), 5, 5)


def bench_add_inplace():
    add = jax.jit(jnp.add, donate_argnums=0)
    state = {"a": randn(N16M)}
    b = randn(N16M)

    def step():
        state["a"] = add(state["a"], b).block_until_ready()

    return timed(step, 5, 5)


def bench_exp_fresh():
    return timed(call(jax.jit(jnp.exp), uniform(-0.5, 0.5, N16M)), 5, 5)


def bench_exp_inplace():
    exp = jax.jit(jnp.exp, donate_argnums=0)
    fresh = jax.jit(lambda k: jax.random.uniform(k, (N16M,), jnp.float32, -0.5, 0.5))
    key = next(KEYS)
    state = {"a": fresh(key)}

    def reset(i):
        # Repeated exp overflows after four rounds; reset outside the timer.
        if i % 3 == 0:
            state["a"] = fresh(key).block_until_ready()

    def step():
        state["a"] = exp(state["a"]).block_until_ready()

    return timed(step, 6, 5, setup=reset)


def bench_sum():
    return timed(call(jax.jit(jnp.sum), randn(N16M)), 5, 5)


def bench_softmax():
    return timed(call(jax.jit(lambda a: jax.nn.softmax(a, axis=-1)), randn(256, 256, 256)), 3, 5)


def bench_cumsum():
    return timed(call(jax.jit(lambda a: jnp.cumsum(a, axis=-1)), randn(4096, 4096)), 3, 5)


def bench_gather():
    idx = jax.random.randint(next(KEYS), (4096, 4096), 0, 4096)
    return timed(call(jax.jit(lambda a, i: jnp.take_along_axis(a, i, axis=1)), randn(4096, 4096), idx), 3, 5)


def bench_argmax():
    return timed(call(jax.jit(lambda a: jnp.argmax(a, axis=-1, keepdims=True)), randn(4096, 4096)), 3, 5)


def layer_norm(x, gamma, beta, eps=1e-5):
    # JAX has no layer-norm primitive: this is Flax's LayerNorm, which XLA fuses.
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps) * gamma + beta


def bench_layer_norm(rows):
    return timed(call(jax.jit(layer_norm), randn(rows, 1024), jnp.ones(1024), jnp.zeros(1024)), 3, 5)


def bench_gelu_16m():
    f = jax.jit(lambda x, w, b: jax.nn.gelu(x * w + b, approximate=False))
    return timed(call(f, randn(N16M // 1024, 1024), randn(1024), randn(1024)), 3, 5)


NHWC = ("NHWC", "HWIO", "NHWC")


def conv(x, w, b):
    return lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=NHWC) + b


def bench_conv_fwd():
    f = jax.jit(conv)
    return timed(call(f, randn(32, 56, 56, 64), randn(3, 3, 64, 64) * 0.05, jnp.zeros(64)), 2, 3)


def bench_bf16_matmul(n, iters, reps):
    bf16 = jnp.bfloat16
    return timed(call(jax.jit(jnp.matmul), randn(n, n).astype(bf16), randn(n, n).astype(bf16)), iters, reps)


def bench_bf16_conv_fwd():
    bf16 = jnp.bfloat16
    x, w = randn(32, 56, 56, 64).astype(bf16), (randn(3, 3, 64, 64) * 0.05).astype(bf16)
    return timed(call(jax.jit(conv), x, w, jnp.zeros(64, bf16)), 2, 3)


def bench_linear_4096():
    w, b = randn(4096, 4096) * 0.015, jnp.zeros(4096)
    return timed(call(jax.jit(lambda x, w, b: x @ w + b), randn(64, 4096), w, b), 10, 3)


def bench_int8_linear_4096():
    # JAX has no quantized layer of its own; its int8 form is an int8 dot with
    # int32 accumulation (preferred_element_type), scales applied after, the
    # activations quantized per call: the same arithmetic as the other sides.
    w = randn(4096, 4096) * 0.015
    w_scale = jnp.max(jnp.abs(w), axis=0) / 127.0
    w_q = jnp.round(w / w_scale).astype(jnp.int8)

    def layer(x, w_q, w_scale, b):
        x_scale = jnp.max(jnp.abs(x)) / 127.0
        x_q = jnp.clip(jnp.round(x / x_scale), -127, 127).astype(jnp.int8)
        acc = jax.lax.dot(x_q, w_q, preferred_element_type=jnp.int32)
        return acc.astype(jnp.float32) * (x_scale * w_scale) + b

    return timed(call(jax.jit(layer), randn(64, 4096), w_q, w_scale, jnp.zeros(4096)), 10, 3)


def bench_quantize_3x4096():
    # No quantization API of its own: the same per-channel int8 weights
    # (max |w| per output column, divide, round, clamp, cast), jit-compiled.
    ws = [randn(4096, 4096) * 0.015 for _ in range(3)]

    def quantize(w):
        scale = jnp.maximum(jnp.max(jnp.abs(w), axis=0) / 127.0, jnp.finfo(jnp.float32).tiny)
        return jnp.clip(jnp.round(w / scale), -127, 127).astype(jnp.int8), scale

    q = jax.jit(lambda ws: [quantize(w) for w in ws])
    return timed(lambda: jax.block_until_ready(q(ws)), 1, 3)


def bench_conv_chain_4():
    def chain(x, ws, b):
        h = x
        for i, w in enumerate(ws):
            h = jax.nn.relu(conv(h, w, b))
            if i == 1:
                h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.sum(h)

    ws = [randn(3, 3, 64, 64) * 0.05 for _ in range(4)]
    return timed(call(jax.jit(chain), randn(16, 56, 56, 64), ws, jnp.zeros(64)), 2, 3)


def bench_conv_fwd_bwd():
    grads = jax.jit(jax.grad(lambda x, w, b: jnp.sum(conv(x, w, b)), argnums=(0, 1, 2)))
    args = (randn(32, 56, 56, 64), randn(3, 3, 64, 64) * 0.05, jnp.zeros(64))
    return timed(lambda: jax.block_until_ready(grads(*args)), 1, 3)


def bench_max_pool():
    f = jax.jit(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 5, 5, 1), (1, 2, 2, 1), "VALID"))
    return timed(call(f, randn(2, 512, 512, 32)), 2, 3)


def bench_mlp(n_in=784, hidden=1024, classes=10, batch=256, iters=20, reps=5, dtype=None):
    """One SGD step (lr 0.01) of an n_in-hidden-hidden-classes relu MLP with
    cross-entropy: forward, grad and update in one jit-compiled function,
    the parameters donated. With `dtype`, the matmuls take their operands in
    that dtype (the parameters and the update stay f32), as autocast does."""
    def init(i, o):
        scale = 2.0 / i
        return uniform(-scale, scale, i, o)

    params = [init(n_in, hidden), jnp.zeros(hidden), init(hidden, hidden), jnp.zeros(hidden),
              init(hidden, classes), jnp.zeros(classes)]
    x = randn(batch, n_in)
    labels = jnp.array([(i * 7) % classes for i in range(batch)])

    def mm(a, w):
        if dtype is None:
            return a @ w
        return jnp.matmul(a.astype(dtype), w.astype(dtype), preferred_element_type=jnp.float32)

    def loss(p):
        w1, b1, w2, b2, w3, b3 = p
        h = jax.nn.relu(mm(x, w1) + b1)
        h = jax.nn.relu(mm(h, w2) + b2)
        logp = jax.nn.log_softmax(mm(h, w3) + b3, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    @jax.jit
    def sgd(p):
        return [w - 0.01 * g for w, g in zip(p, jax.grad(loss)(p))]

    state = {"p": params}

    def step():
        state["p"] = jax.block_until_ready(sgd(state["p"]))

    return timed(step, iters, reps)


def bench_bf16_mlp(iters, reps):
    return bench_mlp(iters=iters, reps=reps, dtype=jnp.bfloat16)


def bench_tiny():
    return min_time_loop(call(jax.jit(jnp.add), jnp.array([1.0, 2.0, 3.0, 4.0]), jnp.array([4.0, 3.0, 2.0, 1.0])),
                         0.2, 5)


def main():
    args = parse_args(__doc__.splitlines()[0])
    meta = {
        "peer": "jax",
        "version": jax.__version__,
        "threads": os.cpu_count(),
        "compile": True,
        "backend": jax.default_backend(),
    }
    run(globals(), args, meta, form="jit")


if __name__ == "__main__":
    main()
