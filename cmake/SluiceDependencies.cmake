# SPDX-License-Identifier: MIT
# Finds sluice's dependencies with the standard find modules. Every failure names the Debian
# package that provides what is missing, because that is what a user on a cluster can act on.
#
# Produces:
#   sluice::deps_headers  include paths only (MPI, OpenCL headers, uthash): for pure util code
#   sluice::deps          everything the library links: MPI, libunwind, dl, pthread
#   OpenCL::OpenCL        the ICD loader (only test programs link it; libsluice dlopens it)
#
# MPI choice: -DSLUICE_MPI=mpich (default) or -DSLUICE_MPI=openmpi picks that flavour's mpicc
# wrapper for FindMPI; MPI_C_COMPILER / MPI_HOME still override as usual.

macro(sluice_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "sluice: ${what} not found. On Debian/Ubuntu install it with: apt-get install ${package}")
  endif()
endmacro()

set(SLUICE_MPI "mpich" CACHE STRING "MPI flavour to build against: mpich or openmpi")
set_property(CACHE SLUICE_MPI PROPERTY STRINGS mpich openmpi)
if(NOT MPI_C_COMPILER AND NOT MPI_HOME)
  find_program(_sluice_mpicc NAMES mpicc.${SLUICE_MPI})
  if(_sluice_mpicc)
    set(MPI_C_COMPILER ${_sluice_mpicc} CACHE FILEPATH "MPI C compiler wrapper")
  endif()
endif()
if(SLUICE_MPI STREQUAL "openmpi")
  set(_sluice_mpi_pkg "libopenmpi-dev openmpi-bin")
else()
  set(_sluice_mpi_pkg "libmpich-dev mpich")
endif()
find_package(MPI COMPONENTS C)
sluice_require(MPI_C_FOUND "MPI (C bindings)" "${_sluice_mpi_pkg}")
find_program(SLUICE_MPIEXEC NAMES mpiexec.${SLUICE_MPI} mpiexec HINTS ${MPI_HOME}/bin)
sluice_require(SLUICE_MPIEXEC "mpiexec" "${_sluice_mpi_pkg}")
# /bin/mpiexec.openmpi (usrmerge) makes Open MPI take "/" as its prefix and abort: use the real path.
get_filename_component(SLUICE_MPIEXEC "${SLUICE_MPIEXEC}" REALPATH)

# The soname of the MPI C library, which libsluice.so loads itself when a non-MPI program needs MPI
# (runtime/mpi/library.h explains why it is not a link dependency).
set(SLUICE_MPI_LIBRARY "")
foreach(_lib IN LISTS MPI_C_LIBRARIES)
  if(_lib MATCHES "lib(mpich|mpi)\\.so")
    execute_process(COMMAND objdump -p ${_lib} OUTPUT_VARIABLE _dump ERROR_QUIET)
    if(_dump MATCHES "SONAME +([^ \n]+)")
      set(SLUICE_MPI_LIBRARY ${CMAKE_MATCH_1})
      break()
    endif()
  endif()
endforeach()
if(NOT SLUICE_MPI_LIBRARY)
  list(GET MPI_C_LIBRARIES 0 SLUICE_MPI_LIBRARY)
endif()
message(STATUS "sluice: MPI ${MPI_C_VERSION} (${SLUICE_MPI}): ${SLUICE_MPI_LIBRARY}, launcher ${SLUICE_MPIEXEC}")


find_path(SLUICE_OPENCL_INCLUDE_DIR CL/cl.h)
sluice_require(SLUICE_OPENCL_INCLUDE_DIR "OpenCL headers (CL/cl.h)" "opencl-headers")
find_package(OpenCL)
sluice_require(OpenCL_FOUND "OpenCL ICD loader (libOpenCL.so)" "ocl-icd-opencl-dev")

find_path(SLUICE_UTHASH_INCLUDE_DIR uthash.h)
sluice_require(SLUICE_UTHASH_INCLUDE_DIR "uthash (uthash.h)" "uthash-dev")

find_package(PkgConfig)
sluice_require(PKG_CONFIG_FOUND "pkg-config" "pkg-config")
pkg_check_modules(LIBUNWIND IMPORTED_TARGET libunwind)
sluice_require(LIBUNWIND_FOUND "libunwind" "libunwind-dev")

find_package(Threads REQUIRED)

add_library(sluice_deps_headers INTERFACE)
target_include_directories(sluice_deps_headers INTERFACE
  ${MPI_C_INCLUDE_DIRS} ${SLUICE_OPENCL_INCLUDE_DIR} ${SLUICE_UTHASH_INCLUDE_DIR})
target_compile_definitions(sluice_deps_headers INTERFACE
  _GNU_SOURCE CL_TARGET_OPENCL_VERSION=300 CL_USE_DEPRECATED_OPENCL_1_0_APIS
  CL_USE_DEPRECATED_OPENCL_1_1_APIS CL_USE_DEPRECATED_OPENCL_1_2_APIS CL_USE_DEPRECATED_OPENCL_2_0_APIS
  CL_USE_DEPRECATED_OPENCL_2_1_APIS CL_USE_DEPRECATED_OPENCL_2_2_APIS)
add_library(sluice::deps_headers ALIAS sluice_deps_headers)

# What libsluice.so links: everything but MPI (bound lazily, see runtime/mpi/library.h).
# libunwind is dlopen'ed only when SLUICE_BACKTRACE asks for call sites (runtime/trace/callsite.c).
execute_process(COMMAND objdump -p ${pkgcfg_lib_LIBUNWIND_unwind} OUTPUT_VARIABLE _dump ERROR_QUIET)
if(_dump MATCHES "SONAME +([^ \n]+)")
  set(SLUICE_LIBUNWIND ${CMAKE_MATCH_1})
else()
  set(SLUICE_LIBUNWIND libunwind.so.8)
endif()
# The Debian package of each library loaded at run time, for the one-line message a missing one
# gives when the feature that needs it is first used (and for the .pc file and docs/INSTALL.md).
function(sluice_debian_package out library fallback)
  set(_pkg ${fallback})
  find_program(SLUICE_DPKG dpkg)
  if(SLUICE_DPKG AND library)
    get_filename_component(_real "${library}" REALPATH)
    execute_process(COMMAND ${SLUICE_DPKG} -S ${_real} OUTPUT_VARIABLE _owner ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND _owner MATCHES "^([^:, ]+)")
      set(_pkg ${CMAKE_MATCH_1})
    endif()
  endif()
  set(${out} ${_pkg} PARENT_SCOPE)
endfunction()
foreach(_lib IN LISTS MPI_C_LIBRARIES)
  if(_lib MATCHES "lib(mpich|mpi)\\.so")
    set(_sluice_mpi_file ${_lib})
    break()
  endif()
endforeach()
if(SLUICE_MPI STREQUAL "openmpi")
  sluice_debian_package(SLUICE_MPI_DEB "${_sluice_mpi_file}" libopenmpi3)
else()
  sluice_debian_package(SLUICE_MPI_DEB "${_sluice_mpi_file}" libmpich12)
endif()
sluice_debian_package(SLUICE_OPENCL_DEB "${OpenCL_LIBRARY}" ocl-icd-libopencl1)
sluice_debian_package(SLUICE_LIBUNWIND_DEB "${pkgcfg_lib_LIBUNWIND_unwind}" libunwind8)
message(STATUS "sluice: run-time packages ${SLUICE_MPI_DEB} ${SLUICE_OPENCL_DEB} ${SLUICE_LIBUNWIND_DEB}")

add_library(sluice_deps_nompi INTERFACE)
target_include_directories(sluice_deps_nompi INTERFACE ${LIBUNWIND_INCLUDE_DIRS})
target_link_libraries(sluice_deps_nompi INTERFACE sluice_deps_headers Threads::Threads ${CMAKE_DL_LIBS} rt m)
target_compile_definitions(sluice_deps_nompi INTERFACE SLUICE_MPI_LIBRARY="${SLUICE_MPI_LIBRARY}"
  SLUICE_LIBUNWIND="${SLUICE_LIBUNWIND}")
add_library(sluice::deps_nompi ALIAS sluice_deps_nompi)
# Open MPI's predefined handles (MPI_INT, MPI_COMM_WORLD, ...) are data symbols, which the dynamic
# linker must resolve at load time, so with Open MPI the library links MPI after all (and is then
# not invisible to non-MPI programs: docs/MPI.md).
if(SLUICE_MPI STREQUAL "openmpi")
  target_link_libraries(sluice_deps_nompi INTERFACE MPI::MPI_C)
endif()
# What tests and benchmarks that link the engine statically use: the same plus MPI.
add_library(sluice_deps INTERFACE)
target_link_libraries(sluice_deps INTERFACE sluice_deps_nompi MPI::MPI_C PkgConfig::LIBUNWIND)
add_library(sluice::deps ALIAS sluice_deps)

if(SLUICE_BUILD_TESTS)
  find_package(GTest)
  sluice_require(GTest_FOUND "GoogleTest" "googletest libgtest-dev")
endif()
