# SPDX-License-Identifier: MIT
# Spack recipe for sluice: copy into a Spack repository as packages/sluice/package.py.
#   spack install sluice                 # MPICH, OpenCL on
#   spack install sluice mpi=openmpi ~opencl
import os

from spack.package import *


class Sluice(CMakePackage):
    """Checkpoint capture, distributed OpenCL and cheap per-rank traces for unmodified MPI
    programs, as one LD_PRELOAD library (libsluice.so) with a launcher and tools."""

    # No public release yet: build from a clone (SLUICE_GIT: its URL or path), or from a working
    # tree with `spack develop --path <checkout> sluice@main`. No homepage until there is one.
    git = os.environ.get("SLUICE_GIT", "file://" + os.path.expanduser("~/src/sluice"))

    license("MIT")

    version("main", branch="main")

    variant(
        "mpi",
        default="mpich",
        values=("mpich", "openmpi"),
        multi=False,
        description="MPI flavour the library is built against (SLUICE_MPI)",
    )
    variant("opencl", default=True, description="Run-time OpenCL loader and headers (tracing, distribution)")
    variant("tests", default=False, description="Build the test suite (needs GoogleTest)")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.20:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("python@3:", type="build")
    depends_on("uthash", type="build")
    depends_on("libunwind")
    depends_on("mpich", when="mpi=mpich")
    depends_on("openmpi", when="mpi=openmpi")
    # The OpenCL headers are needed by the build either way (the wrappers are generated from them).
    depends_on("opencl-c-headers", type="build")
    depends_on("opencl-icd-loader", when="+opencl", type=("build", "link", "run"))
    depends_on("pocl", when="+opencl", type="run")
    depends_on("googletest", when="+tests", type="build")

    def cmake_args(self):
        return [
            self.define_from_variant("SLUICE_MPI", "mpi"),
            self.define("MPI_C_COMPILER", self.spec["mpi"].mpicc),
            self.define_from_variant("SLUICE_BUILD_TESTS", "tests"),
            self.define("SLUICE_WERROR", False),
        ]

    def setup_run_environment(self, env):
        # libsluice.so dlopens MPI, OpenCL and libunwind by soname at run time.
        libs = [self.spec["libunwind"].prefix.lib, self.spec["mpi"].prefix.lib]
        if self.spec.satisfies("+opencl"):
            libs.append(self.spec["opencl-icd-loader"].prefix.lib)
        for lib in libs:
            env.prepend_path("LD_LIBRARY_PATH", lib)
