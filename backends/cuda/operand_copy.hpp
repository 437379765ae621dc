// tessel/cuda/operand_copy.hpp — aligned copies of GEMM operands that a tensor map cannot describe.
//
// A tensor map needs a 16-byte aligned base and 16-byte multiples for its
// strides (tensor_map.hpp), so a contiguous operand with an odd leading
// dimension (row-major A with K = 777) is refused by the sm90 schedule and ran
// on the sm80 policy: 0.07-0.44x cuBLAS on the H100.
// operand_copies instead copies each such operand of a call into tessel's
// stream-ordered pool (launch.hpp's workspace_pool), in the same majorness
// with its leading dimension rounded up to 8 elements:
//   op(A) rows × cols, src element (b, r, c) at b·batch + r·rs + c·cs ->
//   dst (b, r, c) at b·dst_batch + r·ld + c   (contiguous along cols), or
//                    b·dst_batch + r + c·ld   (contiguous along rows)
// (a shared operand, batch stride 0, is copied once and stays shared). A C
// the TMA store cannot write (rows not contiguous, or misaligned; its direct
// stores then go element by element) is computed into such a copy, row-major,
// and copied back after the GEMM (copied in first where beta != 0). The
// copies and the GEMM go on the caller's stream; the copies are freed in
// stream order after the GEMM. Where both sides run along the same dimension
// (a contiguous operand with an odd leading dimension), a copy moves 16-byte
// lines through shared memory (copy_operand_lines_kernel: +4-32% over
// element copies on the H100); a general strided view goes element by
// element. Padding elements are never read (the maps' extents are the
// matrix's). Where the pool cannot hold them, nothing is copied and the call
// runs as it is. The copies are launched like the sm90 GEMM, to overlap the
// kernel before them (launch.hpp's may_overlap_predecessor) where they move
// at most 16 MiB: each waits for it before reading and lets the next one
// launch once its blocks are done.
//
// It pays at every size measured (copies_enabled, below);
// TESSEL_CUDA_REPACK=never in the environment turns the copies off (to test
// the sm80 path on such shapes). Include only from CUDA translation units.
#pragma once
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "tessel/cuda/arch/grid_dependency.hpp"
#include "tessel/cuda/launch.hpp"
#include "tessel/cuda/tensor_map.hpp"
#include "tessel/ops/gemm/call.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::cuda {

// dst(b, o, i) = src(b, o, i) over batch × outer × inner elements, both
// strided (element (b, o, i) at b·batch + o·outer + i·inner of each). One block
// row per (outer, batch) in grid-stride loops; lanes run along inner, which
// the caller makes the contiguous dimension of the copy's aligned side.
struct copy_strides {
  std::int64_t outer, inner, batch;
};
// line(from, to) for each (batch, outer) line of this block, in grid-stride loops
// over blockIdx.z (batch) and blockIdx.y (outer): from / to point at element
// (b, o, 0) of src / dst. Both kernels below walk their lines through it.
// `overlapped`: launched to overlap the stream's kernel before (launch.hpp's
// may_overlap_predecessor): the lines wait for that kernel to finish
// (arch/grid_dependency.hpp), and the block lets the stream's next kernel
// launch once its lines are done (not at its start: a GEMM block launched
// early holds an SM's shared memory, waiting, while copy blocks still queue
// for SMs; that cost 7% at 4095 × 4097 × 4095 on the H100).
template <class T, class Line>
__device__ void for_each_block_line(const T* src, T* dst, int outer, int batch, copy_strides s, copy_strides d,
                                    bool overlapped, Line line) {
  if (overlapped) arch::grid_dependency_wait();
  for (int b = int(blockIdx.z); b < batch; b += int(gridDim.z))
    for (int o = int(blockIdx.y); o < outer; o += int(gridDim.y))
      line(src + b * s.batch + o * s.outer, dst + b * d.batch + o * d.outer);
  if (overlapped) arch::grid_dependents_launch();
}

template <class T>
__global__ void copy_operand_kernel(const T* src, T* dst, int outer, int inner, int batch, copy_strides s,
                                    copy_strides d, bool overlapped) {
  for_each_block_line(src, dst, outer, batch, s, d, overlapped, [&](const T* from, T* to) {
    for (int i = int(threadIdx.x + blockIdx.x * blockDim.x); i < inner; i += int(blockDim.x * gridDim.x))
      to[i * d.inner] = from[i * s.inner];
  });
}

// The same where both sides run along inner (inner strides 1) and one side,
// the copy, has 16-byte aligned lines (ToAligned: dst, else src). A warp
// moves 32·V consecutive elements at a time (V = 16 / sizeof(T)) through its
// 512 bytes of shared memory: on the aligned side one 16-byte access per lane
// (lane l: elements V·l .. V·l + V − 1 of the chunk), on the other V accesses
// of one element per lane (access j, lane l: element 32·j + l), so that both
// sides' accesses are coalesced. Only elements inside the matrix are read from
// or written to the unaligned side; the aligned side's line padding (up to
// its 16-byte end) is written with zeros or read and dropped. 256 threads.
template <class T, bool ToAligned>
__global__ void __launch_bounds__(256) copy_operand_lines_kernel(const T* src, T* dst, int outer, int inner, int batch,
                                                                 copy_strides s, copy_strides d, bool overlapped) {
  constexpr int V = 16 / int(sizeof(T)), chunk = 32 * V;
  __shared__ uint4 stage_lines[8][32];
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
  T* stage = reinterpret_cast<T*>(stage_lines[warp]);
  const int warps = 8 * int(gridDim.x);
  for_each_block_line(src, dst, outer, batch, s, d, overlapped, [&](const T* from, T* to) {
    for (int i0 = (int(blockIdx.x) * 8 + warp) * chunk; i0 < inner; i0 += warps * chunk) {
      const int mine = i0 + V * lane;  // this lane's 16 bytes on the aligned side
      if constexpr (ToAligned) {
        TESSEL_UNROLL for (int j = 0; j < V; ++j) {
          const int e = i0 + 32 * j + lane;
          stage[32 * j + lane] = e < inner ? from[e] : T(0);
        }
        __syncwarp();
        if (mine < inner) *reinterpret_cast<uint4*>(to + mine) = stage_lines[warp][lane];
      } else {
        if (mine < inner) stage_lines[warp][lane] = *reinterpret_cast<const uint4*>(from + mine);
        __syncwarp();
        TESSEL_UNROLL for (int j = 0; j < V; ++j) {
          const int e = i0 + 32 * j + lane;
          if (e < inner) to[e] = stage[32 * j + lane];
        }
      }
      __syncwarp();  // the stage is rewritten by the next chunk
    }
  });
}

// Whether to copy a call's misaligned matrices: yes, unless
// TESSEL_CUDA_REPACK=never. Measured on the H100 (bf16 in and out;
// bench/results/cuda_h100_gemm_odd_2026-11-23_summary.txt): the sm80 policy
// on such operands ran 0.009-37 TFLOP/s (0.07-0.44x cuBLAS); the copies plus
// the sm90 kernel 0.011-600 TFLOP/s (0.40-4.19x), faster at every size
// measured, from 64 × 65 × 33 (25 against 30 us) up.
inline bool copies_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("TESSEL_CUDA_REPACK");
    return e == nullptr || std::strcmp(e, "never") != 0;
  }();
  return on;
}

// The copies of one call: `call` with each matrix a tensor map refuses
// replaced by an aligned copy (ok() false where none was needed or made).
// A and B are copied when made; C, where copied, holds the old C only where
// beta != 0, and finish() — after the GEMM on `call` — copies it back.
class operand_copies {
 public:
  // In, out: the sizes of the input and output element types (in: 2, bf16 or fp16).
  operand_copies(const gemm_call& original, std::size_t in, std::size_t out, cudaStream_t stream)
      : call(original), original_(original), stream_(stream) {
    if (call.batch <= 0 || in != 2 || (out != 2 && out != 4)) return;
    matrix_ref* refs[3] = {&call.a, &call.b, &call.c};
    const int rows[3] = {call.m, call.k, call.m}, cols[3] = {call.k, call.n, call.n};
    const std::size_t elem[3] = {in, in, out};
    std::size_t bytes[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i)
      if (needs_copy(*refs[i], rows[i], cols[i], elem[i], i == 2)) bytes[i] = plan_bytes(*refs[i], rows[i], cols[i], elem[i]);
    if (bytes[0] + bytes[1] + bytes[2] == 0 || !copies_enabled()) return;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return;
    void* ws = nullptr;
    if (cudaMallocFromPoolAsync(&ws, bytes[0] + bytes[1] + bytes[2], workspace_pool(device), stream) != cudaSuccess) {
      (void)cudaGetLastError();  // no room: the call as it is
      return;
    }
    ws_ = ws;
    char* at = static_cast<char*>(ws);
    for (int i = 0; i < 3; ++i)
      if (bytes[i] > 0) {
        const matrix_ref aligned = layout(*refs[i], rows[i], cols[i], at);
        if (i < 2 || call.beta != 0.0f) copy(*refs[i], aligned, aligned, rows[i], cols[i], elem[i]);
        *refs[i] = aligned;
        at += bytes[i];
      }
    c_copied_ = bytes[2] > 0;
    made_ = true;
  }
  // After the GEMM on `call`: C's copy back into the caller's C.
  void finish() const {
    if (c_copied_) copy(call.c, original_.c, call.c, call.m, call.n, call.out == dtype::f32 ? 4 : 2);
  }
  ~operand_copies() {
    if (ws_ != nullptr) (void)cudaFreeAsync(ws_, stream_);  // after the GEMM and the copy back, in stream order
  }
  operand_copies(const operand_copies&) = delete;
  operand_copies& operator=(const operand_copies&) = delete;
  bool ok() const { return made_; }
  gemm_call call;  // the call on the copies

 private:
  // A copy is needed where a tensor map cannot describe the matrix as it is
  // (tensor_map.hpp's tma_compatible, strides running the way the schedule
  // reads them; C: rows contiguous, as the TMA store writes them).
  static bool needs_copy(const matrix_ref& r, int rows, int cols, std::size_t elem, bool output) {
    if (rows <= 0 || cols <= 0) return false;
    const bool along = output ? r.col_stride == 1 : r.col_stride == 1 || (r.row_stride == 1 && r.col_stride != 1);
    const bool mapped = elem == 2 ? tma_compatible(ops::make_gmatrix<const std::uint16_t>(r, rows, cols), r.batch_stride)
                                  : tma_compatible(ops::make_gmatrix<const float>(r, rows, cols), r.batch_stride);
    return !along || !mapped;
  }
  // The copy's layout: contiguous along cols unless an input runs along rows
  // (C always along cols), each line padded to 8 elements; one entry where the
  // matrix is shared by the batch (batch stride 0).
  static bool along_rows(const matrix_ref& r) { return r.col_stride != 1 && r.row_stride == 1; }
  static std::int64_t padded(std::int64_t n) { return (n + 7) / 8 * 8; }
  std::int64_t layers(const matrix_ref& r) const { return r.batch_stride == 0 ? 1 : call.batch; }
  bool by_rows(const matrix_ref& r) const { return &r != &call.c && along_rows(r); }
  std::size_t plan_bytes(const matrix_ref& r, int rows, int cols, std::size_t elem) const {
    const std::int64_t outer = by_rows(r) ? cols : rows, inner = by_rows(r) ? rows : cols;
    const std::size_t b = std::size_t(layers(r) * outer * padded(inner)) * elem;
    return (b + 255) / 256 * 256;
  }
  matrix_ref layout(const matrix_ref& r, int rows, int cols, void* at) const {
    const bool rw = by_rows(r);
    const std::int64_t outer = rw ? cols : rows, ld = padded(rw ? rows : cols);
    return {at, rw ? 1 : ld, rw ? ld : 1, r.batch_stride == 0 ? 0 : outer * ld};
  }
  // to(b, r, c) = from(b, r, c) for every entry; lanes along the contiguous
  // dimension of `aligned` (whichever of the two is the copy).
  void copy(const matrix_ref& from, const matrix_ref& to, const matrix_ref& aligned, int rows, int cols,
            std::size_t elem) const {
    const bool lanes_on_rows = aligned.row_stride == 1 && aligned.col_stride != 1;
    const int outer = lanes_on_rows ? cols : rows, inner = lanes_on_rows ? rows : cols;
    const auto strides = [&](const matrix_ref& m) {
      return copy_strides{lanes_on_rows ? m.col_stride : m.row_stride, lanes_on_rows ? m.row_stride : m.col_stride,
                          m.batch_stride};
    };
    const std::int64_t n = std::max(layers(from), layers(to));
    // Lines: both sides contiguous along inner (the copy always is).
    const bool lines = strides(from).inner == 1 && strides(to).inner == 1;
    if (elem == 2) launch<std::uint16_t>(from, to, &to == &aligned, lines, outer, inner, n, strides(from), strides(to));
    else launch<std::uint32_t>(from, to, &to == &aligned, lines, outer, inner, n, strides(from), strides(to));
  }
  template <class T>
  void launch(const matrix_ref& from, const matrix_ref& to, bool to_aligned, bool lines, int outer, int inner,
              std::int64_t n, copy_strides s, copy_strides d) const {
    const int per_lane = lines ? 16 / int(sizeof(T)) : 1;
    const std::int64_t blocks_x = (inner + 256 * per_lane - 1) / (256 * per_lane);
    const dim3 block(256);
    const dim3 grid(unsigned(blocks_x < 8 ? blocks_x : 8), unsigned(outer < 65535 ? outer : 65535),
                    unsigned(n < 65535 ? n : 65535));
    const T* src = static_cast<const T*>(from.ptr);
    T* dst = static_cast<T*>(const_cast<void*>(to.ptr));
    using entry_t = void (*)(const T*, T*, int, int, int, copy_strides, copy_strides, bool);
    const entry_t entry = !lines    ? copy_operand_kernel<T>
                          : to_aligned ? copy_operand_lines_kernel<T, true>
                                       : copy_operand_lines_kernel<T, false>;
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice", launch_shape{});
    // Overlapped only where the copy is small (what it saves is a launch's
    // latency, ~µs; H100, bench/notes/cuda_gemm.md): +2-18% against cuBLAS
    // from 64 × 65 × 33 to 2047 × 2049 × 1023 (copies of 8 MiB and less); at
    // 4095 × 4097 × 4095 (33 MiB) 2-7% slower overlapped, so plain there.
    const std::int64_t bytes = n * outer * inner * std::int64_t(sizeof(T));
    const bool overlapped =
        bytes <= overlap_max_bytes && may_overlap_predecessor(reinterpret_cast<const void*>(entry), device);
    check(launch_maybe_overlapped(entry, grid, block, stream_, overlapped, src, dst, outer, inner, int(n), s, d,
                                  overlapped),
          "operand copy launch (cudaLaunchKernelEx)", launch_shape{});
  }

  static constexpr std::int64_t overlap_max_bytes = std::int64_t(16) << 20;
  gemm_call original_;
  cudaStream_t stream_;
  void* ws_ = nullptr;
  bool made_ = false, c_copied_ = false;
};

}  // namespace tessel::cuda
