#!/usr/bin/env bash
# Runs clang-tidy (Debian 12's clang-tidy 14) with the repository's
# .clang-tidy over the sources of the library, the apps, the tools and the
# examples, with the compile commands of build/full (configured if
# missing). Warnings in burn's own headers are reported once. Exits 1 if
# there is any warning.
#
#   bash scripts/tidy.sh                 every source file (8 to 11 minutes on 2 cores)
#   bash scripts/tidy.sh --recent HOURS  what the HOURS before HEAD and uncommitted edits changed
#   bash scripts/tidy.sh FILE...         these files
#
# With --recent, a changed .cpp is checked itself; a changed header through
# the source file of the same name, else through the first source that
# includes it; a changed .clang-tidy checks every file. CI runs --recent 6
# (the commits being landed); the whole tree was clean when the checks were
# chosen. Test suites are not checked: GoogleTest's macros expand into what
# several checks flag.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-tidy >/dev/null; then
  echo "tidy.sh: clang-tidy is not installed; run: bash scripts/install-deps.sh lint" >&2
  exit 2
fi

# LibTorch 1.13's headers do not compile under clang in C++20 mode (vectors
# of the incomplete c10::IValue), so the two sources that include them are
# left out; the rest of the LibTorch backend is checked.
unparsable='^src/backends/libtorch/(engine|ops)\.cpp$'
all_sources() { git ls-files 'src/*.cpp' 'apps/*.cpp' 'tools/*.cpp' 'examples/*.cpp' | grep -Ev "$unparsable"; }

# The source file that checks a changed header.
source_for_header() {
  local header=$1 stem candidate name
  stem=${header%.*}
  for candidate in "$stem.cpp" "src/${stem#include/burn/}.cpp"; do
    [[ -f $candidate ]] && all_sources | grep -qxF "$candidate" && { echo "$candidate"; return; }
  done
  name=$(basename "$header")
  all_sources | xargs grep -lF "$name\"" -- 2>/dev/null | head -1 || true
  all_sources | xargs grep -lF "$name>" -- 2>/dev/null | head -1 || true
}

files=()
case "${1:-}" in
  "") mapfile -t files < <(all_sources) ;;
  --recent)
    hours=${2:?--recent needs a number of hours}
    [[ $hours =~ ^[0-9]+$ ]] || { echo "tidy.sh: --recent takes whole hours, got '$hours'" >&2; exit 2; }
    head_time=$(git log -1 --format=%ct HEAD)
    base=$(git rev-list -1 --before=$((head_time - hours * 3600)) HEAD || true)
    if [[ -n $base ]]; then
      mapfile -t changed < <(git diff --name-only --diff-filter=d "$base")
    else
      mapfile -t changed < <(git ls-files)
    fi
    declare -A chosen=()
    # New checks or options apply to every file.
    if printf '%s\n' "${changed[@]}" | grep -qxF .clang-tidy; then mapfile -t changed < <(all_sources); fi
    for path in "${changed[@]}"; do
      case "$path" in
        src/*.cpp | apps/*.cpp | tools/*.cpp | examples/*.cpp)
          [[ $path =~ $unparsable ]] || chosen[$path]=1 ;;
        include/*.hpp | src/*.hpp | src/*.inc | apps/*.hpp)
          while read -r source; do [[ -n $source ]] && chosen[$source]=1; done < <(source_for_header "$path" | head -1) ;;
      esac
    done
    files=("${!chosen[@]}")
    ;;
  -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "tidy.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  *) files=("$@") ;;
esac

if [[ ${#files[@]} -eq 0 ]]; then
  echo "tidy: no source files to check"
  exit 0
fi

build=build/full
if [[ ! -f $build/compile_commands.json ]]; then
  cmake --preset full >/dev/null
fi

# One log per source, kept for a look at a warning's explanation lines.
out=build/tidy
rm -rf "$out"
mkdir -p "$out"
started=$SECONDS
printf '%s\n' "${files[@]}" | sort |
  xargs -P "$(nproc)" -I{} sh -c 'clang-tidy -p "$1" --quiet "$2" >"$3/$(echo "$2" | tr / _).log" 2>&1 || true' _ "$build" {} "$out"
# One line per distinct warning (a header's warning repeats in every source
# that includes it).
warnings=$(cat "$out"/*.log | grep -E '^[^ ].*: (warning|error): ' | sort -u || true)
count=$(printf '%s' "$warnings" | grep -c . || true)
if [[ $count -eq 0 ]]; then
  echo "tidy: ${#files[@]} files clean ($((SECONDS - started)) s)"
  exit 0
fi
printf '%s\n' "$warnings"
echo "tidy: $count warnings in ${#files[@]} files ($((SECONDS - started)) s); the sources that report them" \
  "(logs with the explanations in $out/):" >&2
grep -lE ': (warning|error): ' "$out"/*.log | sed "s|^$out/|  |; s|\.log$||" >&2
exit 1
