# Install rules and the CMake package: `cmake --install` gives the headers, the uops and
# uops_oracle, uops_runtime and uops_scheduled libraries, uopc, and a package that
# `find_package(uops)` finds.
include(CMakePackageConfigHelpers)

install(TARGETS uops uops_oracle uops_runtime uops_scheduled uops_cuda_driver EXPORT uopsTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
target_include_directories(uops_oracle PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
install(TARGETS uopc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/uops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(UOPS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/uops)
install(EXPORT uopsTargets NAMESPACE uops:: DESTINATION ${UOPS_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/uopsConfig.cmake.in
  ${PROJECT_BINARY_DIR}/uopsConfig.cmake INSTALL_DESTINATION ${UOPS_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/uopsConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/uopsConfig.cmake ${PROJECT_BINARY_DIR}/uopsConfigVersion.cmake
  DESTINATION ${UOPS_CMAKE_DIR})
