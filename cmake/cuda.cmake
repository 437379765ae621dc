# The CUDA backend: tensor-core GEMM for sm_80 (A100) and sm_90a (H100).
#
# Included at the top level (enable_language must run at file scope). The
# default architectures are "80;90a": CMake turns 90a into
# --generate-code=arch=compute_90a,code=[compute_90a,sm_90a], the
# architecture-specific Hopper target (wgmma, setmaxnreg). Override with
# -DCMAKE_CUDA_ARCHITECTURES=... (e.g. 90a alone for a faster local build).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 80 90a)
endif()
# One CUDA runtime in the process: the shared one, which CUDA::cudart names too.
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
enable_language(CUDA)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)
find_package(CUDAToolkit REQUIRED)
# ON: the CUDA sources are compiled only to check that they build, on a machine with no GPU (CI:
# scripts/test.sh sets it where nvidia-smi finds none): the host compiler at -O0 and cicc and ptxas at
# nvcc's fastest compile (-Ofc=max: every kernel still generated and assembled, fewer optimisations).
# The bf16 -> fp32 GEMM's translation unit: 229 -> 99 compiler-seconds (2-vCPU VM, 2026-12-02). Such a
# build is never to be timed: tessel-bench refuses to time it and the tests say what it is. Every
# build that runs kernels (bench/device.sh) leaves it OFF.
option(TESSEL_CUDA_CHECK_ONLY "Compile the CUDA code with few optimisations, only to check that it builds (no GPU)" OFF)
if(TESSEL_CUDA_CHECK_ONLY)
  foreach(_cfg RELEASE RELWITHDEBINFO MINSIZEREL DEBUG)
    string(REGEX REPLACE "(^| )-O[0-9s]( |$)" " " CMAKE_CUDA_FLAGS_${_cfg} "${CMAKE_CUDA_FLAGS_${_cfg}}")
  endforeach()
  include(CheckCompilerFlag)
  check_compiler_flag(CUDA -Ofc=max TESSEL_NVCC_HAS_FAST_COMPILE)  # (not every nvcc has it)
  add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-O0>")
  if(TESSEL_NVCC_HAS_FAST_COMPILE)
    add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Ofc=max>")
  else()
    message(STATUS "tessel: this nvcc has no -Ofc: TESSEL_CUDA_CHECK_ONLY compiles device code optimised")
  endif()
  add_compile_definitions(TESSEL_CUDA_CHECK_ONLY=1)
endif()

function(tessel_add_cuda_backend target)
  # One translation unit per GEMM type pair, so they compile in parallel.
  set(_dir ${PROJECT_SOURCE_DIR}/backends/cuda)
  target_sources(${target} PRIVATE ${_dir}/gemm.cu ${_dir}/gemm_f32_f32.cu ${_dir}/gemm_f16_f16.cu
    ${_dir}/gemm_f16_f32.cu ${_dir}/gemm_bf16_bf16.cu ${_dir}/gemm_bf16_f32.cu)
  target_link_libraries(${target} PRIVATE CUDA::cudart)
endfunction()
