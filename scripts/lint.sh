#!/usr/bin/env bash
# Checks that every tracked C++ file is formatted by the repository's
# .clang-format (what CI runs). With --fix, formats them in place instead.
#
#   bash scripts/lint.sh          report unformatted files, exit 1 if any
#   bash scripts/lint.sh --fix    format every tracked C++ file
#
# clang-format's output differs between major versions; the style is pinned
# to Debian 12's clang-format 14 (bash scripts/install-deps.sh lint).
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "lint.sh: unknown argument '$1' (expected: --fix, --help)" >&2; exit 2 ;;
esac

if ! command -v clang-format >/dev/null; then
  echo "lint.sh: clang-format is not installed; run: bash scripts/install-deps.sh lint" >&2
  exit 2
fi
version=$(clang-format --version)
if [[ "$version" != *" 14."* ]]; then
  echo "lint.sh: the style is pinned to clang-format 14, found: $version" >&2
  exit 2
fi

files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(git ls-files -z '*.cpp' '*.hpp' '*.h' '*.inc')
if ((fix)); then
  printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 16 clang-format -i
  echo "lint: formatted ${#files[@]} files"
  exit 0
fi
if ! printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 16 clang-format --dry-run --Werror 2>/tmp/lint.$$; then
  grep -oE '^[^:]+\.(cpp|hpp|h|inc)' /tmp/lint.$$ | sort -u | sed 's/^/  not formatted: /' >&2
  rm -f /tmp/lint.$$
  echo "lint: run 'bash scripts/lint.sh --fix' (clang-format 14) and commit the result" >&2
  exit 1
fi
rm -f /tmp/lint.$$
echo "lint: ${#files[@]} files formatted"
