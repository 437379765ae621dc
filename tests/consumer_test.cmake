# Installs the build into a scratch prefix, then configures, builds and runs
# examples/consumer against it with find_package(tessel). Run by CTest.
# SANITIZE (the build's TESSEL_SANITIZE, may be empty): the consumer is compiled
# and linked with the same sanitizers as the installed library.
file(REMOVE_RECURSE ${WORK_DIR})
set(flags)
if(SANITIZE)
  set(flags "-DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer"
            "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/build
  -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${flags} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer with find_package(tessel) failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer's product was wrong (${rc})")
endif()
