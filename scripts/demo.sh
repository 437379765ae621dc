#!/usr/bin/env bash
# scripts/demo.sh — the main job: build the default backend, run GEMM (and
# attention) with a cross-check against float64 and the CPU backend, then a
# short benchmark table against the peer library in the same process.
#   BACKEND=cpu|cuda|hip (default cpu)
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${BACKEND:-cpu}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
bash scripts/deps.sh "$backend"
cmake -S . -B build -DBACKEND="$backend" -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
echo "== tessel-check: GEMM on the built backend vs float64 and vs the CPU backend"
build/tools/tessel-check gemm --m 1000 --n 777 --k 513 --dtype bf16
build/tools/tessel-check gemm --m 640 --n 480 --k 1031 --dtype fp32 --trans-a --beta 0.5
echo "== tessel-check: attention (GQA, causal, q_len != kv_len) vs float64 and vs the CPU backend"
build/tools/tessel-check attention --batch 2 --q-len 300 --kv-len 333 --heads 4 --kv-heads 2 --head-dim 128 --dtype bf16 --causal
echo "== tessel-bench: GEMM vs the peer library (OpenBLAS on the CPU, cuBLAS on CUDA)"
threads=1,2
[ "$backend" = cpu ] || threads=""
build/tools/tessel-bench gemm --shapes 512,1024,2048 --dtype fp32,bf16 ${threads:+--threads $threads} --repeat 5
if [ "$backend" = cpu ]; then
  echo "== tessel-bench: attention vs an unfused OpenBLAS attention (CPU)"
  build/tools/tessel-bench attention --seqs 1024 --head-dim 64,128 --heads 2 --both --dtype fp32,bf16 --threads 2 --repeat 3
fi
