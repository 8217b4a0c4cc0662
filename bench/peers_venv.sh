#!/usr/bin/env bash
# Makes (once) and checks the virtual environment with the modern peers of the
# benchmarks: PyTorch 2.x and JAX from PyPI (bench/peers-requirements.txt).
#
#   bench/peers_venv.sh VENV_DIR     # prints VENV_DIR/bin/python when ready
#
# The environment is made again when the requirements file changes (its hash
# is kept in VENV_DIR/requirements.sha256). Exits 4, with the reason, when it
# cannot be made: no python3-venv, or no connection to PyPI.
set -uo pipefail

venv=${1:?usage: peers_venv.sh VENV_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
requirements=$here/peers-requirements.txt
want=$(sha256sum "$requirements" | cut -d' ' -f1)

if [[ -x $venv/bin/python && $(cat "$venv/requirements.sha256" 2>/dev/null) == "$want" ]] &&
  "$venv/bin/python" -c 'import torch, jax, numpy' 2>/dev/null; then
  echo "$venv/bin/python"
  exit 0
fi

rm -rf "$venv"
if ! python3 -m venv "$venv" >/dev/null 2>&1; then
  echo "peers_venv: python3 cannot make a virtual environment (Debian: apt install python3-venv)" >&2
  exit 4
fi
echo "peers_venv: installing PyTorch 2.x and JAX from PyPI into $venv (once; about 5 GB) ..." >&2
if ! log=$(timeout 1200 "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" 2>&1); then
  rm -rf "$venv"
  echo "$log" | tail -n 5 >&2
  echo "peers_venv: the peers could not be installed from PyPI (pip's last words are above: no connection," \
    "a proxy's certificate this system does not trust, ...)" >&2
  exit 4
fi
echo "$want" >"$venv/requirements.sha256"
echo "$venv/bin/python"
