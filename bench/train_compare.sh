#!/usr/bin/env bash
# burn-train vs PyTorch 2.x (from PyPI, bench/peers_venv.sh) on Fashion-MNIST,
# side by side: the same model, batch size, optimiser, learning rate, seed
# and thread count. Reports the training pass per epoch, images per second
# and each process's peak resident memory (targets: burn >= 1.5x PyTorch's
# img/s at <= 0.5x its peak RSS). Usage:
#   bench/train_compare.sh                         # 5 epochs, batch 64, 2 threads
#   EPOCHS=1 LIMIT_BATCHES=200 bench/train_compare.sh   # a quick look
#   BUILD_DIR=build-foo THREADS=2 BATCH_SIZE=128 bench/train_compare.sh
#   TORCH_COMPILE=1 bench/train_compare.sh         # PyTorch's model through torch.compile
# Environment: BUILD_DIR (Release build dir, default build/release; configured
# and built if needed), EPOCHS (5), BATCH_SIZE (64), LR (0.001), LR_SCHEDULE (cosine), SEED (42),
# THREADS (2), WORKERS (1), LIMIT_BATCHES (unset: full epochs), PEERS_VENV
# (default BUILD_DIR/peers-venv), TORCH_PYTHON (another interpreter with
# torch, e.g. /usr/bin/python3 for Debian's 1.13), OUT_DIR (where the JSON
# summaries go; default BUILD_DIR/train-compare).
# Runs PyTorch first, then burn-train, one after the other (never at the same
# time: they would share the cores), then prints a per-epoch table.
# Epoch time = the training pass only; the test pass is reported separately.
# The machine's other load disturbs wall times: compare the best epochs, and
# rerun when the per-epoch ratios disagree. Both sides use libgomp, whose
# default busy-waiting collapses (4-10x slower epochs) when other processes
# take a core; on a busy machine export GOMP_SPINCOUNT=1000 (what
# scripts/main.sh uses) or OMP_WAIT_POLICY=passive, which apply to both
# (passive costs burn-train about 20% on an idle machine, the short spin
# almost nothing: bench/README.md, "Busy-waiting threads").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$root/build/release}
[[ $build = /* ]] || build=$root/$build
out=${OUT_DIR:-$build/train-compare}
venv=${PEERS_VENV:-$build/peers-venv}
epochs=${EPOCHS:-5}
batch=${BATCH_SIZE:-64}
lr=${LR:-0.001}
schedule=${LR_SCHEDULE:-cosine}
seed=${SEED:-42}
threads=${THREADS:-2}
workers=${WORKERS:-1}
limit=()
[[ -n ${LIMIT_BATCHES:-} ]] && limit=(--limit-batches "$LIMIT_BATCHES")
mkdir -p "$out"
source "$here/out_lock.sh"
lock_out_dir "$out" train_compare.sh

if [[ -n ${TORCH_PYTHON:-} ]]; then
  python=$TORCH_PYTHON
else
  python=$(bash "$here/peers_venv.sh" "$venv")
fi
compile=()
[[ -n ${TORCH_COMPILE:-} ]] && compile=(--compile)
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cache_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
if [[ $cache_type != Release ]]; then
  echo "[train_compare.sh] $build is a '$cache_type' build; timings need Release (set BUILD_DIR)" >&2
  exit 1
fi
ninja -C "$build" burn-train >/dev/null
train_bin=$build/apps/burn-train/burn-train

echo "[train_compare.sh] PyTorch ($threads threads) ..." >&2
python3 "$here/peak_rss.py" "$out/torch.rss.json" \
  "$python" "$here/fashion_mnist_torch.py" "${compile[@]}" --epochs "$epochs" --batch-size "$batch" --lr "$lr" --lr-schedule "$schedule" --seed "$seed" \
  --threads "$threads" "${limit[@]}" --json >"$out/torch.json"

echo "[train_compare.sh] burn-train ($threads threads) ..." >&2
python3 "$here/peak_rss.py" "$out/burn.rss.json" \
  env BURN_NUM_THREADS="$threads" "$train_bin" --epochs "$epochs" --batch-size "$batch" --lr "$lr" --lr-schedule "$schedule" --seed "$seed" \
  --threads "$threads" --workers "$workers" "${limit[@]}" --progress lines \
  --summary-json "$out/burn.json" >"$out/burn.log"
tail -n 2 "$out/burn.log" >&2

python3 - "$out" <<'EOF' | tee "$out/table.md"
import json, os, statistics, sys
out = sys.argv[1]
load = lambda name: json.load(open(os.path.join(out, name)))
torch, burn = load("torch.json"), load("burn.json")
torch_rss, burn_rss = load("torch.rss.json")["peak_rss_mib"], load("burn.rss.json")["peak_rss_mib"]
form = " through torch.compile" if torch["meta"].get("compile") else ", eager"
print(f"Fashion-MNIST, batch {burn['meta']['batch_size']}, Adam lr {burn['meta']['lr']}, "
      f"{burn['meta']['threads']} threads (burn on {burn['meta']['device']}, PyTorch {torch['meta']['torch']}{form}), "
      f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
print()
print("| epoch | torch train s | burn train s | torch img/s | burn img/s | burn / torch img/s | torch test acc | burn test acc |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
speed = lambda e, items: items / e["train_s"]
for t, b in zip(torch["epochs"], burn["epochs"]):
    ti, bi = speed(t, t["train_items"]), speed(b, b["train"]["items"])
    print(f"| {t['epoch']} | {t['train_s']:.2f} | {b['train_s']:.2f} | {ti:.0f} | {bi:.0f} | {bi / ti:.2f}x "
          f"| {t['test_acc']:.4f} | {b['test_acc']:.4f} |")
print()
# The fastest epoch is the one other load on the machine disturbed least; the
# median shows what a typical epoch cost during this run.
for name, pick in (("best", min), ("median", statistics.median)):
    ts = pick(e["train_s"] for e in torch["epochs"])
    bs = pick(e["train_s"] for e in burn["epochs"])
    print(f"{name} epoch: torch {ts:.2f} s, burn {bs:.2f} s, burn / torch speed {ts / bs:.2f}x (target >= 1.5x)")
print(f"peak resident memory: torch {torch_rss:.0f} MiB, burn {burn_rss:.0f} MiB, "
      f"burn / torch {burn_rss / torch_rss:.2f} (target <= 0.5)")
print(f"final test accuracy: torch {torch['final_test_acc']:.4f}, burn {burn['final_test_acc']:.4f} (target >= 0.91)")
rss = ", ".join(f"{e['rss_bytes'] / 2**20:.0f}" for e in burn["epochs"])
print(f"burn resident memory after each epoch (MiB): {rss} (target: flat)")
EOF
