# SPDX-License-Identifier: MIT
# `cmake --install` into a temporary prefix, moved elsewhere afterwards (relocatable), then a
# small program that uses the public headers is built against it through pkg-config and through
# find_package(sluice), and run: its trace mark must reach the trace. The installed text files
# must not name the build or the source tree, and every man page must render.
build=$(cd "$SLUICE_BIN_DIR/.." && pwd)
timeout 120 cmake --install "$build" --prefix "$PWD/staging" >install.log
mv staging prefix # relocated: nothing may still point at staging/
prefix=$PWD/prefix

for f in bin/sluice bin/sluice-ckpt bin/sluice-trace lib/libsluice.so include/sluice.h \
         lib/pkgconfig/sluice.pc lib/cmake/sluice/sluiceConfig.cmake lib/cmake/sluice/sluiceTargets.cmake \
         share/man/man1/sluice.1 share/man/man1/sluice-ckpt.1 share/man/man1/sluice-trace.1 \
         share/man/man7/sluice.7 share/bash-completion/completions/sluice share/doc/sluice/ENV.md \
         share/doc/sluice/INSTALL.md share/doc/sluice/LICENSE; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
echo "ok: installed files present"
for tree in "$build" "$SOURCE_DIR" "$PWD/staging"; do
  hits=$(grep -rIlF "$tree" "$prefix" || true)
  [ -z "$hits" ] || fail "installed files name $tree: $hits"
done
echo "ok: no installed text file names the build, source or staging folder"

# The run-time dependencies are stated in the .pc file.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
deps=$(pkg-config --variable=runtime_dependencies sluice)
expect_contains ".pc names the OpenCL loader's package" "ocl-icd-libopencl1" "$deps"
expect_contains ".pc names libunwind" "libunwind" "$deps"

# Every header of the public list, included together, with the version and a trace mark.
mkdir app
cat > app/app.c <<'C'
#include <sluice.h>
#include <stdio.h>
int main(void)
{
    sluice_trace_mark("installed package works");
    printf("sluice %s\n", sluice_version());
    return 0;
}
C
version=$("$prefix/bin/sluice" --version | awk '{print $2}')
expect_eq "sluice-trace --version" "sluice-trace $version" "$("$prefix/bin/sluice-trace" --version)"
expect_contains "sluice-ckpt --version" "sluice-ckpt $version" "$("$prefix/bin/sluice-ckpt" --version)"

# 1. pkg-config (its Requires brings MPI: libsluice.so leaves the MPI symbols to the program).
read -r -a flags <<<"$(pkg-config --cflags --libs sluice)"
timeout 120 cc -o app/with_pc app/app.c "${flags[@]}"
out=$(LD_LIBRARY_PATH=$prefix/lib SLUICE_TRACE_DIR=$PWD/trace_pc timeout 60 app/with_pc)
expect_eq "pkg-config build runs" "sluice $version" "$out"
dump=$(timeout 60 "$prefix/bin/sluice-trace" dump trace_pc)
expect_contains "pkg-config build: the mark is in the trace" 'MARK label="installed package works"' "$dump"

# 2. CMake: find_package(sluice) and sluice::sluice; every header in sluice_HEADERS compiles.
cat > app/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.20)
project(sluice_consumer C)
find_package(sluice 0.1 REQUIRED)
set(all "")
foreach(h IN LISTS sluice_HEADERS)
  if(NOT EXISTS "${h}")
    message(FATAL_ERROR "sluice_HEADERS names a missing file: ${h}")
  endif()
  get_filename_component(n "${h}" NAME)
  string(APPEND all "#include <${n}>\n")
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/all_headers.c "${all}int all_headers_compile;\n")
add_executable(with_cmake app.c ${CMAKE_BINARY_DIR}/all_headers.c)
target_link_libraries(with_cmake PRIVATE sluice::sluice)
message(STATUS "sluice headers: ${sluice_HEADERS}")
CM
timeout 180 cmake -S app -B app/build -DCMAKE_PREFIX_PATH="$prefix" >cmake.log 2>&1 || { cat cmake.log; fail "configure against the package"; }
grep -q "sluice headers: $prefix/include/sluice.h" cmake.log || fail "sluice_HEADERS: $(grep 'sluice headers' cmake.log)"
timeout 180 cmake --build app/build >>cmake.log 2>&1 || { cat cmake.log; fail "build against the package"; }
out=$(LD_LIBRARY_PATH=$prefix/lib SLUICE_TRACE_DIR=$PWD/trace_cmake timeout 60 app/build/with_cmake)
expect_eq "CMake build runs" "sluice $version" "$out"
dump=$(timeout 60 "$prefix/bin/sluice-trace" dump trace_cmake)
expect_contains "CMake build: the mark is in the trace" 'MARK label="installed package works"' "$dump"

# 3. The installed launcher finds the installed library and docs.
out=$("$prefix/bin/sluice" --print-env)
expect_eq "installed launcher preloads the installed library" "LD_PRELOAD=$prefix/lib/libsluice.so" "$out"
help=$("$prefix/bin/sluice" --help)
expect_contains "--help names the installed ENV.md" "$prefix/share/doc/sluice/ENV.md" "$help"

# 4. Man pages render (man -l, warnings on), and say what --help says.
for page in man1/sluice.1 man1/sluice-ckpt.1 man1/sluice-trace.1 man7/sluice.7; do
  text=$(MANWIDTH=100 timeout 60 man --warnings -l "$prefix/share/man/$page" 2>man.err | col -b)
  [ ! -s man.err ] || fail "man -l $page warns: $(cat man.err)"
  [ "$(wc -l <<<"$text")" -gt 20 ] || fail "man -l $page rendered too little: $text"
  echo "ok: man -l $page ($(wc -l <<<"$text") lines)"
done
man7=$(MANWIDTH=200 man -l "$prefix/share/man/man7/sluice.7" | col -b)
for var in $("$prefix/bin/sluice" --list-variables | cut -f1); do
  grep -q "^ *$var\$" <<<"$man7" || fail "sluice(7) lacks $var"
done
echo "ok: sluice(7) has every variable"
man1=$(MANWIDTH=200 man -l "$prefix/share/man/man1/sluice-ckpt.1" | col -b)
for cmd in ls info verify extract pack recover; do
  grep -q "usage: \|sluice-ckpt $cmd" <<<"$man1" || fail "sluice-ckpt(1) lacks $cmd"
done
expect_contains "sluice-ckpt(1) has extract's options" "--output OUTDIR" "$man1"

# 5. Bash completion, from the same option tables.
comp=$prefix/share/bash-completion/completions
complete_words() { # SCRIPT FUNCTION WORDS...: what completing the last word offers
  local script=$1 fn=$2; shift 2
  bash -c 'source "$1"; fn=$2; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); "$fn"; echo "${COMPREPLY[*]}"' \
    _ "$script" "$fn" "$@"
}
expect_eq "sluice --cb-write completes its choices" "auto enable disable" "$(complete_words "$comp/sluice" _sluice sluice --cb-write "")"
expect_eq "sluice --capt completes" "--capture" "$(complete_words "$comp/sluice" _sluice sluice --capt)"
expect_eq "sluice -- completes a program" "true" "$(complete_words "$comp/sluice" _sluice sluice -t x -- tru | tr " " "\n" | grep -x -m1 true)"
expect_eq "sluice-ckpt completes commands" "extract" "$(complete_words "$comp/sluice-ckpt" _sluice_ckpt sluice-ckpt ext)"
expect_eq "sluice-ckpt extract --o" "--output" "$(complete_words "$comp/sluice-ckpt" _sluice_ckpt sluice-ckpt extract --o)"
expect_eq "sluice-trace summary --t" "--top" "$(complete_words "$comp/sluice-trace" _sluice_trace sluice-trace summary --t)"

# 6. Installed docs: links between them resolve, and no path into the source tree is a link.
for md in "$prefix"/share/doc/sluice/*.md; do
  while read -r target; do
    [ -e "$(dirname "$md")/$target" ] || fail "$(basename "$md") links to $target, which is not installed"
  done < <(grep -oE '\]\([^)#]+' "$md" | sed 's/^](//' | grep -v '://' || true)
done
echo "ok: every link in the installed docs resolves"
echo "install_package: all passed"
