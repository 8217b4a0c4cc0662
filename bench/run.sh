#!/usr/bin/env bash
# burn (flex, and cpu where built) against the modern peers on the CPU, one
# table: PyTorch 2.x and JAX from PyPI, in a virtual environment made once
# (bench/peers_venv.sh), run beside burn-flex-bench in one invocation.
#
#   bench/run.sh                  # every row, 2 interleaved rounds; build dir build/release
#   bench/run.sh --quick          # 4 rows, 1 round: the CI smoke (ctest bench_smoke)
#   BUILD_DIR=build/full bench/run.sh
#   FILTER='gelu|layer_norm_16m' bench/run.sh    # rows matching this regex (every side)
#   ROUNDS=3 THREADS=2 OUT_DIR=/tmp/x bench/run.sh
#
# Options: --quick (a few rows, one round, and a check that every column
# holds a finite number), --no-build (use the build as it is; for ctest).
# Environment: BUILD_DIR (a Release build; configured and built if needed),
# OUT_DIR (raw JSON and the table; default BUILD_DIR/bench-results), FILTER,
# ROUNDS (2: ours, PyTorch, JAX, then again, the best median per side
# counting, so a disturbance hits one round of one side), THREADS (intra-op
# threads of every side; default all cores), PEERS_VENV (default
# BUILD_DIR/peers-venv), NO_COMPILE=1 (PyTorch eager only).
#
# Each training row (mlp_train_step, mlp_small_step, bf16_mlp_train_step)
# also runs alone in a fresh process per side, for its peak resident memory.
# Where Debian's python3-torch is installed it is an extra column, never the
# target.
# Exits 4 (ctest: skipped) in --quick mode when the peers cannot be
# installed (no python3-venv, no connection to PyPI), with the reason.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
quick=0
build_it=1
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --no-build) build_it=0 ;;
    -h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "[run.sh] unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
build=${BUILD_DIR:-$root/build/release}
[[ $build = /* ]] || build=$root/$build
out=${OUT_DIR:-$build/bench-results}
venv=${PEERS_VENV:-$build/peers-venv}
threads=${THREADS:-$(nproc)}
if ((quick)); then
  filter=${FILTER:-'^(sgemm_128|gelu_16m|mlp_small_step|mlp_small_step_traced)(@cpu)?(/|$)'}
  rounds=${ROUNDS:-1}
else
  filter=${FILTER:-.}
  rounds=${ROUNDS:-2}
fi
if ! [[ $threads =~ ^[1-9][0-9]{0,3}$ && $rounds =~ ^[1-9]$ ]]; then
  echo "[run.sh] THREADS ($threads) must be 1-9999 and ROUNDS ($rounds) 1-9" >&2
  exit 2
fi
mkdir -p "$out"
source "$here/out_lock.sh"
lock_out_dir "$out" run.sh
rm -f "$out"/*.json "$out/table.md"

if ((build_it)); then
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBURN_BUILD_BENCH=ON -DBURN_CPU=ON
  elif ! grep -q '^BURN_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt"; then
    cmake -DBURN_BUILD_BENCH=ON "$build" >/dev/null
  fi
  ninja -C "$build" -j "$(nproc)" burn-flex-bench
fi
cache_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
if [[ $cache_type != Release ]]; then
  echo "[run.sh] $build is a '$cache_type' build; benchmarks need Release (set BUILD_DIR)" >&2
  exit 1
fi
ours_bin=$build/bench/burn-flex-bench
[[ -x $ours_bin ]] || { echo "[run.sh] $ours_bin is missing (build the burn-flex-bench target)" >&2; exit 1; }

rc=0
python=$(bash "$here/peers_venv.sh" "$venv") || rc=$?
if ((rc)); then
  ((quick && rc == 4)) && { echo "bench smoke: skipped: the peers could not be installed (reason above)"; exit 4; }
  exit "$rc"
fi
# Each side's command, used for the timed rounds and the memory runs alike.
ours_cmd=(env BURN_NUM_THREADS="$threads" "$ours_bin")
torch_cmd=("$python" "$here/torch_bench.py" --threads "$threads")
[[ -n ${NO_COMPILE:-} ]] && torch_cmd+=(--no-compile)
jax_cmd=("$python" "$here/jax_bench.py" --threads "$threads")

# Google Benchmark names a row like sgemm_1024/iterations:20/repeats:5/real_time:
# a FILTER that ends in $ after the row's name matches nothing on burn's side.
if ! "$ours_bin" --benchmark_list_tests=true --benchmark_filter="$filter" 2>/dev/null | grep -q .; then
  echo "[run.sh] FILTER '$filter' matches no row of $ours_bin; rows are named like" \
    "'sgemm_1024/iterations:20/...', so end a row's name with (/|\$), e.g. FILTER='^(sum_16m|gelu_16m)(@cpu)?(/|\$)'" >&2
  exit 2
fi

for ((r = 1; r <= rounds; r++)); do
  echo "[run.sh] round $r/$rounds: burn (flex, cpu) ..." >&2
  "${ours_cmd[@]}" --benchmark_format=json --benchmark_out="$out/ours.$r.json" --benchmark_out_format=json \
    --benchmark_report_aggregates_only=true --benchmark_filter="$filter" >/dev/null
  echo "[run.sh] round $r/$rounds: PyTorch ..." >&2
  "${torch_cmd[@]}" --filter "$filter" >"$out/torch.$r.json"
  echo "[run.sh] round $r/$rounds: JAX ..." >&2
  "${jax_cmd[@]}" --filter "$filter" >"$out/jax.$r.json"
done

# Peak resident memory of the training rows and of quantizing a model: each
# alone, in a fresh process.
for row in mlp_train_step mlp_small_step bf16_mlp_train_step quantize_3x4096; do
  [[ $row =~ $filter ]] || continue
  echo "[run.sh] peak memory of $row ..." >&2
  "$python" "$here/peak_rss.py" "$out/rss.$row.flex.json" "${ours_cmd[@]}" --benchmark_filter="^$row(/|\$)" >/dev/null
  if grep -q "\"$row@cpu" "$out/ours.1.json"; then
    "$python" "$here/peak_rss.py" "$out/rss.$row.cpu.json" "${ours_cmd[@]}" --benchmark_filter="^$row@cpu(/|\$)" \
      >/dev/null
  fi
  "$python" "$here/peak_rss.py" "$out/rss.$row.torch.json" "${torch_cmd[@]}" --filter "^$row\$" >/dev/null
  "$python" "$here/peak_rss.py" "$out/rss.$row.jax.json" "${jax_cmd[@]}" --filter "^$row\$" >/dev/null
done

if ((!quick)) && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "[run.sh] Debian's PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') (extra column) ..." >&2
  /usr/bin/python3 "$here/torch_bench.py" --threads "$threads" --filter "$filter" >"$out/torch-debian.json"
fi

check=()
((quick)) && check=(--check-complete)
python3 "$here/report.py" "${check[@]}" "$out" | tee "$out/table.md"
