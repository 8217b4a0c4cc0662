# Sourced by the bench scripts: lock_out_dir DIR SCRIPT takes DIR for this
# run, or stops with a clear error when another run holds it. Two runs
# writing one directory at once (two ctest runs, say) would write into each
# other's result files; OUT_DIR gives each its own. The lock lasts until
# the script exits.
lock_out_dir() {
  local dir=$1 script=$2
  exec {out_lock_fd}>"$dir/.lock"
  if ! flock -n "$out_lock_fd"; then
    echo "[$script] another run is writing to $dir; wait for it to finish or set OUT_DIR" >&2
    exit 2
  fi
}
