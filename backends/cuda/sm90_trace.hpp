// tessel/cuda/sm90_trace.hpp — diagnostic timeline of the sm90 schedule (TESSEL_SM90_TRACE=N only).
//
// Block 0's producer thread (role 0) and the first thread of each of the first
// two consumer warpgroups (roles 1, 2) record (event, unit, step, clock64) in
// the N-th launch (counted per role) of an sm90 kernel; the launcher then runs
// dump(), which prints what was recorded once ("TRACE role event unit step clock").
// TESSEL_SM90_SPANS=N (below): when every block's units end, in launches N .. N + 3.
#pragma once
#ifdef TESSEL_SM90_TRACE
#include <cstdio>
namespace tessel::cuda::sm90_trace {
constexpr int capacity = 16384;  // events per role: an 8192^3 GEMM's block 0 records ~6,700
static __device__ unsigned long long when[3][capacity];
static __device__ unsigned what[3][capacity];
static __device__ int launch[3], done[3];
struct rec {
  int role = -1, n = 0;
  __device__ void begin(int r) {
    if (blockIdx.x != 0) return;
    if (atomicAdd(&launch[r], 1) == TESSEL_SM90_TRACE) role = r;
  }
  __device__ void at(char e, int unit, int k) {
    if (role < 0 || n >= capacity) return;
    when[role][n] = clock64();
    what[role][n] = unsigned(e) << 24 | unsigned(unit & 0xff) << 16 | unsigned(k & 0xffff);
    ++n;
  }
  __device__ void end() {
    if (role >= 0) done[role] = n;
  }
};
static __global__ void dump() {
  for (int r = 0; r < 3; ++r) {
    if (done[r] <= 0) continue;
    for (int i = 0; i < done[r]; ++i)
      printf("TRACE %d %c %u %u %llu\n", r, char(what[r][i] >> 24), (what[r][i] >> 16) & 0xff, what[r][i] & 0xffff,
             when[r][i]);
    done[r] = -1;
  }
}
}  // namespace tessel::cuda::sm90_trace
#define TESSEL_SM90_TRACED(...) __VA_ARGS__
#else
#define TESSEL_SM90_TRACED(...)
#endif

// TESSEL_SM90_SPANS=N only: every block's first consumer thread stamps
// %globaltimer when its work starts and after each unit's epilogue is issued;
// the launcher prints the stamps of sm90 launches N .. N + 3 of the process
// ("SPAN launch block smid units t0 t1 ... tn", nanoseconds).
#ifdef TESSEL_SM90_SPANS
#include <cstdio>
namespace tessel::cuda::sm90_spans {
constexpr int max_blocks = 264, max_units = 48;
static __device__ unsigned long long stamp[max_blocks][max_units + 1];
static __device__ unsigned sm[max_blocks];
static __device__ int count[max_blocks];
__device__ inline unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ inline void start(int block) {
  if (block >= max_blocks) return;
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  sm[block] = id;
  count[block] = 0;
  stamp[block][0] = now();
}
__device__ inline void unit_done(int block, long long mine) {
  if (block >= max_blocks || mine >= max_units) return;
  stamp[block][mine + 1] = now();
  count[block] = int(mine + 1);
}
static __global__ void dump(int launch, int blocks) {
  for (int b = 0; b < blocks && b < max_blocks; ++b) {
    printf("SPAN %d %d %u %d", launch, b, sm[b], count[b]);
    for (int i = 0; i <= count[b]; ++i) printf(" %llu", stamp[b][i]);
    printf("\n");
  }
}
inline void after_launch(cudaStream_t stream, int blocks) {
  static int launches = 0;
  const int n = ++launches;
  if (n >= TESSEL_SM90_SPANS && n < TESSEL_SM90_SPANS + 4) dump<<<1, 1, 0, stream>>>(n, blocks);
}
}  // namespace tessel::cuda::sm90_spans
#define TESSEL_SM90_SPANNED(...) __VA_ARGS__
#else
#define TESSEL_SM90_SPANNED(...)
#endif
