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

function(tessel_add_cuda_backend target)
  # One translation unit per GEMM type pair, so they compile in parallel.
  set(_dir ${PROJECT_SOURCE_DIR}/backends/cuda)
  target_sources(${target} PRIVATE ${_dir}/gemm.cu ${_dir}/gemm_f32_f32.cu ${_dir}/gemm_f16_f16.cu
    ${_dir}/gemm_f16_f32.cu ${_dir}/gemm_bf16_bf16.cu ${_dir}/gemm_bf16_f32.cu)
  target_link_libraries(${target} PRIVATE CUDA::cudart)
endfunction()
