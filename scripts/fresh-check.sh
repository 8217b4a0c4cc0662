#!/usr/bin/env bash
# Proves the README's two commands on a fresh machine: makes a minimal Debian 12
# root (mmdebstrap's `minbase`: no compiler, no git, no Python), copies the
# committed tree into it and runs there, as a new user would,
#
#   1. bash scripts/main.sh --epochs 1 --limit-batches 50           (a normal user with sudo)
#   2. bash scripts/main.sh --epochs 2 --limit-batches 50 --resume  (the same user)
#   3. bash scripts/test.sh                                          (root)
#
# so both ways of installing (sudo and root) are exercised at every run. It
# prints one line per command with its result and time, the tail of ctest's
# output, and exits non-zero if any command failed. Mounts and the root are
# removed on every exit path, Ctrl-C included.
#
#   sudo bash scripts/fresh-check.sh [options]
#     --working-tree   copy the working tree's tracked files, uncommitted changes
#                      included (default: the committed HEAD)
#     --keep           keep the root afterwards (its path is printed; remove it
#                      with `bash scripts/fresh-check.sh --remove DIR`)
#     --remove DIR     unmount and delete a root kept with --keep
#     --logs DIR       where the commands' full logs go (default build/fresh-check)
#     --suite NAME     Debian suite (default bookworm)
#     --cache DIR      keep downloads and compiler output in DIR between runs
#                      (CI does): ccache's objects, pip's wheels and apt's
#                      .deb files. Every package is still installed into the
#                      new root, every header still read and every library
#                      still linked, so a missing install step still fails.
#
# Needs root (mmdebstrap, chroot and mounts), the network to Debian's package
# mirror, about 4 GiB of disk under $TMPDIR (default /var/tmp), and on 2 cores
# roughly an hour (with a warm --cache, a third of that). Environment passed
# into the root: BURN_WERROR, and http_proxy/https_proxy if set.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; }

tree=committed
keep=0
logs="$repo/build/fresh-check"
suite=bookworm
remove_dir=
cache=
while (($#)); do
  case "$1" in
    --working-tree) tree=working ;;
    --keep) keep=1 ;;
    --remove) remove_dir=${2:?--remove needs a directory}; shift ;;
    --logs) logs=${2:?--logs needs a directory}; shift ;;
    --suite) suite=${2:?--suite needs a name}; shift ;;
    --cache) cache=${2:?--cache needs a directory}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "fresh-check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [[ $(id -u) -ne 0 ]]; then
  echo "fresh-check.sh: needs root (it builds a Debian root with mmdebstrap and mounts /proc in it); run it with sudo" >&2
  exit 1
fi

# Everything below the root that is a mount point, deepest first.
mounts_under() { findmnt -rn -o TARGET | awk -v r="$1" '$0 == r || index($0, r "/") == 1' | sort -r; }

# Ends the processes whose root is inside `dir` (a command still running in
# the chroot after Ctrl-C), then unmounts and deletes it. Never deletes
# anything while a mount is left under it: rm would reach into /dev or /proc.
remove_root() {
  local dir=$1
  [[ -n "$dir" && -d "$dir" && "$dir" != / ]] || return 0
  local pid link
  for attempt in 1 2 3; do
    local found=0
    for link in /proc/[0-9]*/root; do
      pid=${link#/proc/}; pid=${pid%/root}
      if [[ "$(readlink "$link" 2>/dev/null)" == "$dir"* ]]; then
        kill -s "$([[ $attempt -lt 3 ]] && echo TERM || echo KILL)" "$pid" 2>/dev/null || true
        found=1
      fi
    done
    ((found)) || break
    sleep 2
  done
  local m
  while read -r m; do
    [[ -n "$m" ]] || continue
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done < <(mounts_under "$dir")
  if [[ -n "$(mounts_under "$dir")" ]]; then
    echo "fresh-check.sh: could not unmount everything under $dir; left it in place:" >&2
    mounts_under "$dir" >&2
    return 1
  fi
  rm -rf --one-file-system "$dir"
}

if [[ -n "$remove_dir" ]]; then
  remove_root "$(cd "$remove_dir/.." && pwd)/$(basename "$remove_dir")"
  exit
fi

if ! command -v mmdebstrap >/dev/null; then
  echo "fresh-check.sh: installing mmdebstrap"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi

work=$(mktemp -d "${TMPDIR:-/var/tmp}/burn-fresh.XXXXXX")
root="$work/root"
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if ((keep)) && [[ -d "$root" ]]; then
    echo "fresh-check: kept the root at $root (remove it with: bash scripts/fresh-check.sh --remove $work)"
    local m
    while read -r m; do [[ -n "$m" ]] && { umount "$m" 2>/dev/null || umount -l "$m" || true; }; done \
      < <(mounts_under "$root")
  else
    remove_root "$work" || rc=1
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "fresh-check: interrupted" >&2; exit 130' INT TERM

mkdir -p "$logs"
started=$SECONDS
step() { printf 'fresh-check: %-58s %s\n' "$1" "$2"; }

# The root: Debian's minimal variant plus sudo (a normal user with sudo is one
# of the two ways the README's commands are meant to be run).
# With --cache, ccache too: the one tool the cache needs that the README's
# commands do not install.
include=sudo
[[ -n $cache ]] && include=sudo,ccache
if ! mmdebstrap --variant=minbase --include="$include" --mode=root "$suite" "$root" >"$logs/mmdebstrap.log" 2>&1; then
  tail -n 20 "$logs/mmdebstrap.log" >&2
  step "make a minimal $suite root (mmdebstrap)" "FAILED (log: $logs/mmdebstrap.log)"
  exit 1
fi
step "make a minimal $suite root (mmdebstrap)" "ok ($((SECONDS - started)) s)"

chroot "$root" useradd --create-home --shell /bin/bash --user-group burn
echo 'burn ALL=(ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/burn"
chmod 0440 "$root/etc/sudoers.d/burn"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# The committed tree (or the working tree's tracked files), owned by the user.
src="$root/home/burn/burn-cpp"
mkdir -p "$src"
rev=HEAD
if [[ $tree == working ]]; then
  rev=$(git -C "$repo" stash create 2>/dev/null || true)
  rev=${rev:-HEAD}
fi
git -C "$repo" archive --format=tar "$rev" | tar -x -C "$src"
chroot "$root" chown -R burn:burn /home/burn/burn-cpp

mount -t proc proc "$root/proc"
mount -t sysfs -o ro sysfs "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"

# Runs a command in the root as `who` (root or burn) in the tree, logging it.
env_vars=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb)
for v in BURN_WERROR http_proxy https_proxy; do
  [[ -n "${!v:-}" ]] && env_vars+=("$v=${!v}")
done
# Like the proxy variables, the certificate bundle this machine's pip trusts
# (PIP_CERT, or `cert` in /etc/pip.conf): behind a TLS-intercepting proxy,
# Debian's bundle in the root lacks the proxy's certificate and the tests
# that install from PyPI (ONNX Runtime, the bench peers) could only skip.
pip_cert=${PIP_CERT:-$(sed -n 's/^cert *= *//p' /etc/pip.conf 2>/dev/null | head -n 1)}
if [[ -n $pip_cert && -f $pip_cert ]]; then
  mkdir -p "$root/etc/burn-fresh-check"
  cp "$pip_cert" "$root/etc/burn-fresh-check/pip-ca.crt"
  env_vars+=(PIP_CERT=/etc/burn-fresh-check/pip-ca.crt)
fi
# The cache shared between runs (--cache): bound into the root where apt
# keeps its downloads and where the variables below point ccache and pip.
# Both users write to it (ccache's files are made with umask 000).
cache_mounts=()
if [[ -n $cache ]]; then
  mkdir -p "$cache/ccache" "$cache/pip" "$cache/apt/partial"
  # Writable by the root's user too, whoever made the entries.
  chmod -R a+rwX "$cache/ccache" "$cache/pip"
  for part in ccache:/var/cache/burn-ci/ccache pip:/var/cache/burn-ci/pip apt:/var/cache/apt/archives; do
    mkdir -p "$root${part#*:}"
    mount --bind "$cache/${part%%:*}" "$root${part#*:}"
    cache_mounts+=("$root${part#*:}")
  done
  # The sloppiness lets ccache cache the test suites' compilations, which
  # use a precompiled header; depend mode keeps that header's cached copy
  # tied to its sources' exact bytes, comments included (.ci/run says why).
  env_vars+=(CCACHE_DIR=/var/cache/burn-ci/ccache CCACHE_UMASK=000 "CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-16G}"
    CCACHE_SLOPPINESS=pch_defines,time_macros CCACHE_DEPEND=true
    CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache PIP_CACHE_DIR=/var/cache/burn-ci/pip)
fi
if [[ -n $cache ]] && command -v ccache >/dev/null; then
  CCACHE_DIR=$cache/ccache ccache --zero-stats >/dev/null
fi
failed=0
# run_in_root WHO NAME LOG COMMAND PATTERN...: runs COMMAND in the tree as WHO
# (root or burn); it passes when it exits 0 and its output matches every
# PATTERN. The command runs in the background so that a signal to this script
# is handled at once (bash defers traps while a foreground child runs).
run_in_root() {
  local who=$1 name=$2 log=$3 cmd=$4
  shift 4
  local t0=$SECONDS home=/root spec=root:root ok=1 pattern
  if [[ $who == burn ]]; then home=/home/burn; spec=burn:burn; fi
  chroot --userspec="$spec" "$root" /usr/bin/env -i "${env_vars[@]}" HOME="$home" USER="$who" \
    /bin/bash -c "cd /home/burn/burn-cpp && $cmd" </dev/null >"$logs/$log" 2>&1 &
  wait $! || ok=0
  for pattern in "$@"; do grep -Eq "$pattern" "$logs/$log" || ok=0; done
  if ((ok)); then
    step "$name" "ok ($((SECONDS - t0)) s)"
  else
    step "$name" "FAILED ($((SECONDS - t0)) s, log: $logs/$log)"
    tail -n 30 "$logs/$log" | sed 's/^/  | /' >&2
    failed=1
  fi
}

run_in_root burn "main.sh --epochs 1 --limit-batches 50 (user, sudo)" main.log \
  "bash scripts/main.sh --epochs 1 --limit-batches 50 --progress none" 'final test accuracy: 0\.[0-9]+'
if ((!failed)); then
  run_in_root burn "main.sh --epochs 2 --limit-batches 50 --resume (user)" resume.log \
    "bash scripts/main.sh --epochs 2 --limit-batches 50 --progress none --resume" \
    "resuming from .*: 1 epoch done" 'final test accuracy: 0\.[0-9]+'
fi
run_in_root root "test.sh (root)" test.log "bash scripts/test.sh" '100% tests passed'
# ctest's own closing lines, so the run's summary is in this output.
if [[ -f "$logs/test.log" ]]; then
  grep -E '^[0-9]+% tests passed|^Total Test time|tests failed out of' "$logs/test.log" || true
fi

# Disk use, for the README's figures: the whole root, and its build trees
# (without the cache, which du would count as part of the root).
for m in "${cache_mounts[@]}"; do umount "$m"; done
if [[ -n $cache ]] && command -v ccache >/dev/null; then
  CCACHE_DIR=$cache/ccache ccache --print-stats 2>/dev/null |
    awk -F'\t' '$1 ~ /^(direct|preprocessed)_cache_hit$/ { hits += $2 }
                 $1 == "cache_miss" { misses = $2 }
                 END { if (hits + misses) printf "fresh-check: compiler cache: %d of %d compilations found in the cache\n", hits, hits + misses }'
fi
size() { du -sh --one-file-system "$@" 2>/dev/null | cut -f1 | paste -sd/; }
sizes="root $(size "$root"), build/release and build/full $(size "$src/build/release" "$src/build/full")"
if ((failed)); then
  step "fresh root: $sizes; $((SECONDS - started)) s in all" "FAILED"
  exit 1
fi
step "fresh root: $sizes; $((SECONDS - started)) s in all" "ok"
