# The public include tree: sources stay in short folders (core/, ops/, api/,
# backends/<b>/), users and the library include them as <tessel/...>. In the
# build tree this is a folder of symbolic links; `cmake --install` copies the
# same tree to <prefix>/include/tessel.
set(TESSEL_INCLUDE_TREE ${PROJECT_BINARY_DIR}/include)
set(_tree ${TESSEL_INCLUDE_TREE}/tessel)
file(MAKE_DIRECTORY ${_tree})
set(TESSEL_HEADER_FOLDERS
  core core
  ops ops
  backends/cpu cpu
  backends/cuda cuda
  backends/hip hip)
set(_pairs ${TESSEL_HEADER_FOLDERS})
while(_pairs)
  list(POP_FRONT _pairs _src _dst)
  if(NOT EXISTS ${_tree}/${_dst})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${_src} ${_tree}/${_dst} SYMBOLIC)
  endif()
endwhile()
file(GLOB TESSEL_API_HEADERS CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}/api
  ${PROJECT_SOURCE_DIR}/api/*.hpp ${PROJECT_SOURCE_DIR}/api/*.h)  # .h: the C ABI's header
foreach(_h IN LISTS TESSEL_API_HEADERS)
  if(NOT EXISTS ${_tree}/${_h})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/api/${_h} ${_tree}/${_h} SYMBOLIC)
  endif()
endforeach()
