# SPDX-License-Identifier: MIT
# Installs the Markdown docs (run by `cmake --install`, with SLUICE_DOC_FILES and SLUICE_DOC_DEST).
# The installed copies must make sense without the source tree: links to docs/X.md become X.md
# (they sit side by side), a link to anything else that is not installed loses its target but
# keeps its text, and each page says once that runtime/..., tests/... name files of the sources.
set(_note "> Installed copy: paths such as `runtime/...`, `tests/...` or `bench/...` name files of the sluice\n> source tree, which is not installed; the variables are also in `man 7 sluice`.\n")
file(MAKE_DIRECTORY "${SLUICE_DOC_DEST}")
foreach(src IN LISTS SLUICE_DOC_FILES)
  get_filename_component(name "${src}" NAME)
  file(READ "${src}" text)
  string(REGEX REPLACE "\\]\\(docs/" "](" text "${text}")
  string(REGEX REPLACE "\\[docs/" "[" text "${text}")
  string(REGEX REPLACE "\\[([^]]*)\\]\\(\\.\\./[^)]*\\)" "\\1" text "${text}")
  string(REGEX REPLACE "\\[([^]]*)\\]\\((runtime|tests|tools|shim|bench|scripts|cmake|contrib)/[^)]*\\)" "\\1" text "${text}")
  if(text MATCHES "`(runtime|tests|tools|shim|bench|scripts|cmake|contrib)/")
    # After the page's title line.
    string(FIND "${text}" "\n" eol)
    math(EXPR eol "${eol} + 1")
    string(SUBSTRING "${text}" 0 ${eol} title)
    string(SUBSTRING "${text}" ${eol} -1 rest)
    set(text "${title}\n${_note}${rest}")
  endif()
  message(STATUS "Installing: ${SLUICE_DOC_DEST}/${name}")
  file(WRITE "${SLUICE_DOC_DEST}/${name}" "${text}")
endforeach()
