// tessel/cuda/sm90_trace.hpp — diagnostic timeline of the sm90 schedule (TESSEL_SM90_TRACE=N only).
//
// Block 0's producer thread (role 0) and the first thread of each of the first
// two consumer warpgroups (roles 1, 2) record (event, unit, step, clock64) in
// the N-th launch (counted per role) of an sm90 kernel; the launcher then runs
// dump(), which prints what was recorded once ("TRACE role event unit step clock").
// TESSEL_SM90_SPANS=N (below): when every block enters, ends each unit and exits, in launches N .. N + 3.
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

// TESSEL_SM90_SPANS=N only: in sm90 launches N .. N + 3 of the process (the
// first kernel a process launches through this header is launch 1; a process
// that launches kernels of several translation units counts each unit's
// apart on the device, so run one GEMM type per process), every block's
// thread 0 stamps %globaltimer at kernel entry and its first consumer thread
// when its work starts, after each unit's epilogue is issued and once its
// last stores are done, and the SM's clock64 beside the start and unit
// stamps. After launch N + 3 the launcher prints them ("SPAN launch block
// smid units entry start t1 ... tn exit", nanoseconds; "CLOCK launch block
// start c1 ... cn", SM cycles; bench/sm90_spans.py reads them).
#ifdef TESSEL_SM90_SPANS
#include <cstdio>
namespace tessel::cuda::sm90_spans {
constexpr int launches = 4, max_blocks = 264, max_units = 48;
static __device__ unsigned long long stamp[launches][max_blocks][max_units + 3];
static __device__ long long cycles[launches][max_blocks][max_units + 1];
static __device__ unsigned sm[launches][max_blocks];
static __device__ int count[launches][max_blocks];
static __device__ unsigned long long entered[2];  // blocks entered so far: thread 0's count, the consumer's
__device__ inline unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// This launch's slot (-1: not recorded), counted by `who` (0: thread 0, 1: the first consumer thread).
__device__ inline int slot_of(int who) {
  const long long launch = (long long)(atomicAdd(&entered[who], 1ULL) / gridDim.x) + 1;  // 1, 2, ...
  const long long slot = launch - TESSEL_SM90_SPANS;
  return slot >= 0 && slot < launches && blockIdx.x < max_blocks ? int(slot) : -1;
}
__device__ inline void entry() {
  const unsigned long long t = now();
  const int s = slot_of(0);
  if (s < 0) return;
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  sm[s][blockIdx.x] = id;
  stamp[s][blockIdx.x][0] = t;
}
struct rec {
  int s = -1, n = 0;
  __device__ void start() {
    s = slot_of(1);
    if (s < 0) return;
    stamp[s][blockIdx.x][1] = now();
    cycles[s][blockIdx.x][0] = clock64();
  }
  __device__ void unit_done() {
    if (s < 0 || n >= max_units) return;
    stamp[s][blockIdx.x][2 + n] = now();
    cycles[s][blockIdx.x][1 + n++] = clock64();
  }
  __device__ void exit() {
    if (s < 0) return;
    stamp[s][blockIdx.x][2 + n] = now();
    count[s][blockIdx.x] = n;
  }
};
static __global__ void dump(int first, int blocks) {
  for (int s = 0; s < launches; ++s)
    for (int b = 0; b < blocks && b < max_blocks; ++b) {
      printf("SPAN %d %d %u %d", first + s, b, sm[s][b], count[s][b]);
      for (int i = 0; i <= count[s][b] + 2; ++i) printf(" %llu", stamp[s][b][i]);
      printf("\nCLOCK %d %d", first + s, b);
      for (int i = 0; i <= count[s][b]; ++i) printf(" %lld", cycles[s][b][i]);
      printf("\n");
    }
}
inline void after_launch(cudaStream_t stream, int blocks) {
  static int n = 0;
  if (++n == TESSEL_SM90_SPANS + launches - 1) dump<<<1, 1, 0, stream>>>(TESSEL_SM90_SPANS, blocks);
}
}  // namespace tessel::cuda::sm90_spans
#define TESSEL_SM90_SPANNED(...) __VA_ARGS__
#else
#define TESSEL_SM90_SPANNED(...)
#endif
