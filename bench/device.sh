#!/usr/bin/env bash
# bench/device.sh — the one script for a call on the GPU machine (CUDA backend).
#
# Run from the repository root on the device machine, with the gitignored
# .devdeps/ carried along (bench/pack_device_deps.sh fills it here: oneTBB,
# xsimd, GoogleTest sources). It
#   1. builds -DBACKEND=cuda (Release) with the machine's nvcc, -j16;
#   2. runs the test suite (ctest), if the build has tests;
#   3. runs compute-sanitizer memcheck, racecheck (and synccheck) on the GEMM tests
#      (tests/tessel_tests, GEMM suites) and on a private probe if present;
#   4. runs tessel-bench gemm (cuBLAS as the peer, same process) and the probe;
#   5. writes logs under $OUT and prints a short table last.
# Environment: OUT (results folder; default ./device-out), TESSEL_DEVICE_ARCHS
# (CMAKE_CUDA_ARCHITECTURES for this build; default 90a, the H100's own),
# TESSEL_DEVICE_STEPS (the steps, in order; default "build test sanitize bench"),
# TESSEL_PROBE_MODE (the probe's mode in the bench step: full or quick),
# TESSEL_SANITIZE_SCOPE (gemm: skip the attention sanitizer runs; attention: only those; launch: the
# dependent-launch tests under the three tools and the GEMM tests under memcheck; split: the split
# schedule tests under the three tools, the GEMM and dependent-launch tests under memcheck; plain: the
# plain-store kernels' schedule tests under the three tools).
# Steps: build test sanitize bench odd gvariants parts l2sides ncu ncuattn l2req trace variants clock attention cpu cputests amxtests python (see each below).
# The test step also reruns the GEMM and attention tests with TESSEL_CUDA_POLICY=sm80, and the GEMM
# tests with TESSEL_CUDA_REPACK=never (no aligned copies of misaligned matrices: backends/cuda/operand_copy.hpp),
# the GEMM and dependent-launch tests with TESSEL_CUDA_SPLIT_TILE=128x256 (the 128 × 256 split kernel), and
# the GEMM tests with TESSEL_CUDA_SPLIT_TILE=128x128, 64x128 and none (each of those kernels, or the unsplit
# ones, on every call of the TMA path), and with none and TESSEL_CUDA_PLAIN_TILE=128x256 or 128x192 (the
# plain-store kernel on those tiles wherever it runs).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/device-out}
mkdir -p "$OUT"
archs=${TESSEL_DEVICE_ARCHS:-90a}
steps=${TESSEL_DEVICE_STEPS:-build test sanitize bench attention}
build=$root/build-device
deps=$root/.devdeps
summary=$OUT/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
export TESSEL_SEED=${TESSEL_SEED:-20261117}

note "== tessel device run $(date -u +%Y-%m-%dT%H:%M:%SZ)"
note "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)"
note "nvcc: $(nvcc --version | tail -1), cmake: $(cmake --version | head -1)"
[ -d "$deps/usr" ] || note "WARNING: .devdeps/ missing: run bench/pack_device_deps.sh here and carry .devdeps"
export CMAKE_PREFIX_PATH=$deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}  # nested configures (install test) too
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ---- 1. build ---------------------------------------------------------------
step_build() {
  local t0 configured=
  t0=$(date +%s)
  # Whole tree first; if another part does not configure yet, without the tools, then without the tests.
  for extra in "" "-DTESSEL_BUILD_TOOLS=OFF" "-DTESSEL_BUILD_TOOLS=OFF -DTESSEL_BUILD_TESTS=OFF"; do
    rm -f "$build/CMakeCache.txt"
    # shellcheck disable=SC2086
    if cmake -S . -B "$build" -G Ninja -DBACKEND=cuda -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
      -DCMAKE_PREFIX_PATH="$deps/usr" -DTESSEL_GTEST_SOURCE_DIR="$deps/googletest" $extra >>"$OUT/build.log" 2>&1; then
      configured=1
      [ -n "$extra" ] && note "configure: only with $extra (see build.log)"
      break
    fi
  done
  [ -n "$configured" ] || { note "configure FAILED (build.log)"; tail -30 "$OUT/build.log"; return; }
  if ! cmake --build "$build" -j16 >>"$OUT/build.log" 2>&1; then
    note "full build FAILED (build.log); building the library and support only"
    grep -E "error|Error" "$OUT/build.log" | head -20
    cmake --build "$build" -j16 --target tessel tessel_support tessel_c >>"$OUT/build.log" 2>&1 || note "library build FAILED"
  fi
  note "build ($archs): $(( $(date +%s) - t0 )) s"
  if [ -f "$deps/probe/probe.cu" ] && [ -f "$build/libtessel.a" ]; then
    nvcc -O2 -std=c++17 -arch=sm_90a -I"$build/include" "$deps/probe/probe.cu" -o "$build/probe" \
      "$build/libtessel.a" -L"$deps/usr/lib/x86_64-linux-gnu" -ltbb -lcublas -Xlinker -rpath="$deps/usr/lib/x86_64-linux-gnu" \
      >>"$OUT/build.log" 2>&1 || { note "probe build FAILED (build.log)"; tail -20 "$OUT/build.log"; }
  fi
}
tests_bin=$build/tests/tessel_tests
gemm_filter='*GemmShapes*:*GemmLayouts*:*GemmCrossBackend*'
attention_filter='*Attention*'

# ---- 2. tests ---------------------------------------------------------------
# The test binary's tests matching FILTER once more with VAR=value set (and BINARY's, where built).
rerun() {  # "VAR=value ..." filter [binary]
  local r=passed
  # shellcheck disable=SC2086
  env $1 timeout 150 "$tests_bin" --gtest_filter="$2" --gtest_brief=1 >>"$OUT/ctest.log" 2>&1 || r=FAILED
  # shellcheck disable=SC2086
  if [ -n "${3:-}" ] && [ -x "$3" ]; then env $1 timeout 150 "$3" --gtest_brief=1 >>"$OUT/ctest.log" 2>&1 || r=FAILED; fi
  note "tests '$2'${3:+ and ${3##*/}} with $1: $r, $(grep -E '^\[  PASSED  \]' "$OUT/ctest.log" | tail -1)"
}
step_test() {
  [ -f "$build/CTestTestfile.cmake" ] || { note "ctest: no tests in this build"; return; }
  local t0 r
  t0=$(date +%s)
  if timeout 200 ctest --test-dir "$build" --output-on-failure -j4 --timeout 180 >"$OUT/ctest.log" 2>&1; then r=passed; else r=FAILED; fi
  note "ctest: $r, $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1) ($(( $(date +%s) - t0 )) s)"
  grep -E "Failed|\*\*\*|FAILED" "$OUT/ctest.log" | head -20
  # The GEMM and attention tests once more on the sm80 (mma.sync) policy, which Hopper otherwise skips
  # (TESSEL_TEST_RERUNS=0: ctest alone, for a call whose change leaves the device code as it was).
  if [ -x "$tests_bin" ] && [ "${TESSEL_TEST_RERUNS:-1}" != 0 ]; then
    rerun TESSEL_CUDA_POLICY=sm80 "$gemm_filter:*Attention*"
    # Once more without the aligned copies of misaligned 16-bit matrices (operand_copy.hpp): the sm80 policy takes those.
    rerun TESSEL_CUDA_REPACK=never "$gemm_filter:*Views*"
    # The kernels the dispatcher chooses among (gemm_instance.hpp's choose_split_tile), each forced:
    # the 128 × 256 split kernel wherever its plan splits (with the dependent-launch tests), the
    # 128 × 128 and 64 × 128 ones on every call of the TMA path (units whole where their plans do not
    # split), and none of them (the unsplit kernels on every call).
    rerun TESSEL_CUDA_SPLIT_TILE=128x256 "$gemm_filter" "$build/tests/tessel_dependent_launch_tests"
    rerun TESSEL_CUDA_SPLIT_TILE=128x128 "$gemm_filter"
    rerun TESSEL_CUDA_SPLIT_TILE=64x128 "$gemm_filter"
    rerun TESSEL_CUDA_SPLIT_TILE=none "$gemm_filter"
    # The plain-store kernel's tiles (gemm_instance.hpp's plain_tile_forced), each on every call that reaches it.
    rerun "TESSEL_CUDA_SPLIT_TILE=none TESSEL_CUDA_PLAIN_TILE=128x256" "$gemm_filter"
    rerun "TESSEL_CUDA_SPLIT_TILE=none TESSEL_CUDA_PLAIN_TILE=128x192" "$gemm_filter"
  fi
}

# ---- 3. sanitizers ------------------------------------------------------------
sanitize() {  # tool label command...
  local tool=$1 label=$2; shift 2
  local log=$OUT/sanitize.log t0
  t0=$(date +%s)
  echo "==== $tool on $label: ${*//$root\//}" >>"$log"  # paths relative to the repository
  local part
  part=$(mktemp)
  timeout "${TESSEL_SANITIZE_TIMEOUT:-120}" compute-sanitizer --tool "$tool" --error-exitcode 99 "$@" >"$part" 2>&1
  local rc=$?
  cat "$part" >>"$log"
  local summ
  summ="$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$part" | tail -1) $(grep -E "^\[  (PASSED|FAILED)  \]" "$part" | tr "\n" " ")"
  rm -f "$part"
  note "sanitizer $tool on $label: rc=$rc${summ:+ $summ} ($(( $(date +%s) - t0 )) s)"
}
# The attention tests (public API: the TMA schedule on sm_90a where tensor maps apply, the ring
# elsewhere) and the direct launches of both sm90 attention configurations.
sanitize_attention() {
  local tool
  for tool in memcheck racecheck synccheck; do
    TESSEL_SANITIZE_TIMEOUT=240 sanitize $tool attention "$tests_bin" --gtest_filter="$attention_filter" --gtest_brief=1
  done
  if [ -x "$build/tests/tessel_attention_sm90_tests" ]; then
    for tool in memcheck racecheck synccheck; do
      sanitize $tool attention_sm90_tests "$build/tests/tessel_attention_sm90_tests" --gtest_brief=1
    done
  fi
}
step_sanitize() {
  if [ -x "$tests_bin" ] && [ "${TESSEL_SANITIZE_SCOPE:-all}" = attention ]; then
    sanitize_attention
    return
  fi
  if [ -x "$tests_bin" ] && [ "${TESSEL_SANITIZE_SCOPE:-all}" = split ]; then
    # What a change to the split kernels touches: their schedule tests under the three tools, the GEMM
    # tests (whose few-unit, long-K shapes run them through the public API) and the dependent-launch
    # tests (a few-row GEMM chain) under memcheck.
    for tool in memcheck racecheck synccheck; do
      TESSEL_SANITIZE_TIMEOUT=240 sanitize $tool schedule_sm90_split "$build/tests/tessel_schedule_sm90_tests" \
        --gtest_filter='*Split*' --gtest_brief=1
    done
    sanitize memcheck tests "$tests_bin" --gtest_filter="$gemm_filter" --gtest_brief=1
    sanitize memcheck dependent_launch_tests "$build/tests/tessel_dependent_launch_tests" --gtest_brief=1
    return
  fi
  if [ -x "$tests_bin" ] && [ "${TESSEL_SANITIZE_SCOPE:-all}" = plain ]; then
    # What a change to the plain-store kernels touches: their direct launches (128 × 256, 192 × 256,
    # 128 × 192) under the three tools.
    for tool in memcheck racecheck synccheck; do
      TESSEL_SANITIZE_TIMEOUT=240 sanitize $tool schedule_sm90_store "$build/tests/tessel_schedule_sm90_tests" \
        --gtest_filter='*Store*' --gtest_brief=1
    done
    return
  fi
  if [ -x "$tests_bin" ] && [ "${TESSEL_SANITIZE_SCOPE:-all}" = launch ]; then
    # What a change to the launches touches: the dependent-launch tests (which include calls with
    # aligned copies) under all three tools, the GEMM tests (odd shapes: the copies) under memcheck.
    for tool in memcheck racecheck synccheck; do
      sanitize $tool dependent_launch_tests "$build/tests/tessel_dependent_launch_tests" --gtest_brief=1
    done
    sanitize memcheck tests "$tests_bin" --gtest_filter="$gemm_filter" --gtest_brief=1
    return
  fi
  if [ -x "$tests_bin" ]; then
    sanitize memcheck tests "$tests_bin" --gtest_filter="$gemm_filter" --gtest_brief=1
    # racecheck of the GEMM tests: 93 s on an H200, 168 s on an H100 (2026-12-05), past the default 120.
    TESSEL_SANITIZE_TIMEOUT=300 sanitize racecheck tests "$tests_bin" --gtest_filter="$gemm_filter" --gtest_brief=1
    sanitize synccheck tests "$tests_bin" --gtest_filter="$gemm_filter" --gtest_brief=1
    [ -x "$build/tests/tessel_tile_tests_cuda" ] && sanitize racecheck tile_tests "$build/tests/tessel_tile_tests_cuda" --gtest_brief=1
    if [ -x "$build/tests/tessel_schedule_sm90_tests" ]; then
      for tool in memcheck racecheck synccheck; do  # racecheck: 147 s with the three-consumer tests (H100)
        TESSEL_SANITIZE_TIMEOUT=360 sanitize $tool schedule_sm90_tests "$build/tests/tessel_schedule_sm90_tests" --gtest_brief=1
      done
    fi
    if [ -x "$build/tests/tessel_dependent_launch_tests" ]; then
      for tool in memcheck racecheck synccheck; do
        sanitize $tool dependent_launch_tests "$build/tests/tessel_dependent_launch_tests" --gtest_brief=1
      done
    fi
    if [ -x "$build/tests/tessel_wgmma_tests" ]; then
      sanitize memcheck wgmma_tests "$build/tests/tessel_wgmma_tests" --gtest_brief=1
      sanitize racecheck wgmma_tests "$build/tests/tessel_wgmma_tests" --gtest_brief=1
    fi
    [ "${TESSEL_SANITIZE_SCOPE:-all}" = gemm ] && return
    sanitize_attention
  else
    note "sanitizer: no tests/tessel_tests in this build"
  fi
  if [ -x "$build/probe" ]; then
    sanitize memcheck probe "$build/probe" sanitize
    sanitize racecheck probe "$build/probe" sanitize
  fi
}

# ---- 4. benchmark -------------------------------------------------------------
step_bench() {
  if [ -x "$build/tools/tessel-bench" ]; then
    # The issue-8 matrix: bf16/fp16 in, C in the input type and in fp32; five shapes; the four
    # transposes at 4096^3; a strided batch. TESSEL_BENCH_QUICK=1: bf16 in/out, 4096 and 8192 only.
    local b=$build/tools/tessel-bench
    if [ -n "${TESSEL_BENCH_QUICK:-}" ]; then
      timeout 200 "$b" gemm --dtype bf16 --out input --shapes 4096,8192 --repeat 9 \
        --json "$OUT/bench_gemm.json" >"$OUT/bench_gemm.txt" 2>&1
      note "tessel-bench gemm (quick): rc=$?"
    else
      timeout 240 "$b" gemm --dtype bf16,fp16 --out input,f32 --shapes 4096,8192 --shape 4096x14336x4096 \
        --shape 4096x4096x14336 --shape 1024x8192x8192 --repeat 9 \
        --json "$OUT/bench_gemm.json" >"$OUT/bench_gemm.txt" 2>&1
      note "tessel-bench gemm shapes: rc=$?"
      timeout 150 "$b" gemm --dtype bf16,fp16 --out input,f32 --shapes 4096 --trans all --repeat 9 \
        --json "$OUT/bench_gemm_trans.json" >"$OUT/bench_gemm_trans.txt" 2>&1
      note "tessel-bench gemm transposes: rc=$?"
      timeout 120 "$b" gemm --dtype bf16,fp16 --out input,f32 --shapes 2048 --batch 16 --repeat 9 \
        --json "$OUT/bench_gemm_batch.json" >"$OUT/bench_gemm_batch.txt" 2>&1
      note "tessel-bench gemm batched: rc=$?"
    fi
  else
    note "tessel-bench: not in this build"
  fi
  if [ -x "$build/probe" ]; then
    timeout 150 "$build/probe" ${TESSEL_PROBE_MODE:-full} >"$OUT/probe.txt" 2>&1
    note "probe: rc=$? $(grep CORRECTNESS "$OUT/probe.txt")"
  fi
}

# ---- 4b. odd shapes: leading dimensions no tensor map takes, without the aligned copies
# (TESSEL_CUDA_REPACK=never: the sm80 policy) and with them (the default); cuBLAS in each process.
# TESSEL_ODD_TYPES (default "--dtype bf16 --out input") and TESSEL_ODD_MODES (default "never default").
step_odd() {
  [ -x "$build/tools/tessel-bench" ] || { note "tessel-bench: not in this build"; return; }
  local mode shapes=(--shape 64x65x33 --shape 128x129x63 --shape 255x257x127 --shape 511x513x255 --shape 1023x1025x511 --shape 1000x3000x777
    --shape 2047x2049x1023 --shape 4095x4097x4095 --shape 4096x4096x4095 --shape 4096x4095x4096)
  local types
  read -r -a types <<<"${TESSEL_ODD_TYPES:---dtype bf16 --out input}"
  for mode in ${TESSEL_ODD_MODES:-never default}; do
    local repack=()
    [ "$mode" = default ] || repack=("TESSEL_CUDA_REPACK=$mode")
    env "${repack[@]}" timeout 200 "$build/tools/tessel-bench" gemm "${types[@]}" "${shapes[@]}" --repeat 9 \
      --json "$OUT/bench_gemm_odd_$mode.json" >"$OUT/bench_gemm_odd_$mode.txt" 2>&1
    note "tessel-bench gemm odd shapes (${types[*]}), repack $mode: rc=$?"
  done
}

# ---- 4a. GEMM tuning variants: TESSEL_DEVICE_GEMM_VARIANTS="name:flags;name2@SRC:flags;..." — each a
# tessel-bench built with those CUDA flags (from source folder SRC where given, e.g. an earlier commit
# unpacked by `git archive`, carried along), run on the quick rows (bf16 in, bf16 and fp32 out, 4096^3
# and 8192^3, or TESSEL_GVARIANT_ROWS: tessel-bench arguments, several sets separated by '|') after
# this build's own, in turn, twice; cuBLAS in each process is the common yardstick.
# TESSEL_GVARIANT_ENVS="name:VAR=value ...;..." adds this build's own tessel-bench run with those
# environment variables as variants (no build; e.g. nopdl:TESSEL_CUDA_DEPENDENT_LAUNCH=never), or with
# NAME@VARIANT:VARS the tessel-bench of gemm variant VARIANT with them.
step_gvariants() {
  local spec name flags dir t0 round src set
  local row_sets=("gemm --dtype bf16 --out input,f32 --shapes 4096,8192 --repeat 7")
  [ -n "${TESSEL_GVARIANT_ROWS:-}" ] && IFS='|' read -r -a row_sets <<<"$TESSEL_GVARIANT_ROWS"
  local bins=()
  declare -A envs=()
  [ -x "$build/tools/tessel-bench" ] && bins=("base=$build/tools/tessel-bench")  # absent without the build step
  # An entry NAME@VARIANT:VARS runs the tessel-bench of gemm variant VARIANT (built below) with VARS instead.
  local env_bins=()
  if [ -n "${TESSEL_GVARIANT_ENVS:-}" ]; then
    IFS=';' read -r -a specs <<<"$TESSEL_GVARIANT_ENVS"
    for spec in "${specs[@]}"; do
      [ -n "$spec" ] || continue
      name=${spec%%:*} src=$build
      if [[ $name == *@* ]]; then src=$root/build-gvariant-${name#*@} name=${name%%@*}; fi
      envs[$name]=${spec#*:}
      env_bins+=("$name=$src/tools/tessel-bench")
      note "gemm variant $name: ${src##*/} with ${envs[$name]}"
    done
  fi
  # The variants build at once (each its own log), -j16 shared among them.
  IFS=';' read -r -a specs <<<"${TESSEL_DEVICE_GEMM_VARIANTS:-}"
  local pids=() names=() jobs count=0
  for spec in "${specs[@]}"; do [ -n "$spec" ] && count=$((count + 1)); done
  jobs=$(( count > 1 ? 16 / count + 2 : 16 ))
  t0=$(date +%s)
  for spec in "${specs[@]}"; do
    [ -n "$spec" ] || continue
    name=${spec%%:*} flags=${spec#*:} src=.
    if [[ $name == *@* ]]; then src=${name#*@} name=${name%%@*}; fi
    dir=$root/build-gvariant-$name
    rm -f "$dir/CMakeCache.txt"
    (cmake -S "$src" -B "$dir" -G Ninja -DBACKEND=cuda -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
      -DCMAKE_CUDA_FLAGS="$flags" -DCMAKE_PREFIX_PATH="$deps/usr" -DTESSEL_BUILD_TESTS=OFF &&
      cmake --build "$dir" -j"$jobs" --target tessel-bench) >"$OUT/build_gvariant_$name.log" 2>&1 &
    pids+=($!) names+=("$name|$flags")
  done
  local i
  for i in "${!pids[@]}"; do
    name=${names[$i]%%|*} flags=${names[$i]#*|}
    if wait "${pids[$i]}"; then
      bins+=("$name=$root/build-gvariant-$name/tools/tessel-bench")
      note "gemm variant $name ($flags): built ($(( $(date +%s) - t0 )) s since the builds began)"
    else
      note "gemm variant $name ($flags): build FAILED (build_gvariant_$name.log)"
      tail -20 "$OUT/build_gvariant_$name.log"
    fi
  done
  for spec in "${env_bins[@]}"; do [ -x "${spec#*=}" ] && bins+=("$spec") || note "variant ${spec%%=*}: no ${spec#*=}"; done
  for round in 1 2; do
    for spec in "${bins[@]}"; do
      name=${spec%%=*}
      : >"$OUT/gvariant_${name}_$round.txt"
      for set in "${row_sets[@]}"; do
        # shellcheck disable=SC2086
        timeout 120 env ${envs[$name]:-} "${spec#*=}" $set >>"$OUT/gvariant_${name}_$round.txt" 2>&1 ||
          note "variant $name round $round: '$set' exited $? ($(grep -m1 '^tessel-bench:' "$OUT/gvariant_${name}_$round.txt"))"
      done
      grep -E "^ +[0-9]+ +[0-9]+x" "$OUT/gvariant_${name}_$round.txt" |
        awk -v n="$name" -v r="$round" '{print "variant", n, "round", r, "batch", $1, $2, $3 "->" $4, $5, "tessel", $8, "peer", $(NF-6), "ratio", $(NF-5)}' |
        tee -a "$summary"
    done
  done
  # One file for all of them: the device returns only a few files per call, and summary.txt must be among them.
  local f
  for f in "$OUT"/gvariant_*_[12].txt; do
    [ -f "$f" ] || continue
    { echo "## ${f##*/}"; cat "$f"; } >>"$OUT/gvariants.txt" && rm -f "$f"
  done
}

# ---- 4a'. the pipeline's parts: the GEMM with its MMAs, its loads, both, or B's loads taken out
# (bench/sm90_parts.py; TESSEL_PARTS: which, default all), timed as gemm variants beside this tree
# (the build step's tessel-bench, else a variant "head" built here) on TESSEL_GVARIANT_ROWS.
step_parts() {
  local specs head=
  # shellcheck disable=SC2086
  specs=$(python3 bench/sm90_parts.py "$root/build-parts" ${TESSEL_PARTS:-} 2>&1) || { note "parts: $specs"; return; }
  [ -x "$build/tools/tessel-bench" ] || head="head:;"
  TESSEL_DEVICE_GEMM_VARIANTS="$head$specs" step_gvariants
}

# ---- 4a''. the L2 partition behind each SM and where the block scheduler puts a persistent grid
# (bench/sm90_l2_sides.cu): l2sides.txt, and backends/cuda/sm90_unit_order.inc, the unit orders
# the parts step's part `order` reads (run this step first: TESSEL_DEVICE_STEPS="l2sides parts").
step_l2sides() {
  local bin=$root/build-l2sides/sm90_l2_sides
  mkdir -p "$(dirname "$bin")"
  nvcc -O2 -std=c++17 -arch=sm_90a bench/sm90_l2_sides.cu -o "$bin" >>"$OUT/build.log" 2>&1 ||
    { note "l2sides: build FAILED (build.log)"; return; }
  rm -f "$root/backends/cuda/sm90_unit_order.inc"  # a failed probe leaves no table for `order` to use
  timeout 120 "$bin" "$root/backends/cuda/sm90_unit_order.inc" >"$OUT/l2sides.txt" 2>&1
  note "l2sides: rc=$?"
  grep -E "^(touch|partitions|pairs:.*launch|single blocks: a)" "$OUT/l2sides.txt" | tee -a "$summary"
}

# ---- 4b. ncu summary of the Hopper GEMM kernel (bf16 in/out, 4096^3): tensor pipe, stalls ----
step_ncu() {
  local b=$build/tools/tessel-bench
  [ -x "$b" ] || { note "ncu: no tessel-bench"; return; }
  if [ "${TESSEL_NCU_MAIN:-1}" != 0 ]; then  # TESSEL_NCU_MAIN=0 skips this one
    timeout 240 ncu --clock-control none --kernel-name-base mangled -k "regex:sm90_tma_schedule" --launch-skip 3 -c 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy \
      --section MemoryWorkloadAnalysis --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
      "$b" gemm --dtype bf16 --out input --shapes 4096 --repeat 3 >"$OUT/ncu_gemm.txt" 2>&1
    note "ncu gemm: rc=$? ($(grep -c "Section:" "$OUT/ncu_gemm.txt") sections)"
  fi
  # Per-SASS-line warp samples (where the consumers wait) for TESSEL_NCU_SOURCE_ROWS, e.g.
  # "gemm --dtype bf16 --out f32 --shapes 2048 --batch 16 --repeat 3" (below).
  local rows
  # tessel's kernel beside cuBLAS's in the same process, per kernel name (ncu_compare_N.txt), for each
  # '|'-separated tessel-bench row of TESSEL_NCU_COMPARE_ROWS: clock, tensor pipe, bytes at each level.
  local i=0 row
  IFS='|' read -r -a compare <<<"${TESSEL_NCU_COMPARE_ROWS:-}"
  for row in "${compare[@]}"; do
    [ -n "$row" ] || continue
    # shellcheck disable=SC2206
    rows=($row)
    timeout 200 ncu --clock-control none --kernel-name-base mangled -k "regex:sm90_tma_schedule|nvjet|xmma|cutlass" -c 12 \
      --section SpeedOfLight --section LaunchStats --print-summary per-kernel \
      --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
      "$b" "${rows[@]}" >"$OUT/ncu_compare_$i.txt" 2>&1
    note "ncu compare $i ($row): rc=$?"
    i=$((i + 1))
  done
  [ -n "${TESSEL_NCU_SOURCE_ROWS:-}" ] || return 0
  # shellcheck disable=SC2206
  rows=($TESSEL_NCU_SOURCE_ROWS)
  # TESSEL_NCU_SOURCE_KERNELS: kernel-name regexes, one report each (default: tessel's sm90 kernel; e.g.
  # "sm90_tma_schedule nvjet" adds cuBLAS's kernel of the same run): ncu_source_<regex>.csv.gz.
  local kernel
  for kernel in ${TESSEL_NCU_SOURCE_KERNELS:-sm90_tma_schedule}; do
    timeout 240 ncu --clock-control none --kernel-name-base mangled -k "regex:$kernel" --launch-skip 3 -c 1 \
      --section WarpStateStats --section SourceCounters --section SpeedOfLight \
      --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
      -f -o "$build/ncu_source" "$b" "${rows[@]}" >"$OUT/ncu_source_run_$kernel.txt" 2>&1
    note "ncu source $kernel ($TESSEL_NCU_SOURCE_ROWS): rc=$?"
    ncu --import "$build/ncu_source.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip >"$OUT/ncu_source_$kernel.csv.gz"
    ncu --import "$build/ncu_source.ncu-rep" --page details >>"$OUT/ncu_source_run_$kernel.txt" 2>&1
  done
}

# ---- 4b'. ncu of the attention kernels beside cuDNN's (bench/attention_profile.py), one report per
# '|'-separated row of TESSEL_NCUATTN_ROWS (default hd 64 and hd 128, seq 4096, batch 4): throughput,
# pipes (tensor, MUFU), warp states, in ncu_attention_N.txt; with TESSEL_NCUATTN_SOURCE=1 also tessel's
# per-SASS-line warp samples of the first row (ncu_attention_source.csv.gz).
step_ncuattn() {
  local lib=$build/c_api/libtessel_c.so i=0 row rows
  [ -f "$lib" ] || { note "ncuattn: $lib not built"; return; }
  IFS='|' read -r -a rows <<<"${TESSEL_NCUATTN_ROWS:---head-dim 64|--head-dim 128}"
  for row in "${rows[@]}"; do
    # shellcheck disable=SC2086
    timeout 200 ncu --clock-control none --kernel-name-base mangled -k "regex:attention_stages|sdpa|fmha|cudnn|flash" -c 4 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats \
      --section LaunchStats --section Occupancy \
      --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_active.avg,gpu__time_duration.sum \
      python3 bench/attention_profile.py --lib "$lib" $row >"$OUT/ncu_attention_$i.txt" 2>&1
    note "ncu attention $i ($row): rc=$?"
    i=$((i + 1))
  done
  [ "${TESSEL_NCUATTN_SOURCE:-0}" = 1 ] || return 0
  # shellcheck disable=SC2086
  timeout 200 ncu --clock-control none --kernel-name-base mangled -k "regex:attention_stages" -c 1 --section WarpStateStats --section SourceCounters \
    -f -o "$build/ncu_attention_source" python3 bench/attention_profile.py --lib "$lib" ${rows[0]} \
    >"$OUT/ncu_attention_source_run.txt" 2>&1
  note "ncu attention source (${rows[0]}): rc=$?"
  ncu --import "$build/ncu_attention_source.ncu-rep" --page source --csv --print-source sass 2>&1 |
    gzip >"$OUT/ncu_attention_source.csv.gz"
}

# ---- 4c. the L2 request coalescer (LRC) beside cuBLAS: read sectors the SMs ask for, those the LRC
# merged (hardware: the same sectors asked for at once by several SMs; programmatic: TMA multicast) and
# those it sends on, with the clock and SM cycles. For each binary (the build's tessel-bench as "base",
# and every gemm variant the gvariants or parts step built, or those TESSEL_L2REQ_VARIANTS names) and
# each '|'-separated tessel-bench row of TESSEL_L2REQ_ROWS (default: the fp32-C batch and 4096³):
# ncu_l2req.txt, per kernel name (tessel's and cuBLAS's): means over the first 8 launches of either.
step_l2req() {
  local mets="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_active.avg,dram__bytes_read.sum,lts__t_bytes.sum"
  mets+=",lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum"
  mets+=",lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_programmatic.sum"
  mets+=",lrc__lrc2xbar_cycles_active.sum,lrc__lrc2xbar_cycles_stalled.sum"
  local rows_spec=${TESSEL_L2REQ_ROWS:-"--dtype bf16 --out f32 --batch 16 --shapes 2048|--dtype bf16 --out input --shapes 4096"}
  local bins=() name row dir spec l2rows
  [ -x "$build/tools/tessel-bench" ] && bins=("base=$build/tools/tessel-bench")
  for dir in "$root"/build-gvariant-*; do
    name=${dir##*/build-gvariant-}
    [ -x "$dir/tools/tessel-bench" ] || continue
    [ -z "${TESSEL_L2REQ_VARIANTS:-}" ] || [[ " $TESSEL_L2REQ_VARIANTS " == *" $name "* ]] || continue
    bins+=("$name=$dir/tools/tessel-bench")
  done
  [ ${#bins[@]} -gt 0 ] || { note "l2req: no tessel-bench built"; return; }
  IFS='|' read -r -a l2rows <<<"$rows_spec"
  for spec in "${bins[@]}"; do
    for row in "${l2rows[@]}"; do
      [ -n "$row" ] || continue
      echo "## ${spec%%=*} $row" >>"$OUT/ncu_l2req.txt"
      # shellcheck disable=SC2086
      timeout 150 ncu --clock-control none --kernel-name-base mangled -k "regex:sm90_tma_schedule|nvjet|xmma|cutlass" -c 8 \
        --print-summary per-kernel --metrics "$mets" "${spec#*=}" gemm $row --repeat 1 2>&1 |
        grep -E "Invocations|^    [a-z0-9_]+__" >>"$OUT/ncu_l2req.txt"
      note "l2req ${spec%%=*} ($row): rc=${PIPESTATUS[0]}"
    done
  done
}

# ---- 5. attention vs PyTorch SDPA (flash, cuDNN), same inputs, same process ----
# TESSEL_ATTENTION_ARGS: more arguments of bench/attention_vs_sdpa.py (e.g. --rounds 6);
# TESSEL_ATTENTION_TIMEOUT: its limit in seconds (default 300).
# Tuning variants (TESSEL_DEVICE_VARIANTS="name:-DFLAG=1 -DOTHER=2;name2@SRC:..."):
# each is libtessel_c.so (the C ABI) built with those CUDA flags, timed as one
# more contender in the same run (step "variants" builds them, before
# "attention"); a tree from before the C ABI builds its libtessel_capi.so.
# Tuning values are template parameters of the configs (attention_config.hpp),
# not macros: a tuning variant is a tree (name@SRC) with the config changed.
extra_libs=()
# One variant: configure and build SRC's C ABI into DIR with FLAGS; prints the library's path.
variant_build() {  # SRC DIR FLAGS JOBS
  rm -f "$2/CMakeCache.txt"
  cmake -S "$1" -B "$2" -G Ninja -DBACKEND=cuda -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    -DCMAKE_CUDA_FLAGS="$3" -DCMAKE_PREFIX_PATH="$deps/usr" -DTESSEL_BUILD_TESTS=OFF || return 1
  if cmake --build "$2" -j"$4" --target tessel_c; then echo "$2/c_api/libtessel_c.so" >"$2.lib"
  elif cmake --build "$2" -j"$4" --target tessel_capi; then echo "$2/bench/capi/libtessel_capi.so" >"$2.lib"
  else return 1; fi
}
# The variants build side by side (each its own log, build_variant_NAME.log), 16 jobs shared.
step_variants() {
  local spec name flags dir t0 src n jobs
  IFS=';' read -r -a specs <<<"${TESSEL_DEVICE_VARIANTS:-}"
  t0=$(date +%s) n=0
  for spec in "${specs[@]}"; do [ -n "$spec" ] && n=$((n + 1)); done
  [ "$n" -gt 0 ] || return 0
  jobs=$(( (16 + n - 1) / n + 2 ))
  local names=()
  for spec in "${specs[@]}"; do
    [ -n "$spec" ] || continue
    # name@SRC:flags builds the sources in folder SRC (e.g. an earlier commit
    # unpacked by `git archive`) instead of this tree.
    name=${spec%%:*} flags=${spec#*:} src=.
    if [[ $name == *@* ]]; then src=${name#*@} name=${name%%@*}; fi
    dir=$root/build-variant-$name
    rm -f "$dir.lib"
    variant_build "$src" "$dir" "$flags" "$jobs" >"$OUT/build_variant_$name.log" 2>&1 &
    names+=("$name")
  done
  wait
  for name in "${names[@]}"; do
    dir=$root/build-variant-$name
    if [ -f "$dir.lib" ]; then
      extra_libs+=(--extra-lib "$name=$(cat "$dir.lib")")
      note "variant $name: built ($(( $(date +%s) - t0 )) s for all)"
    else
      note "variant $name: build FAILED (build_variant_$name.log)"; tail -5 "$OUT/build_variant_$name.log"
    fi
  done
}
# ---- 4c. timeline of the sm90 schedule (backends/cuda/sm90_trace.hpp): tessel-bench built with
# -DTESSEL_SM90_TRACE=4 (block 0 of the 5th sm90 launch records its producer's and consumers' events),
# one run per '|'-separated row of TESSEL_TRACE_ROWS; trace_N.txt and bench/sm90_trace.py's summary.
step_trace() {
  local dir=$root/build-trace t0 i=0 row
  t0=$(date +%s)
  rm -f "$dir/CMakeCache.txt"
  if ! { cmake -S . -B "$dir" -G Ninja -DBACKEND=cuda -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    -DCMAKE_CUDA_FLAGS=-DTESSEL_SM90_TRACE=4 -DCMAKE_PREFIX_PATH="$deps/usr" -DTESSEL_BUILD_TESTS=OFF >>"$OUT/build.log" 2>&1 &&
    cmake --build "$dir" -j16 --target tessel-bench >>"$OUT/build.log" 2>&1; }; then
    note "trace build FAILED (build.log)"; return
  fi
  note "trace build: $(( $(date +%s) - t0 )) s"
  IFS='|' read -r -a trace_rows <<<"${TESSEL_TRACE_ROWS:-gemm --dtype bf16 --out input --shapes 4096 --repeat 1}"
  for row in "${trace_rows[@]}"; do
    # shellcheck disable=SC2086
    "$dir/tools/tessel-bench" $row >"$OUT/trace_$i.txt" 2>&1
    note "trace $i ($row): rc=$?"
    python3 bench/sm90_trace.py "$OUT/trace_$i.txt" 2>&1 | tail -4 | tee -a "$summary"
    i=$((i + 1))
  done
}

# ---- 5b. GEMM under sustained load against torch.matmul (cuBLAS): time, SM clock, power (bench/gemm_clock.py);
# TESSEL_CLOCK_ARGS: its arguments (shapes, dtypes, seconds, rounds).
step_clock() {
  local lib=$build/c_api/libtessel_c.so
  [ -f "$lib" ] || { note "gemm clock: $lib not built"; return; }
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 timeout 300 python3 bench/gemm_clock.py --lib "$lib" --json "$OUT/gemm_clock.json" \
    ${TESSEL_CLOCK_ARGS:-} >"$OUT/gemm_clock.txt" 2>&1
  note "gemm clock: rc=$?"
  grep " med " "$OUT/gemm_clock.txt" | tee -a "$summary"
}
# TESSEL_ATTENTION_MAIN=NAME: variant NAME's library is the main contender ("tessel") instead of the
# build step's, so that a run of only "variants attention" builds every tree side by side.
step_attention() {
  local lib=$build/c_api/libtessel_c.so
  if [ -n "${TESSEL_ATTENTION_MAIN:-}" ]; then
    local others=() j
    lib=
    for ((j = 0; j < ${#extra_libs[@]}; j += 2)); do
      if [ "${extra_libs[j + 1]%%=*}" = "$TESSEL_ATTENTION_MAIN" ]; then lib=${extra_libs[j + 1]#*=}
      else others+=("${extra_libs[j]}" "${extra_libs[j + 1]}"); fi
    done
    extra_libs=("${others[@]}")
    [ -n "$lib" ] || { note "attention bench: variant $TESSEL_ATTENTION_MAIN not built"; return; }
  fi
  [ -f "$lib" ] || { note "attention bench: $lib not built"; return; }
  # A variant that hangs or fails on a few small calls (one row of each kind, 60 s) is left out, so that
  # it cannot take the run with it.
  local kept=() i
  for ((i = 0; i < ${#extra_libs[@]}; i += 2)); do
    if timeout 60 python3 bench/attention_vs_sdpa.py --lib "${extra_libs[i + 1]#*=}" --rounds 1 --tokens 2048 \
      --seqs 1024 >>"$OUT/attention_smoke.txt" 2>&1; then
      kept+=("${extra_libs[i]}" "${extra_libs[i + 1]}")
    else
      note "attention: variant ${extra_libs[i + 1]%%=*} failed its smoke run (rc=$?; attention_smoke.txt): left out"
    fi
  done
  extra_libs=("${kept[@]}")
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 timeout "${TESSEL_ATTENTION_TIMEOUT:-300}" python3 bench/attention_vs_sdpa.py --lib "$lib" \
    --json "$OUT/attention_sdpa.json" ${TESSEL_ATTENTION_ARGS:-} "${extra_libs[@]}" >"$OUT/attention_sdpa.txt" 2>&1
  note "attention vs SDPA: rc=$?"
}

# ---- 5c-5e. the host CPU's steps (cpu, cputests, amxtests): bench/device_cpu.sh.
# shellcheck source=bench/device_cpu.sh
. "$root/bench/device_cpu.sh"

# ---- 6. the Python package on the CUDA backend: built into a venv that sees the machine's
# PyTorch and numpy, its build and test tools from .devdeps/wheels (no index here; oneTBB and
# xsimd through the CMAKE_PREFIX_PATH exported above), then the whole pytest suite: the CPU
# tests and python/tests/test_cuda_torch.py.
step_python() {
  local venv=$root/build-device-py/venv t0
  t0=$(date +%s)
  [ -d "$deps/wheels" ] || { note "python: no .devdeps/wheels (bench/pack_device_deps.sh)"; return; }
  rm -rf "$venv"
  # The machine's python3 may itself be a venv (PyTorch's): a .pth file makes its packages visible.
  if ! { python3 -m venv "$venv" &&
    python3 -c "import site; print(site.getsitepackages()[0])" >"$("$venv/bin/python" -c "import site; print(site.getsitepackages()[0])")/machine_packages.pth" &&
    "$venv/bin/pip" install -q --no-index --find-links "$deps/wheels" scikit-build-core nanobind pytest &&
    "$venv/bin/pip" install -q --no-index --no-deps --find-links "$deps/wheels" ml_dtypes &&  # numpy: the machine's
    CMAKE_BUILD_PARALLEL_LEVEL=16 "$venv/bin/pip" install -q --no-index --no-build-isolation ./python \
      -C cmake.define.BACKEND=cuda -C cmake.define.CMAKE_CUDA_ARCHITECTURES="$archs" \
      -C build-dir="$root/build-device-py/wheel"; } \
    >"$OUT/python_build.log" 2>&1; then
    note "python: install FAILED (python_build.log)"; tail -20 "$OUT/python_build.log"; return
  fi
  local rc=0
  timeout 300 "$venv/bin/python" -m pytest python/tests -v -rfEs >"$OUT/python_tests.txt" 2>&1 || rc=$?
  note "python (cuda build, $(( $(date +%s) - t0 )) s): rc=$rc $(tail -1 "$OUT/python_tests.txt")"
}

for s in $steps; do
  case $s in
    build | test | sanitize | bench | odd | gvariants | parts | l2sides | ncu | ncuattn | l2req | trace | variants | clock | attention | cpu | cputests | amxtests | python) "step_$s" ;;
    *) note "unknown step '$s' (expected build, test, sanitize, bench, odd, gvariants, parts, l2sides, ncu, ncuattn, l2req, trace, variants, clock, attention, cpu, cputests, amxtests, python)" ;;
  esac
done
# At most 8 files come back: the logs travel as one archive, the ncu reports as another.
(cd "$OUT" && tar czf logs.tar.gz --remove-files ./*.log 2>/dev/null)
(cd "$OUT" && compgen -G "ncu_*" >/dev/null && tar czf ncu.tar.gz --remove-files ncu_* 2>/dev/null)
(cd "$OUT" && compgen -G "trace_*" >/dev/null && tar czf trace.tar.gz --remove-files trace_* 2>/dev/null)

# ---- 5. table -------------------------------------------------------------------
echo
echo "================ summary ================"
cat "$summary"
for f in bench_gemm bench_gemm_trans bench_gemm_batch bench_gemm_odd_never bench_gemm_odd_default; do
  [ -f "$OUT/$f.txt" ] && { echo "---- tessel-bench $f"; grep -E "^ +[0-9]+ +[0-9]+x" "$OUT/$f.txt" |
    awk '{print "batch", $1, $2, $3, "->", $4, $5, "tessel", $8, "peer", $(NF-6), "ratio", $(NF-5), $NF}'; }
done
[ -f "$OUT/probe.txt" ] && { echo "---- probe"; grep -E "FAIL|THROW|BENCH|CORRECTNESS|device" "$OUT/probe.txt" | head -40; }
[ -f "$OUT/attention_sdpa.txt" ] && { echo "---- attention vs SDPA"; tail -16 "$OUT/attention_sdpa.txt"; }
for f in "$OUT"/cpu_vs_torch_t*.txt; do [ -f "$f" ] && { echo "---- ${f##*/}"; cat "$f"; }; done
exit 0
