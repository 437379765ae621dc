#!/usr/bin/env bash
# bench/numerics_before_after.sh BEFORE_DIR — on the GPU machine, from the repo root: the numerics
# tests (large logits, NaN/Inf) of this tree, run on the sm90 and sm80 policies, built against
# BEFORE_DIR (an older tree with this tree's tests/attention_* and support/reference_attention.*
# copied in, tessel_tests listing attention_numerics_test.cpp) and against this tree. Needs .devdeps
# (bench/pack_device_deps.sh) and OUT.
set -u
root=$PWD; deps=$root/.devdeps
export CMAKE_PREFIX_PATH=$deps/usr LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
export TESSEL_SEED=20261117
for t in before:"${1:?usage: numerics_before_after.sh BEFORE_DIR}" current:.; do
  name=${t%%:*} src=${t#*:} b=$root/build-numerics-$name
  cmake -S "$src" -B "$b" -G Ninja -DBACKEND=cuda -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DCMAKE_PREFIX_PATH="$deps/usr" -DTESSEL_GTEST_SOURCE_DIR="$deps/googletest" -DTESSEL_BUILD_TOOLS=OFF >"$OUT/cfg_$name.log" 2>&1 &&
    cmake --build "$b" -j16 --target tessel_tests >"$OUT/build_$name.log" 2>&1 || { echo "$name: build FAILED"; tail -5 "$OUT/build_$name.log"; continue; }
  for pol in sm90 sm80; do
    echo "=== $name library, policy $pol"
    TESSEL_CUDA_POLICY=$pol "$b/tests/tessel_tests" --gtest_filter='*LargeLogits*:*NonFinite*' 2>&1 |
      grep -E "^\[ +(info|FAILED|PASSED|OK) +\]|Which is|tessel +\]" | sed 's/NVIDIA H100 80GB HBM3, driver API 13000, //' | cut -c1-170
  done
done
