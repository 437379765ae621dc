// tessel/core/config.hpp — the one place that knows which compiler is running.
//
// Contract: every other header spells qualifiers through these macros and never
// tests __CUDACC__ / __HIPCC__ itself. Host-only builds (g++) see plain inline
// functions, so every core header parses and runs on the host.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TESSEL_GPU_COMPILER 1
#define TESSEL_HOST_DEVICE __host__ __device__ __forceinline__
#define TESSEL_DEVICE __device__ __forceinline__
#else
#define TESSEL_GPU_COMPILER 0
// always_inline: host helpers compiled into several ISA-specific translation
// units (AVX2, AVX-512) must never leave an out-of-line copy that the linker
// could hand to a baseline caller.
#define TESSEL_HOST_DEVICE inline __attribute__((always_inline))
#define TESSEL_DEVICE inline __attribute__((always_inline))
#endif

// True while compiling device code (the device pass of nvcc or hipcc).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TESSEL_DEVICE_PASS 1
#else
#define TESSEL_DEVICE_PASS 0
#endif

// Full unrolling of fragment loops: on GPUs it keeps fragments in registers.
#if TESSEL_GPU_COMPILER
#define TESSEL_UNROLL _Pragma("unroll")
#else
#define TESSEL_UNROLL
#endif
