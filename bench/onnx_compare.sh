#!/usr/bin/env bash
# ResNet-18 inference from one .onnx file: burn (Device::cpu() and
# Device::flex(), through burn::onnx::Model) against ONNX Runtime's CPU
# execution provider, in one run. Prints export and load times, and per batch
# size (1, 32) each side's median time and ONNX Runtime's time / ours
# (> 1: burn is faster), burn at the default float32 precision and at
# Float32Precision::High (Winograd convolutions).
#
#   bench/onnx_compare.sh                 # build dir build/full (needs BURN_ONNX)
#   REPS=5 IMAGE=112 ROUNDS=1 bench/onnx_compare.sh
#
# The two sides take turns, ROUNDS times (3 unless set), and each row keeps
# its fastest round's median: on a machine whose neighbours come and go, one
# side measured in a quiet minute and the other in a busy one would say
# nothing about either.
#
# ONNX Runtime comes from PyPI, in a virtual environment made once under the
# build directory (onnxruntime-venv, shared with the ctest entry).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$root/build/full}
[[ $build = /* ]] || build=$root/$build
reps=${REPS:-10}
image=${IMAGE:-224}
rounds=${ROUNDS:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "onnx_compare.sh: ROUNDS must be a positive count, got '$rounds'" >&2; exit 2; }
venv=$build/onnxruntime-venv
out=${OUT_DIR:-$build/bench-results/onnx}
mkdir -p "$out"
source "$here/out_lock.sh"
lock_out_dir "$out" onnx_compare.sh

ninja -C "$build" burn-onnx-bench >/dev/null
if ! "$venv/bin/python" -c 'import onnxruntime, numpy' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check onnxruntime numpy
fi

: >"$out/burn.jsonl"
: >"$out/ort.jsonl"
for round in $(seq "$rounds"); do
  echo "[onnx_compare] round $round of $rounds: burn ..." >&2
  "$build/bench/burn-onnx-bench" "$out" --reps "$reps" --image "$image" >>"$out/burn.jsonl"
  echo "[onnx_compare] round $round of $rounds: ONNX Runtime ..." >&2
  "$venv/bin/python" "$here/onnx_ort.py" "$out" --reps "$reps" --image "$image" >>"$out/ort.jsonl"
done

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, image ${image}px, ${rounds} rounds of ${reps} runs per side"
"$venv/bin/python" - "$out/burn.jsonl" "$out/ort.jsonl" <<'PY'
import json, sys

def fastest(rows):
    # One row per measurement over all rounds: the fastest round's seconds,
    # and the largest difference any round saw.
    kept = {}
    for r in rows:
        key = tuple((k, r[k]) for k in ("what", "device", "batch") if k in r)
        if key not in kept:
            kept[key] = dict(r)
            continue
        k = kept[key]
        k["seconds"] = min(k["seconds"], r["seconds"])
        for name in ("max_rel_diff_vs_burn", "max_rel_diff_vs_burn_high"):
            if name in r:
                k[name] = max(k[name], r[name])
    return list(kept.values())

burn = fastest(json.loads(l) for l in open(sys.argv[1]))
ort = fastest(json.loads(l) for l in open(sys.argv[2]))
ort_load = next(r for r in ort if r["what"] == "load")
print(f"ONNX Runtime {ort_load['version']}")
for r in burn:
    if r["what"] == "export":
        print(f"export (burn): {r['seconds'] * 1e3:.0f} ms, {r['bytes'] / 2**20:.1f} MiB")
print(f"load: ONNX Runtime {ort_load['seconds'] * 1e3:.0f} ms; " + ", ".join(
    f"burn {r['device']} {r['seconds'] * 1e3:.0f} ms" for r in burn if r["what"] == "load"))
print()
print("| batch | ONNX Runtime | burn cpu | burn flex | ORT / best burn | burn cpu, High | burn flex, High | ORT / best High |")
print("|---|---|---|---|---|---|---|---|")
runs = [r for r in ort if r["what"] == "run"]
for o in runs:
    cells = []
    for what in ("run", "run_high"):
        mine = {r["device"]: r["seconds"] for r in burn if r["what"] == what and r["batch"] == o["batch"]}
        cells += [f"{mine[d] * 1e3:.1f} ms" if d in mine else "-" for d in ("cpu", "flex")]
        cells.append(f"{o['seconds'] / min(mine.values()):.2f}")
    print(f"| {o['batch']} | {o['seconds'] * 1e3:.1f} ms | " + " | ".join(cells) + " |")
print()
print("High: Device::set_float32_precision(burn::Float32Precision::High), Winograd 3x3 convolutions.")
print("The same network as a burn module (no ONNX, Highest): " + ", ".join(
    f"{r['device']} batch {r['batch']} {r['seconds'] * 1e3:.1f} ms" for r in burn if r["what"] == "native"))
print("ONNX Runtime's logits against flex's, max |diff| / (1e-4 + |flex|): " +
      ", ".join(f"batch {o['batch']} {o['max_rel_diff_vs_burn']:.1e} (High: {o['max_rel_diff_vs_burn_high']:.1e})"
                for o in runs))
PY
