# Installs the build into a scratch prefix, then configures, builds and runs
# examples/consumer (C++, tessel::tessel) and examples/c_consumer (C, the C ABI:
# tessel::tessel_c) against it with find_package(tessel). Run by CTest.
# SANITIZE (the build's TESSEL_SANITIZE, may be empty): the consumers are
# compiled and linked with the same sanitizers as the installed libraries, and
# SANITIZE_C_LINK (a list, may be empty) added to their link (the C one needs it:
# CMakeLists.txt; a C++ program links those libraries anyway).
# C_COMPILER, CXX_COMPILER: the build's compilers, which the consumers use too.
file(REMOVE_RECURSE ${WORK_DIR})
set(flags "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
if(SANITIZE)
  set(_san "-fsanitize=${SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer")
  list(JOIN SANITIZE_C_LINK " " _c_link)
  list(APPEND flags "-DCMAKE_CXX_FLAGS=${_san}" "-DCMAKE_C_FLAGS=${_san}"
       "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE} ${_c_link}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()

# examples/<name>: configure against the prefix, build, run ./<name>.
function(run_consumer name)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/${name} -B ${WORK_DIR}/${name}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix --no-warn-unused-cli ${flags} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "configuring examples/${name} with find_package(tessel) failed (${rc})")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/${name} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "building examples/${name} failed (${rc})")
  endif()
  execute_process(COMMAND ${WORK_DIR}/${name}/${name} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "examples/${name}: the product was wrong (${rc})")
  endif()
endfunction()
run_consumer(consumer)
run_consumer(c_consumer)
