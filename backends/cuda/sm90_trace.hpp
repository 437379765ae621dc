// tessel/cuda/sm90_trace.hpp — diagnostic timeline of the sm90 schedule (TESSEL_SM90_TRACE=N only).
//
// Block 0's producer thread (role 0) and the first thread of each of the first
// two consumer warpgroups (roles 1, 2) record (event, unit, step, clock64) in
// the N-th launch (counted per role) of an sm90 kernel; the launcher then runs
// dump(), which prints what was recorded once ("TRACE role event unit step clock").
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
