# Aeron, the pinned dependency of the bypass media driver (driver/aeron).
#
# libspinlane_aeron.so is compiled against one Aeron release's private driver headers and
# refuses any other at load, so the build pins that release and builds it: Aeron 1.52.2 at
# commit 5b62f21d917af027cdf5a3241aa5f355149b04fa of github.com/aeron-io/aeron. Its source is
#   - SPINLANE_AERON_SOURCE (cache or environment variable): a `git archive` tarball, whose
#     embedded commit id (git get-tar-commit-id) must be the pinned commit, or a source
#     tree, whose version.txt must be the pinned version; or else
#   - fetched by FetchContent from SPINLANE_AERON_REPOSITORY at the pinned commit.
# Only its C targets are built (aeron, aeron_driver, aeronmd, and the samples and tools
# the tests use), once per machine: into SPINLANE_AERON_CACHE_DIR under a key of the commit
# and the host compiler, under a file lock, at configure time, so that every build tree
# (plain, Release, ASan, clang fuzz) shares one Release build made by the host's compiler.
# The result is the source and build tree pair that SPINLANE_AERON_DIR and
# SPINLANE_AERON_BUILD_DIR name for a tree the user built; driver/aeron checks its version.
#
# Sets SPINLANE_AERON_DIR / SPINLANE_AERON_BUILD_DIR (unless the user gave them) and
# SPINLANE_AERON_PINNED (ON when this file built them), or SPINLANE_AERON_OFF_WHY.

option(SPINLANE_AERON "Build the Aeron adapter (libspinlane_aeron.so) and the pinned Aeron it runs in" ON)
set(SPINLANE_AERON_VERSION 1.52.2)
set(SPINLANE_AERON_COMMIT 5b62f21d917af027cdf5a3241aa5f355149b04fa)
set(SPINLANE_AERON_REPOSITORY "https://github.com/aeron-io/aeron.git" CACHE STRING
    "Where FetchContent gets Aeron when SPINLANE_AERON_SOURCE is not set (checked out at the pinned commit)")
set(SPINLANE_AERON_SOURCE "$ENV{SPINLANE_AERON_SOURCE}" CACHE PATH
    "Aeron ${SPINLANE_AERON_VERSION} source without network: a git-archive tarball of commit ${SPINLANE_AERON_COMMIT}, or a source tree")
if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(aeron_cache_default "$ENV{XDG_CACHE_HOME}/spinlane")
elseif(DEFINED ENV{HOME} AND NOT "$ENV{HOME}" STREQUAL "")
  set(aeron_cache_default "$ENV{HOME}/.cache/spinlane")
else()
  set(aeron_cache_default "${PROJECT_BINARY_DIR}/aeron-cache")
endif()
set(SPINLANE_AERON_CACHE_DIR "${aeron_cache_default}" CACHE PATH
    "Where the pinned Aeron is built once and shared by every build tree of this machine")
set(SPINLANE_AERON_PINNED OFF)
set(SPINLANE_AERON_OFF_WHY "")

# aeron_fail(<what>): stop the configure with the pin beside what was found
function(aeron_fail what)
  message(FATAL_ERROR "Aeron: ${what}; spinlane pins Aeron ${SPINLANE_AERON_VERSION} (commit ${SPINLANE_AERON_COMMIT}). "
          "Give its source with -DSPINLANE_AERON_SOURCE=<tarball or tree>, or -DSPINLANE_AERON=OFF to build without the bypass driver.")
endfunction()

# aeron_run(<what> COMMAND…): execute_process that stops the configure on failure, with
# the log's tail (the whole log stays in <cache>/<key>.log)
function(aeron_run what log)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_FILE ${log}.out ERROR_FILE ${log}.err)
  file(READ ${log}.out out)
  file(READ ${log}.err err)
  file(APPEND ${log} "$ ${ARGN}\n${out}${err}")
  file(REMOVE ${log}.out ${log}.err)
  if(NOT rc EQUAL 0)
    string(LENGTH "${err}" n)
    if(n GREATER 4000)
      math(EXPR from "${n} - 4000")
      string(SUBSTRING "${err}" ${from} 4000 err)
    endif()
    message(FATAL_ERROR "Aeron: ${what} failed (${rc}); log: ${log}\n${err}")
  endif()
endfunction()

# aeron_check_source(<path>): the tarball's commit or the tree's version against the pin
function(aeron_check_source src)
  if(IS_DIRECTORY "${src}")
    if(NOT EXISTS "${src}/version.txt")
      aeron_fail("SPINLANE_AERON_SOURCE=${src} is not an Aeron source tree (no version.txt)")
    endif()
    file(STRINGS "${src}/version.txt" v LIMIT_COUNT 1)
    string(STRIP "${v}" v)
    if(NOT v STREQUAL SPINLANE_AERON_VERSION)
      aeron_fail("SPINLANE_AERON_SOURCE=${src} is Aeron ${v} (its version.txt), not ${SPINLANE_AERON_VERSION}")
    endif()
  elseif(EXISTS "${src}")
    find_program(SPINLANE_GIT git)
    find_program(SPINLANE_GZIP gzip)
    if(NOT SPINLANE_GIT OR NOT SPINLANE_GZIP)
      aeron_fail("git and gzip are needed to read the commit id of SPINLANE_AERON_SOURCE=${src}")
    endif()
    execute_process(COMMAND ${SPINLANE_GZIP} -dc "${src}" COMMAND ${SPINLANE_GIT} get-tar-commit-id
                    OUTPUT_VARIABLE id OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
    if(id STREQUAL "")
      aeron_fail("SPINLANE_AERON_SOURCE=${src} carries no commit id (not a gzip'd `git archive` tarball of Aeron)")
    elseif(NOT id STREQUAL SPINLANE_AERON_COMMIT)
      aeron_fail("SPINLANE_AERON_SOURCE=${src} is a tarball of commit ${id}, not ${SPINLANE_AERON_COMMIT}")
    endif()
  else()
    aeron_fail("SPINLANE_AERON_SOURCE=${src} does not exist")
  endif()
endfunction()

if(NOT SPINLANE_AERON)
  set(SPINLANE_AERON_OFF_WHY "turned off (-DSPINLANE_AERON=OFF)")
  message(STATUS "Aeron: OFF (-DSPINLANE_AERON=OFF): no libspinlane_aeron.so, no bypass media driver, its tests not built")
  return()
endif()
if(SPINLANE_AERON_DIR)
  message(STATUS "Aeron: the tree you built (SPINLANE_AERON_DIR=${SPINLANE_AERON_DIR}, SPINLANE_AERON_BUILD_DIR=${SPINLANE_AERON_BUILD_DIR})")
  return()
endif()
if(NOT DPDK_FOUND)
  set(SPINLANE_AERON_OFF_WHY "libdpdk not found (the bypass needs the DPDK transport)")
  message(STATUS "Aeron: not built: ${SPINLANE_AERON_OFF_WHY}")
  return()
endif()

if(CMAKE_VERSION VERSION_LESS 3.30)
  aeron_fail("its build needs CMake >= 3.30 and this is CMake ${CMAKE_VERSION} (Debian 12: apt-get install -t bookworm-backports cmake; scripts/install-deps.sh does)")
endif()

# The host's compiler builds Aeron (never CC from the environment: the fuzz build runs
# with CC=clang and must share the gcc build), in Release.
find_program(SPINLANE_AERON_CC NAMES cc gcc clang)
find_program(SPINLANE_AERON_CXX NAMES c++ g++ clang++)
if(NOT SPINLANE_AERON_CC OR NOT SPINLANE_AERON_CXX)
  aeron_fail("no host C and C++ compiler (cc, c++) to build it with")
endif()
execute_process(COMMAND ${SPINLANE_AERON_CC} --version OUTPUT_VARIABLE cc_version ERROR_QUIET)
string(REGEX REPLACE "\n.*" "" cc_version "${cc_version}")
string(SHA256 cc_hash "${SPINLANE_AERON_CC};${cc_version};${CMAKE_HOST_SYSTEM_PROCESSOR}") # gcc says the same on arm64
string(SUBSTRING "${cc_hash}" 0 10 cc_hash)
string(SUBSTRING "${SPINLANE_AERON_COMMIT}" 0 12 commit12)
set(key "aeron-${SPINLANE_AERON_VERSION}-${commit12}-cc${cc_hash}")
if(SPINLANE_AERON_SOURCE AND IS_DIRECTORY "${SPINLANE_AERON_SOURCE}")
  # a tree is built where it is, into a build dir of its own (keyed by its path)
  get_filename_component(tree "${SPINLANE_AERON_SOURCE}" ABSOLUTE)
  string(SHA256 tree_hash "${tree}")
  string(SUBSTRING "${tree_hash}" 0 10 tree_hash)
  set(key "${key}-tree${tree_hash}")
endif()
set(dir "${SPINLANE_AERON_CACHE_DIR}/${key}")
set(log "${dir}.log")
set(stamp "${dir}/complete")
set(aeron_targets aeron aeron_driver aeronmd cping cpong basic_publisher basic_subscriber AeronStat ErrorStat)

file(MAKE_DIRECTORY "${SPINLANE_AERON_CACHE_DIR}")
file(LOCK "${dir}.lock" GUARD FILE TIMEOUT 3600 RESULT_VARIABLE lock_rc)
if(NOT lock_rc EQUAL 0)
  aeron_fail("cannot lock ${dir}.lock: ${lock_rc}")
endif()
if(EXISTS "${stamp}" AND EXISTS "${dir}/build/lib/libaeron_driver.so" AND EXISTS "${dir}/build/binaries/aeronmd")
  file(READ "${stamp}" src_tree)
  string(STRIP "${src_tree}" src_tree)
  message(STATUS "Aeron ${SPINLANE_AERON_VERSION}: built before, reused (${dir})")
else()
  file(REMOVE_RECURSE "${dir}")
  file(REMOVE "${log}")
  set(src_tree "${dir}/src")
  if(SPINLANE_AERON_SOURCE)
    aeron_check_source("${SPINLANE_AERON_SOURCE}")
    if(IS_DIRECTORY "${SPINLANE_AERON_SOURCE}")
      set(src_tree "${tree}")
      message(STATUS "Aeron ${SPINLANE_AERON_VERSION}: building once from the tree ${tree} into ${dir}")
    else()
      message(STATUS "Aeron ${SPINLANE_AERON_VERSION}: building once from ${SPINLANE_AERON_SOURCE} (commit ${SPINLANE_AERON_COMMIT}) into ${dir}")
      file(ARCHIVE_EXTRACT INPUT "${SPINLANE_AERON_SOURCE}" DESTINATION "${dir}/unpack")
      file(GLOB top LIST_DIRECTORIES true "${dir}/unpack/*")
      list(LENGTH top ntop)
      if(NOT ntop EQUAL 1 OR NOT IS_DIRECTORY "${top}")
        aeron_fail("SPINLANE_AERON_SOURCE=${SPINLANE_AERON_SOURCE} does not hold one top folder")
      endif()
      file(RENAME "${top}" "${src_tree}")
      file(REMOVE_RECURSE "${dir}/unpack")
    endif()
  else()
    message(STATUS "Aeron ${SPINLANE_AERON_VERSION}: fetching ${SPINLANE_AERON_REPOSITORY} at ${SPINLANE_AERON_COMMIT}, building once into ${dir}")
    include(FetchContent)
    FetchContent_Populate(spinlane_aeron_src QUIET
                          GIT_REPOSITORY "${SPINLANE_AERON_REPOSITORY}"
                          GIT_TAG "${SPINLANE_AERON_COMMIT}"
                          GIT_SHALLOW FALSE
                          GIT_SUBMODULES ""
                          SOURCE_DIR "${src_tree}"
                          SUBBUILD_DIR "${dir}/fetch"
                          BINARY_DIR "${dir}/fetch-unused")
    find_program(SPINLANE_GIT git)
    execute_process(COMMAND ${SPINLANE_GIT} -C "${src_tree}" rev-parse HEAD
                    OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT head STREQUAL SPINLANE_AERON_COMMIT)
      aeron_fail("the fetched tree is at ${head}")
    endif()
    aeron_check_source("${src_tree}")
  endif()
  include(ProcessorCount)
  ProcessorCount(ncpu)
  if(ncpu EQUAL 0)
    set(ncpu 2)
  endif()
  # C targets only; no Java (archive API), no tests, no docs, no install rules of its own.
  # $ORIGIN/../lib: the build tree's binaries/ beside lib/, as the installed bin/ and lib/.
  aeron_run("configuring Aeron" "${log}"
            ${CMAKE_COMMAND} -E env --unset=CC --unset=CXX --unset=CFLAGS --unset=CXXFLAGS --unset=LDFLAGS
            ${CMAKE_COMMAND} -S "${src_tree}" -B "${dir}/build" -G "Unix Makefiles"
            -DCMAKE_BUILD_TYPE=Release
            -DCMAKE_C_COMPILER=${SPINLANE_AERON_CC} -DCMAKE_CXX_COMPILER=${SPINLANE_AERON_CXX}
            -DBUILD_AERON_DRIVER=ON -DBUILD_AERON_ARCHIVE_API=OFF
            -DAERON_TESTS=OFF -DAERON_UNIT_TESTS=OFF -DAERON_SYSTEM_TESTS=OFF
            -DAERON_BUILD_SAMPLES=ON -DAERON_BUILD_DOCUMENTATION=OFF -DAERON_INSTALL_TARGETS=OFF
            "-DCMAKE_BUILD_RPATH=\$ORIGIN/../lib" -DCMAKE_SKIP_BUILD_RPATH=OFF)
  string(TIMESTAMP t0 "%s")
  aeron_run("building Aeron" "${log}"
            ${CMAKE_COMMAND} --build "${dir}/build" -j${ncpu} --target ${aeron_targets})
  string(TIMESTAMP t1 "%s")
  math(EXPR secs "${t1} - ${t0}")
  file(WRITE "${stamp}" "${src_tree}\n")
  message(STATUS "Aeron ${SPINLANE_AERON_VERSION}: built in ${secs} s (-j${ncpu}); log ${log}")
endif()
file(LOCK "${dir}.lock" RELEASE)

set(SPINLANE_AERON_DIR "${src_tree}")
set(SPINLANE_AERON_BUILD_DIR "${dir}/build")
set(SPINLANE_AERON_PINNED ON)
