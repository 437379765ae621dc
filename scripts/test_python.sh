#!/usr/bin/env bash
# scripts/test_python.sh [DIR] — the `python` step of scripts/test.sh: the
# Python package built and tested on the CPU backend.
#
# A fresh virtual environment (DIR/venv, removed first) gets `pip install
# ./python` (scikit-build-core + nanobind from PyPI in pip's isolated build
# environment; the CMake build kept in DIR/wheel, so a rerun recompiles only
# what changed — delete DIR for a build from scratch) and pytest, numpy,
# ml_dtypes, matplotlib (tessel.plot's tests) from PyPI; then the pytest
# suite python/tests runs. Logs: DIR/install.log, DIR/test.log (pytest's
# output, its summary line last).
# TESSEL_PYTHON picks the interpreter (default python3); TESSEL_SEED replays.
# Exit status: 0 when everything passed.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=$(mkdir -p "${1:-build-test-python}" && cd "${1:-build-test-python}" && pwd)
jobs=${TESSEL_JOBS:-$(nproc)}
start=$(date +%s)
echo "=== tessel: python: fresh venv, pip install ./python ($dir)"
rm -rf "$dir/venv" "$dir/test.log"  # no stale result counted if the install fails
pip=("$dir/venv/bin/python" -m pip --disable-pip-version-check)
if ! { "${TESSEL_PYTHON:-python3}" -m venv "$dir/venv" &&
       CMAKE_BUILD_PARALLEL_LEVEL=$jobs "${pip[@]}" install ./python -C build-dir="$dir/wheel" &&
       "${pip[@]}" install pytest numpy ml_dtypes matplotlib; } >"$dir/install.log" 2>&1; then
  tail -60 "$dir/install.log"; echo "=== tessel: python: install FAILED"; exit 1
fi
echo "=== tessel: python: installed in $(( $(date +%s) - start )) s; running pytest"
"$dir/venv/bin/python" -m pytest python/tests -q -rfE >"$dir/test.log" 2>&1
result=$?
[ $result = 0 ] || grep -E "^(FAILED|ERROR)" "$dir/test.log" | head -40
grep -E "TESSEL_SEED=" "$dir/test.log" | head -1
tail -1 "$dir/test.log"
exit $result
