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
#   TRACE=1 bench/train_compare.sh                 # burn-train --trace (the step recorded once)
#   ROUNDS=3 EPOCHS=1 LIMIT_BATCHES=300 bench/train_compare.sh   # the two sides take turns
# Environment: BUILD_DIR (Release build dir, default build/release; configured
# and built if needed), EPOCHS (5), BATCH_SIZE (64), LR (0.001), LR_SCHEDULE (cosine), SEED (42),
# THREADS (2), WORKERS (1), LIMIT_BATCHES (unset: full epochs), PEERS_VENV
# (default BUILD_DIR/peers-venv), TORCH_PYTHON (another interpreter with
# torch, e.g. /usr/bin/python3 for Debian's 1.13), OUT_DIR (where the JSON
# summaries go; default BUILD_DIR/train-compare), ROUNDS (1), TRACE (unset:
# burn-train steps eagerly; set: --trace).
# Runs PyTorch first, then burn-train, one after the other (never at the same
# time: they would share the cores), ROUNDS times in turn, then prints a
# per-epoch table. Taking turns puts both sides in the same spells of the
# machine's speed, which on a shared VM moves by 20-40 % within minutes: one
# round of each decides less than the best epochs of several.
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
rounds=${ROUNDS:-1}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "[train_compare.sh] ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2; }
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
traced=()
[[ -n ${TRACE:-} ]] && traced=(--trace)
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

rm -f "$out"/torch.*.json "$out"/burn.*.json "$out"/burn.*.log
for ((round = 1; round <= rounds; ++round)); do
  echo "[train_compare.sh] round $round/$rounds: PyTorch ($threads threads) ..." >&2
  python3 "$here/peak_rss.py" "$out/torch.rss.$round.json" \
    "$python" "$here/fashion_mnist_torch.py" "${compile[@]}" --epochs "$epochs" --batch-size "$batch" --lr "$lr" --lr-schedule "$schedule" --seed "$seed" \
    --threads "$threads" "${limit[@]}" --json >"$out/torch.$round.json"

  echo "[train_compare.sh] round $round/$rounds: burn-train ($threads threads) ..." >&2
  python3 "$here/peak_rss.py" "$out/burn.rss.$round.json" \
    env BURN_NUM_THREADS="$threads" "$train_bin" --epochs "$epochs" --batch-size "$batch" --lr "$lr" --lr-schedule "$schedule" --seed "$seed" \
    --threads "$threads" --workers "$workers" "${limit[@]}" "${traced[@]}" --progress lines \
    --summary-json "$out/burn.$round.json" >"$out/burn.$round.log"
  tail -n 2 "$out/burn.$round.log" >&2
done

python3 - "$out" "$rounds" <<'EOF' | tee "$out/table.md"
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
load = lambda name: json.load(open(os.path.join(out, name)))
torch = [load(f"torch.{r}.json") for r in range(1, rounds + 1)]
burn = [load(f"burn.{r}.json") for r in range(1, rounds + 1)]
torch_rss = max(load(f"torch.rss.{r}.json")["peak_rss_mib"] for r in range(1, rounds + 1))
burn_rss = max(load(f"burn.rss.{r}.json")["peak_rss_mib"] for r in range(1, rounds + 1))
meta = burn[0]["meta"]
form = " through torch.compile" if torch[0]["meta"].get("compile") else ", eager"
burn_form = ", traced" if meta.get("traced") else ""
print(f"Fashion-MNIST, batch {meta['batch_size']}, Adam lr {meta['lr']}, "
      f"{meta['threads']} threads (burn on {meta['device']}{burn_form}, PyTorch {torch[0]['meta']['torch']}{form}), "
      f"{rounds} round(s) in turn, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
print()
print("| round | epoch | torch train s | burn train s | torch img/s | burn img/s | burn / torch img/s | torch test acc | burn test acc |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
speed = lambda e, items: items / e["train_s"]
for r in range(rounds):
    for t, b in zip(torch[r]["epochs"], burn[r]["epochs"]):
        ti, bi = speed(t, t["train_items"]), speed(b, b["train"]["items"])
        print(f"| {r + 1} | {t['epoch']} | {t['train_s']:.2f} | {b['train_s']:.2f} | {ti:.0f} | {bi:.0f} | {bi / ti:.2f}x "
              f"| {t['test_acc']:.4f} | {b['test_acc']:.4f} |")
print()
# The fastest epoch is the one other load on the machine disturbed least; the
# median shows what a typical epoch cost during this run.
torch_epochs = [e["train_s"] for run in torch for e in run["epochs"]]
burn_epochs = [e["train_s"] for run in burn for e in run["epochs"]]
for name, pick in (("best", min), ("median", statistics.median)):
    ts, bs = pick(torch_epochs), pick(burn_epochs)
    print(f"{name} epoch: torch {ts:.2f} s, burn {bs:.2f} s, burn / torch speed {ts / bs:.2f}x (target >= 1.5x)")
print(f"peak resident memory: torch {torch_rss:.0f} MiB, burn {burn_rss:.0f} MiB, "
      f"burn / torch {burn_rss / torch_rss:.2f} (target <= 0.5)")
print(f"final test accuracy: torch {torch[-1]['final_test_acc']:.4f}, burn {burn[-1]['final_test_acc']:.4f} (target >= 0.91)")
for r in range(rounds):
    rss = ", ".join(f"{e['rss_bytes'] / 2**20:.0f}" for e in burn[r]["epochs"])
    print(f"burn resident memory after each epoch (MiB), round {r + 1}: {rss} (target: flat)")
EOF
