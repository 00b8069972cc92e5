# SPDX-License-Identifier: MIT
# A user's build without the test suite needs no GoogleTest (README, docs/INSTALL.md): configure
# with -DSLUICE_BUILD_TESTS=OFF while CMake is forbidden to find GTest, and the configure step
# succeeds, defines no test, and still generates the man pages and packages. With the tests on,
# the same forbidden GTest is the one-line error naming the Debian packages.
out=$(timeout 180 cmake -S "$SOURCE_DIR" -B notests -DSLUICE_BUILD_TESTS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON 2>&1) ||
  fail "configure without tests failed: $(tail -n 5 <<<"$out")"
echo "ok: configured without tests and without GoogleTest"
[ ! -e notests/tests/CTestTestfile.cmake ] || fail "a build without tests has tests"
grep -q "sluice_man" notests/Makefile || fail "no man page target in a build without tests"
grep -q "WERROR:BOOL=OFF" notests/CMakeCache.txt || fail "warnings are errors by default"
echo "ok: no tests, man pages still built, warnings not errors by default"
rc_of timeout 180 cmake -S "$SOURCE_DIR" -B withtests -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON >withtests.out 2>&1
out=$(cat withtests.out)
[ "$rc" -ne 0 ] || fail "configure with tests succeeded without GoogleTest"
expect_contains "with tests, a missing GoogleTest names the packages" "GoogleTest not found. On Debian/Ubuntu install it with: apt-get install googletest libgtest-dev" "$(tr -s " \n" "  " <<<"$out")"
echo "install_no_tests: all passed"
