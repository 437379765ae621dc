# Install the libraries, the header tree and an exported package, so that an
# outside project does find_package(tessel) and links tessel::tessel (C++) or
# tessel::tessel_c (the C ABI, libtessel_c.so).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS tessel tessel_c EXPORT tesselTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(_h IN LISTS TESSEL_API_HEADERS)
  install(FILES ${PROJECT_SOURCE_DIR}/api/${_h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessel)
endforeach()
set(_pairs ${TESSEL_HEADER_FOLDERS})
while(_pairs)
  list(POP_FRONT _pairs _src _dst)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_src}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessel/${_dst}
    FILES_MATCHING PATTERN "*.hpp")
endwhile()

install(EXPORT tesselTargets NAMESPACE tessel:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tesselConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tesselConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tesselConfig.cmake ${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)
