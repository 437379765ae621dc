#!/usr/bin/env bash
# scripts/test.sh — build and run every test this machine can run.
#
#   1. CPU backend: build, run the whole suite (GEMM vs float64 and across ISAs,
#      API errors, element types, tile ops, HIP wavefront emulation, tools,
#      install + find_package consumer).
#   2. CUDA backend: build (nvcc; sm_80 + sm_90a) and run the suite — without a
#      GPU the device cases report themselves skipped, the host cases run.
#   3. HIP backend: build (gfx90a + gfx940) and run the suite, including the
#      ISA checks of the built kernels; device cases skip (no AMD GPU).
#   4. cpu-sanitize: the CPU backend again, every target built with
#      -fsanitize=address,undefined (errors fatal), the whole suite run under
#      AddressSanitizer, LeakSanitizer and UBSan, the install/consumer test too.
#   5. python: the Python package (CPU backend) pip-installed into a fresh
#      virtual environment, its pytest suite run (scripts/test_python.sh).
# Set TESSEL_TEST_BACKENDS="cpu cuda hip cpu-sanitize python" (default) to choose; TESSEL_SEED to replay.
# All five on the 2-vCPU Debian 12 VM (no GPU), fresh clones, 2026-12-02: 37 min before ccache, the sanitized
# build at -O1 and the faster attention reference, 30 min after (cpu 3.5, cuda 10, hip 2.5, cpu-sanitize 11, python 2).
# With cpu-sanitize on clang-15 and the cuda build only checked (c789ec2, the afternoon): 31.6 min on a VM running
# 1.4-1.7x slower (the cpu build's same compilations 691 against 414 cpu-s; python 177 against 103 s): cpu 6.5,
# cuda 5.5 (built in 320 s against 596 s in the morning), hip 3.5, cpu-sanitize 12.8 (its build 975 cpu-s on
# clang against 976 on gcc in the morning), python 3.5 -- about 21 min at the morning's speed.
# On a Zen 4 VM with AVX-512 visible (the AVX-512-only test programs built too), fresh clone of f43ff92,
# 2026-12-05: 9.1 min (cpu built in 109 s, cuda 90 s, hip 44 s, cpu-sanitize 139 s); 398 passed.
set -uo pipefail
cd "$(dirname "$0")/.."
backends=${TESSEL_TEST_BACKENDS:-cpu cuda hip cpu-sanitize python}
jobs=${TESSEL_JOBS:-$(nproc)}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
bash scripts/deps.sh $backends || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# ccache (where installed; TESSEL_TEST_CCACHE=0 turns it off): the cuda and hip builds compile most
# C++ sources exactly as the cpu build does (the CPU backend, the tools, the host tests; ~230 of 460
# compiler-seconds in the hip build), and ccache's preprocessor mode hands them the cpu build's
# objects. Its cache lives in build-test-ccache/ here; CCACHE_BASEDIR makes the paths in each
# compilation relative to its build folder, so that sibling build folders compile alike. Not for
# cpu-sanitize, whose flags no other build shares.
launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_C_COMPILER_LAUNCHER=)  # (clears one an earlier run left)
if [ "${TESSEL_TEST_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CCACHE_DIR=$PWD/build-test-ccache CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

# How many tests pytest's summary line ("N failed, M passed, K errors in Ts") counts as $1.
pytest_count() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE "[0-9]+" || echo 0; }

passed=0 failed=0 status=0
for b in $backends; do
  dir=build-test-$b
  if [ "$b" = python ]; then
    bash scripts/test_python.sh "$dir" || status=1
    summary=$(tail -1 "$dir/test.log" 2>/dev/null | grep -E " in [0-9.]+s")
    if [ -z "$summary" ]; then
      echo "=== tessel: python: pytest produced no summary"; status=1; failed=$((failed + 1)); continue
    fi
    passed=$((passed + $(pytest_count passed))); failed=$((failed + $(pytest_count failed) + $(pytest_count error)))
    continue
  fi
  backend=$b flags=(-DCMAKE_BUILD_TYPE=Release)
  # A GPU backend's build leaves out the CPU-only test programs, which the cpu and cpu-sanitize builds run
  # (TESSEL_TEST_CPU_PARTS; ~120 s of compiling each on the 2-vCPU VM).
  case $b in cuda | hip) flags+=(-DTESSEL_TEST_CPU_PARTS=OFF) ;; esac
  # Where no GPU is found, no CUDA kernel runs here: the CUDA code is compiled with few optimisations, only
  # to check that it builds (cmake/cuda.cmake: TESSEL_CUDA_CHECK_ONLY). TESSEL_TEST_CUDA_CHECK_ONLY=0 or 1 decides instead.
  if [ "$b" = cuda ]; then
    check_only=${TESSEL_TEST_CUDA_CHECK_ONLY:-$(nvidia-smi -L 2>/dev/null | grep -q "^GPU " && echo 0 || echo 1)}
    flags+=(-DTESSEL_CUDA_CHECK_ONLY=$([ "$check_only" = 1 ] && echo ON || echo OFF))
    [ "$check_only" = 1 ] && echo "=== tessel: cuda: no GPU here: its code is compiled with few optimisations, to be checked"
  fi
  flags+=("${launcher[@]}")  # (cpu-sanitize's flags are set afresh below)
  # cpu-sanitize: -g1 keeps the line tables that sanitizer reports print (file:line per frame) and drops the
  # rest of the debug information: its build took 478-505 s against 596 s with -g (2-vCPU Zen 4 VM, 2026-11-23).
  # -O1 (AddressSanitizer's own advice): build 492 s in a full run against 596 s at -O2 in a full run the same
  # morning (383 s alone); its ctest 231 s alone against 190 s (2-vCPU VM, 2026-12-02). The optimised code is
  # the cpu build's (-O3) and the python step's.
  # clang-15 (the cpu build's compiler is gcc: the suite runs under both): build 409 s against gcc's 476 s,
  # ctest 229 s against 231 s (2-vCPU VM, 2026-12-02, alone); TESSEL_SANITIZE_CC/CXX choose others.
  [ "$b" = cpu-sanitize ] && backend=cpu flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSEL_SANITIZE=address,undefined
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
    "-DCMAKE_C_COMPILER=${TESSEL_SANITIZE_CC:-clang-15}" "-DCMAKE_CXX_COMPILER=${TESSEL_SANITIZE_CXX:-clang++-15}")
  echo "=== tessel: $b backend: configure + build ($dir)"
  # (a build folder of another generator, left by an earlier version of this script, is made afresh)
  grep -qs "^CMAKE_GENERATOR:INTERNAL=Ninja$" "$dir/CMakeCache.txt" || rm -rf "$dir"
  mkdir -p "$dir"; start=$(date +%s)
  cached=0  # this build compiles through ccache
  [ -n "${CCACHE_DIR:-}" ] && [ "$b" != cpu-sanitize ] && cached=1 && ccache -z >/dev/null
  # Ninja: one job queue across targets, where make builds a target's objects only once the targets
  # it links are done (the CUDA build's 2-vCPU tail then ran one compiler for minutes).
  if ! cmake -S . -B "$dir" -G Ninja -DBACKEND="$backend" "${flags[@]}" >"$dir/configure.log" 2>&1; then
    cat "$dir/configure.log"; echo "=== tessel: $b: configure FAILED"; status=1; failed=$((failed + 1)); continue
  fi
  if ! cmake --build "$dir" -j "$jobs" >"$dir/build.log" 2>&1; then
    tail -60 "$dir/build.log"; echo "=== tessel: $b: build FAILED"; status=1; failed=$((failed + 1)); continue
  fi
  hits=""
  [ $cached = 0 ] || hits=$(ccache --print-stats | awk '$1 ~ /_cache_hit$/ {h += $2} $1 == "cache_miss" {m = $2}
                                                      END {printf " (%d of %d C/C++ compilations from ccache)", h, h + m}')
  echo "=== tessel: $b: built in $(( $(date +%s) - start )) s${hits}; running tests"
  if (cd "$dir" && ctest --output-on-failure -j "$jobs") >"$dir/test.log" 2>&1; then :; else status=1; fi
  grep -E "tests passed|Test +#|TESSEL_SEED" "$dir/test.log" | grep -v "^$" | sed 's/^/    /' | tail -40
  grep -q "tests failed out of" "$dir/test.log" || { echo "=== tessel: $b: ctest produced no summary"; status=1; }
  # (the list to a file first: grep -q stops reading at the first match, and under
  # pipefail the writer's SIGPIPE would fail the check once the list outgrows a pipe write)
  if [ "$b" = cpu-sanitize ] && { ! "$dir/tests/tessel_tests" --gtest_list_tests >"$dir/test_list.txt" 2>&1 ||
    ! grep -q "built with AddressSanitizer" "$dir/test_list.txt"; }; then
    echo "=== tessel: $b: the tests were not built with the sanitizers"; status=1
  fi
  read -r p f < <(awk '/tests passed, .* tests failed out of/ {tot=$NF; fl=$4} END {print tot-fl, fl}' "$dir/test.log")
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
  [ "${f:-0}" = 0 ] || { grep -B2 -A30 "FAILED\|Failed" "$dir/test.log" | head -120; }
done
echo "${passed} passed, ${failed} failed"
exit $status
