#!/usr/bin/env python3
"""Joins the JSON that bench/run.sh leaves in its output folder into one
Markdown table: burn's time on flex and cpu, each peer's (PyTorch 2.x, JAX,
and Debian's PyTorch as an extra column where run), the best peer, the ratio
best peer / ours (> 1 means burn is faster) and the row's target; then the
training rows' peak resident memory per side.

Files read from OUT_DIR: ours.N.json (Google Benchmark, rows "<row>" on
Device::flex() and "<row>@cpu" on Device::cpu()), torch.N.json and
jax.N.json for rounds N = 1, 2, ... (a side's time for a row is its best
median over the rounds), torch-debian.json (optional) and
rss.<row>.<side>.json (bench/peak_rss.py).

Usage: report.py [--check-complete] OUT_DIR
--check-complete (the CI smoke): exit 1 unless every side measured the same
rows, every cell is a finite positive number, and each training row has its
peak memory on every side.
"""
import glob
import json
import math
import os
import sys

UNIT_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
CPU_SUFFIX = "@cpu"
PEERS = ("torch", "jax")
PEER_TITLES = {"torch": "PyTorch", "jax": "JAX"}
RSS_ROWS = ("mlp_train_step", "mlp_small_step", "bf16_mlp_train_step", "quantize_3x4096")

# Targets against the best modern peer of the same run: (our side, minimum
# ratio, against). "best" as our side means the faster of flex and cpu;
# "best" as against, the faster of PyTorch 2.x and JAX.
_GEMM = [("best", 1.1, "best")]
_COMPOSITE = [("cpu", 1.5, "best"), ("flex", 1.0, "best")]
TARGETS = {
    "sgemm_32": _GEMM, "sgemm_128": _GEMM, "sgemm_256": _GEMM, "sgemm_1024": _GEMM, "sgemm_2048": _GEMM,
    "bmm_32x256": _GEMM,
    "conv2d_fwd": [("best", 1.3, "best")],
    "conv2d_fwd_bwd": [("best", 1.3, "best")],
    "add_16m_inplace": [("best", 1.0, "best")],
    "exp_16m_inplace": [("best", 1.0, "best")],
    "sum_16m": [("best", 1.1, "best")],
    "softmax_256x256x256": _COMPOSITE,
    "layer_norm_4096x1024": _COMPOSITE,
    "layer_norm_16m": _COMPOSITE,
    "gelu_16m": _COMPOSITE,
    "mlp_train_step": [("best", 1.2, "best")],
    "mlp_small_step": [("best", 1.0, "jax")],
    "mlp_small_step_traced": [("best", 1.0, "jax")],
}
# burn rows that time a peer row's workload another way: the peers' times
# come from that row.
PEER_ROW = {"mlp_small_step_traced": "mlp_small_step"}


def best_of(a, b):
    vals = [v for v in (a, b) if v is not None]
    return min(vals) if vals else None


def load_ours(paths):
    """{row: ms} for flex and for cpu (the best median over rounds), and the run's context."""
    flex, cpu, context = {}, {}, {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        context = data.get("context", context)
        for b in data["benchmarks"]:
            if b.get("run_type") != "aggregate" or b.get("aggregate_name") != "median":
                continue
            name = b["run_name"].split("/")[0]
            ms = b["real_time"] * UNIT_TO_MS[b["time_unit"]]
            side, row = (cpu, name[: -len(CPU_SUFFIX)]) if name.endswith(CPU_SUFFIX) else (flex, name)
            side[row] = best_of(side.get(row), ms)
    return flex, cpu, context


def load_peer(paths):
    """({row: ms} best over rounds, {row: form}, meta)."""
    results, forms, meta = {}, {}, {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        meta = data["meta"]
        for row, ms in data["results"].items():
            if results.get(row) is None or ms < results[row]:
                results[row] = ms
                forms[row] = data.get("forms", {}).get(row, "")
    return results, forms, meta


def rounds(out, side):
    return sorted(glob.glob(os.path.join(out, f"{side}.[0-9]*.json")))


def fmt_ms(v):
    if v is None:
        return "-"
    return f"{v:.4g}" if v >= 0.01 else f"{v:.2e}"


def ratio(peer_ms, ours_ms):
    if peer_ms is None or ours_ms is None or ours_ms <= 0:
        return None
    return peer_ms / ours_ms


def fmt_x(r):
    return "-" if r is None else f"{r:.2f}x"


def verdict(row, ours, peers):
    """'met'/'MISSED' per target of the row."""
    parts = []
    for side, need, against in TARGETS.get(row, []):
        have = ratio(peers.get(against), ours[side])
        label = f"{side if side != 'best' else 'ours'} ≥{need:.1f}x {'best peer' if against == 'best' else against}"
        if have is None:
            parts.append(f"{label}: not measured")
        else:
            parts.append(f"{'met' if have >= need else 'MISSED'} ({label}: {have:.2f}x)")
    return "; ".join(parts) if parts else "no target"


def finite(v):
    return v is not None and math.isfinite(v) and v > 0


def main(argv):
    check = "--check-complete" in argv
    args = [a for a in argv[1:] if a != "--check-complete"]
    if len(args) != 1:
        raise SystemExit(__doc__)
    out = args[0]
    ours_paths = rounds(out, "ours")
    if not ours_paths:
        raise SystemExit(f"[report] {out}: no ours.N.json (run bench/run.sh)")
    flex, cpu, context = load_ours(ours_paths)
    peers = {p: load_peer(rounds(out, p)) for p in PEERS if rounds(out, p)}
    debian_path = os.path.join(out, "torch-debian.json")
    debian = load_peer([debian_path]) if os.path.exists(debian_path) else None

    rows = list(flex) + [r for r in cpu if r not in flex]
    for p in peers.values():
        rows += [r for r in p[0] if r not in rows]
    problems = []

    titles = [f"{PEER_TITLES[p]} {peers[p][2]['version']} (ms)" for p in peers]
    extra = [f"PyTorch {debian[2]['version']}, Debian (ms)"] if debian else []
    print("| workload | ours flex (ms) | ours cpu (ms) | " + " | ".join(titles + extra)
          + " | best peer / ours | target |")
    print("|---|" + "---:|" * (2 + len(titles) + len(extra) + 1) + "---|")
    for row in rows:
        f, c = flex.get(row), cpu.get(row)
        ours = {"flex": f, "cpu": c, "best": best_of(f, c)}
        peer_row = PEER_ROW.get(row, row)
        peer_ms = {p: peers[p][0].get(peer_row) for p in peers}
        best_peer = None
        for ms in peer_ms.values():
            best_peer = best_of(best_peer, ms)
        peer_ms["best"] = best_peer
        cells = [fmt_ms(f), fmt_ms(c)]
        for p in peers:
            form = peers[p][1].get(peer_row, "")
            cells.append(fmt_ms(peer_ms[p]) + (" (compiled)" if form == "compiled" else ""))
        if debian:
            cells.append(fmt_ms(debian[0].get(row)))
        cells.append(fmt_x(ratio(best_peer, ours["best"])))
        print(f"| {row} | " + " | ".join(cells) + f" | {verdict(row, ours, peer_ms)} |")
        for side, v in [("ours flex", f)] + [(PEER_TITLES[p], peer_ms[p]) for p in peers]:
            if not finite(v):
                problems.append(f"{row}: no finite time for {side}")
        if row in cpu and not finite(c):
            problems.append(f"{row}: no finite time for ours cpu")
    for p in PEERS:
        if p not in peers:
            problems.append(f"no {PEER_TITLES[p]} results in {out}")

    rss_rows = [r for r in RSS_ROWS if r in rows]
    if rss_rows:
        print()
        print("Peak resident memory of the training rows and of quantize_3x4096, each run alone in a fresh process (MiB):")
        print()
        sides = ["flex", "cpu"] + list(PEERS)
        print("| row | ours flex | ours cpu | PyTorch | JAX |")
        print("|---|---:|---:|---:|---:|")
        for row in rss_rows:
            cells = []
            for side in sides:
                path = os.path.join(out, f"rss.{row}.{side}.json")
                mib = json.load(open(path))["peak_rss_mib"] if os.path.exists(path) else None
                cells.append("-" if mib is None else f"{mib:.0f}")
                if (side != "cpu" or row in cpu) and not finite(mib):
                    problems.append(f"{row}: no peak memory for {side}")
            print(f"| {row} | " + " | ".join(cells) + " |")

    print()
    print(f"Run: {context.get('date', '?')}, {context.get('cpu_model', '?')}, {context.get('num_cpus', '?')} cores; "
          f"burn on {context.get('burn_threads', '?')} threads, oneDNN ISA {context.get('onednn_isa', '?')}, "
          f"Highway target {context.get('highway_target', '?')}; "
          + "; ".join(f"{PEER_TITLES[p]} {m['version']} on {m['threads']} threads"
                      + (" (torch.compile tried per composite and step)" if p == "torch" and m.get("compile") else "")
                      for p, (_, _, m) in peers.items())
          + f"; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}; "
          f"{len(ours_paths)} round(s), best median per side.")
    print("flex = Device::flex() (eager), cpu = Device::cpu() (lazy fusion over flex's kernels). Each peer runs its "
          "own idiomatic form (bench/torch_bench.py, bench/jax_bench.py); burn's layer_norm rows run "
          "burn::module::layer_norm.")

    if check and problems:
        print("\n[report] incomplete:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
