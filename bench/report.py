#!/usr/bin/python3
"""Joins burn's Google Benchmark JSON and two torch_bench.py JSON files into
one Markdown table (ratio = PyTorch time / our time: >1 means burn is faster)
and checks each row against the issue-4 target.

Usage: report.py OURS.json TORCH_INSTALLED.json TORCH_TUNED.json
"""
import json
import sys

UNIT_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}

# name -> [(minimum ratio, against "installed" or "tuned")]. The tiny-op
# target "our time <= 0.3x PyTorch's" is the ratio >= 1/0.3.
TARGETS = {
    "sgemm_256": [(1.0, "tuned")],
    "sgemm_1024": [(1.0, "tuned")],
    "sgemm_2048": [(1.0, "tuned")],
    "bmm_32x256": [(1.0, "tuned")],
    "add_16m_fresh": [(3.0, "tuned")],
    "exp_16m_fresh": [(3.0, "tuned")],
    "add_16m_inplace": [(1.0, "tuned")],
    "exp_16m_inplace": [(1.0, "tuned")],
    "sum_16m": [(1.2, "tuned")],
    "softmax_256x256x256": [(1.2, "tuned")],
    "layer_norm_4096x1024": [(1.2, "tuned")],
    "conv2d_fwd": [(1.5, "tuned")],
    "mlp_train_step": [(1.0, "tuned"), (3.0, "installed")],
    "tiny_add_4": [(1.0 / 0.3, "tuned")],
}


def load_ours(path):
    """Median aggregate of each benchmark, in ms."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "aggregate" or b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].split("/")[0]
        out[name] = b["real_time"] * UNIT_TO_MS[b["time_unit"]]
    if not out:
        raise SystemExit(f"[report] {path}: no median aggregates (run with --benchmark_repetitions > 1)")
    return out


def load_torch(path):
    with open(path) as f:
        data = json.load(f)
    return data["results"], data["meta"]


def fmt_ms(v):
    if v is None:
        return "-"
    return f"{v:.4g}" if v >= 0.01 else f"{v:.2e}"


def fmt_ratio(torch_ms, ours_ms):
    if torch_ms is None or ours_ms is None or ours_ms <= 0:
        return None
    return torch_ms / ours_ms


def verdict(name, ratios):
    targets = TARGETS.get(name)
    if not targets:
        return "no target"
    parts = []
    for need, against in targets:
        have = ratios[against]
        if have is None:
            parts.append(f"≥{need:.2f}x {against}: not measured")
            continue
        state = "met" if have >= need else "MISSED"
        parts.append(f"{state} (≥{need:.2f}x {against}: {have / need:.2f} of target)")
    return "; ".join(parts)


def main(argv):
    if len(argv) != 4:
        raise SystemExit(__doc__)
    ours = load_ours(argv[1])
    installed, meta_i = load_torch(argv[2])
    tuned, meta_t = load_torch(argv[3])
    names = list(ours) + [n for n in installed if n not in ours]
    print("| workload | ours (ms) | PyTorch as installed (ms) | PyTorch tuned (ms) | ratio vs installed | ratio vs tuned | target |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name in names:
        o, i, t = ours.get(name), installed.get(name), tuned.get(name)
        ratios = {"installed": fmt_ratio(i, o), "tuned": fmt_ratio(t, o)}
        ri = "-" if ratios["installed"] is None else f"{ratios['installed']:.2f}x"
        rt = "-" if ratios["tuned"] is None else f"{ratios['tuned']:.2f}x"
        print(f"| {name} | {fmt_ms(o)} | {fmt_ms(i)} | {fmt_ms(t)} | {ri} | {rt} | {verdict(name, ratios)} |")
    print()
    print(f"PyTorch {meta_i['torch']}: as installed {meta_i['threads']} thread(s), "
          f"OPENBLAS_CORETYPE={meta_i['OPENBLAS_CORETYPE']}, OMP_WAIT_POLICY={meta_i['OMP_WAIT_POLICY']}; "
          f"tuned {meta_t['threads']} thread(s), OPENBLAS_CORETYPE={meta_t['OPENBLAS_CORETYPE']}, "
          f"OMP_WAIT_POLICY={meta_t['OMP_WAIT_POLICY']}.")
    print("Notes: *_inplace rows are `a = std::move(a) + b` / `a = std::move(a).exp()` in burn (the consumed tensor's storage takes the result) "
          "vs torch's add_/exp_; layer_norm is a composite (mean_dim, var_bias, sub, div, mul, add) on both "
          "sides; mlp_train_step uses cross-entropy as -mean(gather(log_softmax)) and hand-written SGD.")


if __name__ == "__main__":
    main(sys.argv)
