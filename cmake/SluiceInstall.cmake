# SPDX-License-Identifier: MIT
# What `cmake --install build --prefix P` puts under P, all of it relocatable (no absolute path
# into the build or the source tree):
#   bin/sluice, bin/sluice-ckpt, bin/sluice-trace       (their own CMakeLists.txt)
#   lib/libsluice.so*                                   the preloadable library
#   include/<SLUICE_PUBLIC_HEADERS>                     the public API
#   lib/pkgconfig/sluice.pc                             pkg-config (paths from ${pcfiledir})
#   lib/cmake/sluice/                                   find_package(sluice) -> sluice::sluice
#   share/man/man1/sluice*.1, share/man/man7/sluice.7   generated from the tools' --help
#   share/bash-completion/completions/sluice*           generated from the same tables
#   share/doc/sluice/                                   README, INSTALL, LICENSE and docs/*.md
include(CMakePackageConfigHelpers)

# Run-time dependencies: loaded with dlopen, so the packaging tools cannot see them.
set(SLUICE_RUNTIME_DEPS
    "MPI ${SLUICE_MPI_LIBRARY} (${SLUICE_MPI_DEB}), OpenCL ICD loader libOpenCL.so.1 (${SLUICE_OPENCL_DEB}), libunwind ${SLUICE_LIBUNWIND} (${SLUICE_LIBUNWIND_DEB})")

set(SLUICE_PUBLIC_HEADER_NAMES)
foreach(h IN LISTS SLUICE_PUBLIC_HEADERS)
  install(FILES ${PROJECT_SOURCE_DIR}/${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  get_filename_component(_name ${h} NAME)
  list(APPEND SLUICE_PUBLIC_HEADER_NAMES ${_name})
endforeach()
string(REPLACE ";" " " SLUICE_PUBLIC_HEADER_NAMES "${SLUICE_PUBLIC_HEADER_NAMES}")

# The library, with what a program linking it needs: the headers, and MPI (libsluice.so leaves the
# MPI symbols to the program).
target_include_directories(sluice INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(sluice INTERFACE $<INSTALL_INTERFACE:MPI::MPI_C>)
install(TARGETS sluice EXPORT sluiceTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# pkg-config: Requires the MPI flavour's own .pc, which Debian's MPI packages install.
if(SLUICE_MPI STREQUAL "openmpi")
  set(SLUICE_PC_MPI ompi-c)
else()
  set(SLUICE_PC_MPI mpich)
endif()
file(RELATIVE_PATH SLUICE_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" SLUICE_PC_TO_PREFIX "${SLUICE_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/sluice.pc.in ${PROJECT_BINARY_DIR}/sluice.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sluice.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake package.
set(SLUICE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
set(SLUICE_MPI_C_COMPILER "${MPI_C_COMPILER}")
install(EXPORT sluiceTargets NAMESPACE sluice:: DESTINATION ${SLUICE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sluiceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sluiceConfig.cmake INSTALL_DESTINATION ${SLUICE_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sluiceConfig.cmake ${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake
        DESTINATION ${SLUICE_CMAKE_DIR})

# Man pages and bash completions, generated from the built tools' --help and --list-variables.
set(SLUICE_MAN_DIR ${PROJECT_BINARY_DIR}/man)
set(SLUICE_COMPLETION_DIR ${PROJECT_BINARY_DIR}/completions)
set(_man_pages ${SLUICE_MAN_DIR}/sluice.1 ${SLUICE_MAN_DIR}/sluice-ckpt.1 ${SLUICE_MAN_DIR}/sluice-trace.1
               ${SLUICE_MAN_DIR}/sluice.7)
set(_completions ${SLUICE_COMPLETION_DIR}/sluice ${SLUICE_COMPLETION_DIR}/sluice-ckpt
                 ${SLUICE_COMPLETION_DIR}/sluice-trace)
add_custom_command(
  OUTPUT ${_man_pages} ${_completions}
  COMMAND ${SLUICE_PYTHON3} ${PROJECT_SOURCE_DIR}/man/generate.py $<TARGET_FILE_DIR:sluice_launcher>
          ${PROJECT_VERSION} ${SLUICE_MAN_DIR} ${SLUICE_COMPLETION_DIR}
  DEPENDS ${PROJECT_SOURCE_DIR}/man/generate.py sluice_launcher sluice_ckpt_tool sluice_trace_tool
  COMMENT "Generating man pages and bash completions from the tools' --help"
  VERBATIM)
add_custom_target(sluice_man ALL DEPENDS ${_man_pages} ${_completions})
install(FILES ${SLUICE_MAN_DIR}/sluice.1 ${SLUICE_MAN_DIR}/sluice-ckpt.1 ${SLUICE_MAN_DIR}/sluice-trace.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${SLUICE_MAN_DIR}/sluice.7 DESTINATION ${CMAKE_INSTALL_MANDIR}/man7)
install(FILES ${_completions} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

# Documentation.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Pictures and other files the pages show, as they are; the pages themselves are rewritten below.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} PATTERN "*.md" EXCLUDE)
file(GLOB _docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(CODE "set(SLUICE_DOC_FILES \"${PROJECT_SOURCE_DIR}/README.md;${_docs}\")
  set(SLUICE_DOC_DEST \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\")
  include(\"${PROJECT_SOURCE_DIR}/cmake/install_docs.cmake\")")
