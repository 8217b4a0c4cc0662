#!/usr/bin/env python3
"""Runs a command and writes its peak resident memory (the largest of the
process and anything it waited for), in MiB, as JSON to OUT:

  peak_rss.py OUT.json COMMAND [ARGS...]

Exits with the command's exit status. bench/run.sh uses it for the training
rows, each run alone in a fresh process so nothing else counts."""
import json
import resource
import subprocess
import sys


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    rc = subprocess.call(argv[2:])
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(argv[1], "w") as f:
        json.dump({"peak_rss_mib": peak_kib / 1024.0, "rc": rc}, f)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
