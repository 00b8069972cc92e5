# SPDX-License-Identifier: MIT
# contrib/spack/package.py compiles, and against a tiny stand-in for Spack's `spack.package`
# module (here only) declares the variants the build has (mpi=mpich|openmpi, opencl) and turns
# them into the CMake options the build reads (SLUICE_MPI, SLUICE_BUILD_TESTS).
recipe=$SOURCE_DIR/contrib/spack/package.py
PYTHONPYCACHEPREFIX=$PWD/pycache timeout 60 python3 -m py_compile "$recipe"
echo "ok: py_compile"
mkdir -p stub/spack
: > stub/spack/__init__.py
cat > stub/spack/package.py <<'PY'
declared = {"variants": {}, "depends": [], "versions": [], "licenses": []}
def version(v, **kw): declared["versions"].append(v)
def variant(name, default=None, values=None, multi=None, description=""):
    declared["variants"][name] = {"default": default, "values": values}
def depends_on(spec, when=None, type=None): declared["depends"].append((spec, when))
def license(l): declared["licenses"].append(l)
class CMakePackage:
    def __init__(self, spec): self.spec = spec
    def define(self, name, value): return f"-D{name}={'ON' if value is True else 'OFF' if value is False else value}"
    def define_from_variant(self, name, variant):
        return self.define(name, self.spec.variants[variant])
__all__ = ["version", "variant", "depends_on", "license", "CMakePackage"]
PY
cat > check.py <<'PY'
import importlib.util, sys
sys.path.insert(0, "stub")
import spack.package as sp
spec = importlib.util.spec_from_file_location("recipe", sys.argv[1])
recipe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(recipe)
v = sp.declared["variants"]
assert set(v["mpi"]["values"]) == {"mpich", "openmpi"}, v
assert v["mpi"]["default"] == "mpich" and v["opencl"]["default"] is True, v
assert ("mpich", "mpi=mpich") in sp.declared["depends"] and ("openmpi", "mpi=openmpi") in sp.declared["depends"]
assert sp.declared["licenses"] == ["MIT"]
class Mpi: mpicc = "/spack/mpich/bin/mpicc"
class Spec:
    variants = {"mpi": "openmpi", "tests": False, "opencl": True}
    def __getitem__(self, k): return Mpi()
args = recipe.Sluice(Spec()).cmake_args()
print(" ".join(args))
assert "-DSLUICE_MPI=openmpi" in args and "-DSLUICE_BUILD_TESTS=OFF" in args, args
PY
out=$(PYTHONDONTWRITEBYTECODE=1 timeout 60 python3 check.py "$recipe")
expect_contains "cmake arguments from the variants" "-DSLUICE_MPI=openmpi" "$out"
# The variant values are the ones the build accepts.
grep -q 'set_property(CACHE SLUICE_MPI PROPERTY STRINGS mpich openmpi)' "$SOURCE_DIR/cmake/SluiceDependencies.cmake" ||
  fail "SLUICE_MPI choices changed: update contrib/spack/package.py"
echo "install_spack_recipe: all passed"
