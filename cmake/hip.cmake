# The HIP backend (BACKEND=hip): CMake's HIP language on clang, MFMA code for
# CDNA2 (gfx90a) and CDNA3 (gfx940) by default.
#
# Defines tessel_add_hip_backend(<target>) and the target tessel_hip_runtime
# (the HIP runtime library and its headers, for code that calls the HIP API).
#
# Debian packages ROCm under the multiarch library folder instead of a ROCm
# root, so three nudges happen before enable_language(HIP), each only when the
# user has not decided otherwise:
#  - CMake wants <root>/lib/cmake/hip-lang: a folder in the build tree links
#    lib/cmake/hip-lang to Debian's copy and serves as CMAKE_HIP_COMPILER_ROCM_ROOT;
#  - the compiler check finds amd_comgr through CMAKE_PREFIX_PATH (environment);
#  - clang is told where the ROCm headers and device libraries are.
# On a regular ROCm install (/opt/rocm) none of this triggers.

set(_tessel_multiarch_cmake /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake)
set(_tessel_debian_rocm OFF)
if(CMAKE_LIBRARY_ARCHITECTURE AND EXISTS ${_tessel_multiarch_cmake}/hip-lang/hip-lang-config.cmake
   AND NOT EXISTS /usr/lib/cmake/hip-lang/hip-lang-config.cmake)
  set(_tessel_debian_rocm ON)
endif()

if(NOT CMAKE_HIP_COMPILER AND NOT DEFINED ENV{HIPCXX})
  # Debian's clang 15 is the one whose HIP toolchain matches ROCm 5.2. Its
  # versioned name (clang++-15) makes CMake pick clang 14's builtins runtime.
  foreach(_c /usr/lib/llvm-15/bin/clang++ /opt/rocm/llvm/bin/clang++)
    if(EXISTS ${_c})
      set(CMAKE_HIP_COMPILER ${_c} CACHE FILEPATH "HIP compiler (clang)")
      break()
    endif()
  endforeach()
endif()

if(NOT CMAKE_HIP_ARCHITECTURES)
  set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx940" CACHE STRING "AMD GPU targets of the HIP backend")
endif()

if(_tessel_debian_rocm)
  if(NOT CMAKE_HIP_COMPILER_ROCM_ROOT)
    set(_root ${PROJECT_BINARY_DIR}/rocm-root)
    file(MAKE_DIRECTORY ${_root}/lib/cmake)
    if(NOT EXISTS ${_root}/lib/cmake/hip-lang)
      file(CREATE_LINK ${_tessel_multiarch_cmake}/hip-lang ${_root}/lib/cmake/hip-lang SYMBOLIC)
    endif()
    set(CMAKE_HIP_COMPILER_ROCM_ROOT ${_root} CACHE PATH "ROCm root as CMake's HIP language sees it")
  endif()
  set(ENV{CMAKE_PREFIX_PATH} "${_tessel_multiarch_cmake}/amd_comgr:$ENV{CMAKE_PREFIX_PATH}")
  set(_bitcode /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/amdgcn/bitcode)
  set(CMAKE_HIP_FLAGS_INIT "--rocm-path=/usr --rocm-device-lib-path=${_bitcode}")
endif()

enable_language(HIP)

# The HIP runtime for host code that calls the HIP API (support library, tests).
if(NOT TARGET tessel_hip_runtime)
  find_library(TESSEL_AMDHIP64 amdhip64 REQUIRED
    HINTS ${CMAKE_HIP_COMPILER_ROCM_ROOT}/lib /opt/rocm/lib)
  find_path(TESSEL_HIP_INCLUDE hip/hip_runtime_api.h REQUIRED
    HINTS ${CMAKE_HIP_COMPILER_ROCM_ROOT}/include /opt/rocm/include)
  add_library(tessel_hip_runtime INTERFACE)
  target_link_libraries(tessel_hip_runtime INTERFACE ${TESSEL_AMDHIP64})
  target_include_directories(tessel_hip_runtime SYSTEM INTERFACE ${TESSEL_HIP_INCLUDE})
  # A host-only translation unit (g++) that includes the HIP headers must name
  # the platform, as hipcc would.
  target_compile_definitions(tessel_hip_runtime INTERFACE $<$<COMPILE_LANGUAGE:CXX>:__HIP_PLATFORM_AMD__=1>)
endif()

# Adds the HIP backend's sources to <target>.
function(tessel_add_hip_backend target)
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/backends/hip/gemm.hip)
  # Programs linking <target> need the HIP runtime. In the build tree the HIP
  # language adds it (hip-lang::amdhip64); an installed static <target> used
  # from a plain C++ project names it as -lamdhip64 from the folder found here.
  get_filename_component(_hip_libdir ${TESSEL_AMDHIP64} DIRECTORY)
  target_link_libraries(${target} INTERFACE $<INSTALL_INTERFACE:amdhip64>)
  target_link_directories(${target} INTERFACE $<INSTALL_INTERFACE:${_hip_libdir}>)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:HIP>:-Wall -Wextra -Wno-unused-parameter>)
  set_property(TARGET ${target} PROPERTY HIP_ARCHITECTURES ${CMAKE_HIP_ARCHITECTURES})
endfunction()
