# shellcheck shell=bash disable=SC2154  # root, deps, OUT, summary: bench/device.sh's
# bench/device_cpu.sh — bench/device.sh's steps for the GPU machine's host CPU (an Intel Xeon with
# AVX-512 and AMX): cpu (the CPU backend against PyTorch's CPU kernels), cputests (the CPU suite on
# this host) and amxtests (the AMX programs and the exp2 underflow probe). Sourced by device.sh,
# never run alone: it uses device.sh's root, deps, OUT, summary and note.

# ---- 5c. the host CPU against PyTorch's CPU kernels (MKL, oneDNN, SDPA): the CPU backend alone, built
# here into its own folder (its C ABI), then bench/cpu_vs_torch.py pinned to 1, 8 and all cores
# (TESSEL_CPU_THREADS, default "1 8 all"), the thread counts in turn; one file per count.
cpu_lib() {  # SOURCE BUILD: the CPU backend's C ABI library of that source tree
  cmake -S "$1" -B "$2" -G Ninja -DBACKEND=cpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$deps/usr" \
    -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_TOOLS=OFF && cmake --build "$2" -j16 --target tessel_c
}
# The CPU backend against PyTorch's CPU kernels (MKL, oneDNN, SDPA's CPU flash kernel) on the host,
# pinned, at TESSEL_CPU_THREADS (default "1 8 all"). With TESSEL_CPU_BASE=DIR (another source tree,
# e.g. an earlier commit unpacked into an ignored folder) that tree is built too. TESSEL_CPU_RUNS
# lists what runs, each "NAME" or "NAME:VAR=V,VAR=V" (the current tree with those variables) or
# "NAME@base[:VARS]" (the base tree) or "NAME@DIR[:VARS]" (the source tree in folder DIR, e.g. a copy
# with another block shape, built once into build-device-cpu-NAME); default "current", and
# "current base@base" with a base. Per
# thread count, TESSEL_CPU_AB_ROUNDS (default 2 where more than one runs) rounds of every entry in
# turn, each its own process, in cpu_vs_torch_t<N>.txt (rows after a "== run NAME round R" line).
# TESSEL_CPU_ARGS replaces the rows' arguments (default: GEMM 512-2048 fp32 and bf16, attention
# hd128 seq 1024 and 2048).
step_cpu() {
  local dir=$root/build-device-cpu base_dir=$root/build-device-cpu-base t0 t c n all r entry name vars lib
  t0=$(date +%s)
  all=$(nproc)
  if ! cpu_lib . "$dir" >"$OUT/cpu_build.log" 2>&1; then
    note "cpu: build FAILED (cpu_build.log)"; tail -20 "$OUT/cpu_build.log"; return
  fi
  local runs=${TESSEL_CPU_RUNS:-current}
  if [ -n "${TESSEL_CPU_BASE:-}" ]; then
    [ -z "${TESSEL_CPU_RUNS:-}" ] && runs="current base@base"
    cpu_lib "$TESSEL_CPU_BASE" "$base_dir" >>"$OUT/cpu_build.log" 2>&1 ||
      { note "cpu: base tree $TESSEL_CPU_BASE build FAILED (cpu_build.log)"; return; }
  fi
  for entry in $runs; do  # NAME@DIR: that tree, built once
    name=${entry%%:*}
    [[ $name == *@* && ${name#*@} != base ]] || continue
    cpu_lib "${name#*@}" "$root/build-device-cpu-${name%%@*}" >>"$OUT/cpu_build.log" 2>&1 ||
      note "cpu: tree ${name#*@} build FAILED (cpu_build.log)"
  done
  note "cpu: CPU-only build(s) $(( $(date +%s) - t0 )) s (runs: $runs); host: $(lscpu | sed -n 's/^Model name: *//p'), $all CPUs"
  local args=${TESSEL_CPU_ARGS:---shapes 512,1024,2048 --tokens 2048 --heads 8 --seqs 1024,2048}
  local rounds=1
  [ "$(echo "$runs" | wc -w)" -gt 1 ] && rounds=${TESSEL_CPU_AB_ROUNDS:-2}
  local done_counts=" "
  for t in ${TESSEL_CPU_THREADS:-1 8 all}; do
    [ "$t" = all ] && t=$all
    [ "$t" -le "$all" ] && [[ $done_counts != *" $t "* ]] || continue
    done_counts+="$t "
    c=0; [ "$t" -gt 1 ] && c=0-$((t - 1))
    n=$OUT/cpu_vs_torch_t$t.txt
    : >"$n"
    for r in $(seq "$rounds"); do
      for entry in $runs; do
        name=${entry%%:*}; vars=; [[ $entry == *:* ]] && vars=${entry#*:}
        lib=$dir/c_api/libtessel_c.so; [[ $name == *@base ]] && lib=$base_dir/c_api/libtessel_c.so
        [[ $name == *@* && $name != *@base ]] && lib=$root/build-device-cpu-${name%%@*}/c_api/libtessel_c.so
        echo "== run $name round $r${vars:+ ($vars)}" >>"$n"
        # shellcheck disable=SC2086
        env ${vars//,/ } PYTHONUNBUFFERED=1 timeout 240 taskset -c "$c" python3 bench/cpu_vs_torch.py --lib "$lib" \
          --threads "$t" $args >>"$n" 2>&1
        note "cpu vs torch, $t threads, $name round $r: rc=$?"
      done
    done
    note "cpu vs torch, $t threads: $(grep -c ' ok$' "$n") rows ok, $(grep -c FAIL "$n") FAIL"
  done
}

# ---- 5d. the CPU backend's own suite on this host: its AVX-512 and AMX paths, which the CI machine
# cannot run (tests/cpu/amx_test.cpp's hardware case, and every bf16 GEMM of the suite on AMX where
# cpu_best_isa() finds it). A CPU-only build with the tests, without the tools, then ctest.
step_cputests() {
  local dir=$root/build-device-cputests t0 r
  t0=$(date +%s)
  if ! { cmake -S . -B "$dir" -G Ninja -DBACKEND=cpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$deps/usr" \
      -DTESSEL_GTEST_SOURCE_DIR="$deps/googletest" -DTESSEL_BUILD_TOOLS=OFF && cmake --build "$dir" -j16; } \
      >"$OUT/cputests_build.log" 2>&1; then
    note "cputests: build FAILED (cputests_build.log)"; tail -20 "$OUT/cputests_build.log"; return
  fi
  note "cputests: build $(( $(date +%s) - t0 )) s"
  t0=$(date +%s)
  if timeout 400 ctest --test-dir "$dir" --output-on-failure -j8 --timeout 300 >"$OUT/cputests_ctest.log" 2>&1; then
    r=passed; else r=FAILED; fi
  note "cputests: ctest $r, $(grep -E 'tests passed|tests failed' "$OUT/cputests_ctest.log" | tail -1) ($(( $(date +%s) - t0 )) s)"
  grep -E "Failed|\*\*\*|FAILED" "$OUT/cputests_ctest.log" | head -20
  local t
  for t in tessel_cpu_amx_tests tessel_cpu_amx_avx512_tests; do  # the hardware cases, named (ctest hides skips)
    [ -x "$dir/tests/$t" ] || continue
    echo "$t:" | tee -a "$summary"
    "$dir/tests/$t" --gtest_filter='AmxHardware*:AmxAttentionHardware*' 2>&1 |
      grep -E 'cpu isa|AMX hardware|OK|SKIPPED|FAILED' | tee -a "$summary"
  done
}

# ---- 5e. the AMX programs alone (a shorter cputests where device time is short): only the two AMX test
# programs built (tests/cpu/amx_test.cpp, amx_attention_test.cpp on AVX2 and on AVX-512), run whole (the
# emulated cases) and their hardware cases named; then bench/exp2_underflow_probe.cpp on one pinned core
# (the CPU exp2 where its results underflow), in exp2_probe.txt.
step_amxtests() {
  local dir=$root/build-device-cputests t0 t r
  t0=$(date +%s)
  if ! { cmake -S . -B "$dir" -G Ninja -DBACKEND=cpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$deps/usr" \
      -DTESSEL_GTEST_SOURCE_DIR="$deps/googletest" -DTESSEL_BUILD_TOOLS=OFF &&
      cmake --build "$dir" -j16 --target tessel_cpu_amx_tests tessel_cpu_amx_avx512_tests; } >"$OUT/amxtests_build.log" 2>&1; then
    note "amxtests: build FAILED (amxtests_build.log)"; tail -20 "$OUT/amxtests_build.log"; return
  fi
  note "amxtests: build $(( $(date +%s) - t0 )) s"
  for t in tessel_cpu_amx_tests tessel_cpu_amx_avx512_tests; do
    [ -x "$dir/tests/$t" ] || continue
    if timeout 300 "$dir/tests/$t" >"$OUT/$t.log" 2>&1; then r=passed; else r=FAILED; fi
    note "amxtests: $t $r ($(grep -E '^\[  PASSED|^\[  FAILED' "$OUT/$t.log" | tr '\n' ' '))"
    grep -E 'cpu isa|AMX hardware|^\[  FAILED' "$OUT/$t.log" | head -12 | tee -a "$summary"
  done
  if g++ -O2 -std=c++17 -march=native -I "$dir/include" -I "$deps/usr/include" bench/exp2_underflow_probe.cpp \
      -o "$dir/exp2_underflow_probe" >>"$OUT/amxtests_build.log" 2>&1; then
    taskset -c "$(( $(nproc) - 1 ))" "$dir/exp2_underflow_probe" >"$OUT/exp2_probe.txt" 2>&1
    note "exp2 probe: rc=$? (exp2_probe.txt)"
  else
    note "exp2 probe: build FAILED (amxtests_build.log)"
  fi
}
