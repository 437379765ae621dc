// tessel/cpu/launch.hpp — blocks and grid on the CPU: one block is one oneTBB task.
//
// A CPU block has one warp of one lane: the SIMD thread running the task. Its
// shared arena is a buffer owned by the worker thread (reused across blocks),
// so "shared tiles" are packed panels that stay in that core's L1/L2. sync() is
// a no-op (one thread), shfl_xor the identity (one lane).
#pragma once
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "tessel/core/config.hpp"
#include "tessel/core/scope.hpp"
#include "tessel/error.hpp"

namespace tessel::cpu {

struct context {
  int bx, gz, bz;
  char* arena;
  TESSEL_HOST_DEVICE int block_x() const { return bx; }
  TESSEL_HOST_DEVICE int block_y() const { return 0; }
  TESSEL_HOST_DEVICE int block_z() const { return bz; }
  TESSEL_HOST_DEVICE int grid_z() const { return gz; }
  TESSEL_HOST_DEVICE int warp() const { return 0; }
  TESSEL_HOST_DEVICE int lane() const { return 0; }
  TESSEL_HOST_DEVICE int thread() const { return 0; }
  TESSEL_HOST_DEVICE int threads() const { return 1; }
  TESSEL_HOST_DEVICE void sync() const {}
  TESSEL_HOST_DEVICE float shfl_xor(float v, int) const { return v; }
  TESSEL_HOST_DEVICE char* smem() const { return arena; }
};

// Runs fn(arg) on at most `threads` threads (> 0) of oneTBB: inside a
// task_arena of that concurrency that the calling thread keeps for later
// calls with the same count (thread_arenas.cpp). A task_arena built per call
// cost 20-90 us on a 2-vCPU VM (bench/notes/cpu_gemm.md, session 51): 2-8% of
// a 512^3 GEMM at 2 threads. Out of line and compiled without ISA flags, so
// that the AVX2 and AVX-512 objects share no instantiation of it.
void run_on_threads(int threads, void (*fn)(void*), void* arg);
// f() on at most `threads` threads (0: the caller's arena, by default all cores).
template <class F> void with_threads(int threads, F&& f) {
  if (threads > 0) {
    run_on_threads(threads, [](void* p) { (*static_cast<std::remove_reference_t<F>*>(p))(); }, &f);
  } else {
    f();
  }
}

struct aligned_free {
  void operator()(char* p) const { std::free(p); }
};

// A growable 64-byte-aligned buffer, one per worker thread.
struct arena_buffer {
  std::unique_ptr<char, aligned_free> data;
  std::size_t size = 0;
  TESSEL_HOST_DEVICE char* get(std::size_t bytes) {
    if (bytes > size) {
      const std::size_t rounded = (bytes + 63) / 64 * 64;
      data.reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
      if (!data) throw std::bad_alloc();
      size = rounded;
    }
    return data.get();
  }
};

// Runs Kernel::run(ctx, params) for every block of the launch, on at most
// `threads` threads (0: all). Returns when every block is done.
template <class Kernel, class Params> void launch(const launch_shape& shape, const Params& params, int threads) {
  const long blocks = long(shape.grid_x) * shape.grid_z;
  if (blocks == 0) return;
  if (shape.cluster_x != 1) throw Error("tessel cpu backend: no block clusters (a schedule asked for them)");
  tbb::enumerable_thread_specific<arena_buffer> arenas;
  auto body = [&](const tbb::blocked_range<long>& range) {
    char* arena = arenas.local().get(std::size_t(shape.smem_bytes) + 64);
    for (long b = range.begin(); b != range.end(); ++b) {
      context ctx{int(b % shape.grid_x), shape.grid_z, int(b / shape.grid_x), arena};
      Kernel::run(ctx, params);
    }
  };
  with_threads(threads, [&] { tbb::parallel_for(tbb::blocked_range<long>(0, blocks, 1), body); });
}

}  // namespace tessel::cpu
