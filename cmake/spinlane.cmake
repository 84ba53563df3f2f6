# Helpers shared by every folder's CMakeLists.txt.

# Tests mirror the tree: tests/<room>/ tests the room <room>/ and its test binaries link
# only that room's library (which brings what the room may use, docs/architecture.md),
# the test support (spintest) and outside libraries. A folder's CMakeLists.txt names its
# room's libraries with spinlane_test_room(lib...); a test there that links another of
# spinlane's libraries (spin*) fails to configure.
macro(spinlane_test_room)
  set(SPINLANE_TEST_ROOM ${ARGN})
endmacro()
function(spinlane_check_room name)
  if(NOT DEFINED SPINLANE_TEST_ROOM)
    return()
  endif()
  foreach(lib ${ARGN})
    if(lib MATCHES "^spin" AND NOT lib MATCHES "^spintest" AND NOT lib IN_LIST SPINLANE_TEST_ROOM)
      file(RELATIVE_PATH here ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
      message(FATAL_ERROR "${here}: ${name} links ${lib}: tests here may link only ${SPINLANE_TEST_ROOM} (the room they test; tests mirror the tree, docs/architecture.md)")
    endif()
  endforeach()
endfunction()

# spinlane_test(NAME SOURCES src... LIBS lib... [LABELS l...] [ARGS a...])
# One test binary per module; exit 77 means "skipped, with a printed reason".
function(spinlane_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  spinlane_check_room(${name} ${T_LIBS})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE spintest ${T_LIBS})
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
                       LABELS "${T_LABELS}"
                       ENVIRONMENT "SPINLANE_SOURCE_DIR=${PROJECT_SOURCE_DIR};SPINLANE_BINARY_DIR=${PROJECT_BINARY_DIR}")
endfunction()

# spinlane_fuzz(NAME SOURCES src... LIBS lib... CORPUS dir)
# A libFuzzer target (clang, SPINLANE_FUZZ=ON) run for a few seconds under ctest; with gcc
# the same target links a replay-and-mutate driver so it still runs under the sanitizers.
function(spinlane_fuzz name)
  cmake_parse_arguments(F "" "CORPUS" "SOURCES;LIBS" ${ARGN})
  spinlane_check_room(${name} ${F_LIBS})
  add_executable(${name} ${F_SOURCES})
  target_link_libraries(${name} PRIVATE spintest ${F_LIBS})
  if(SPINLANE_FUZZ)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    set(work ${CMAKE_CURRENT_BINARY_DIR}/${name}-corpus)
    add_test(NAME ${name}
             COMMAND sh -c "mkdir -p '${work}' && exec '$<TARGET_FILE:${name}>' -max_total_time=$\{SPINLANE_FUZZ_SECONDS:-10\} -max_len=4096 -timeout=5 '${work}' '${F_CORPUS}'")
  else()
    target_sources(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support/fuzz-main.c)
    add_test(NAME ${name} COMMAND ${name} ${F_CORPUS})
  endif()
  set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT 300)
endfunction()

# spinlane_memcheck(NAME COMMAND cmd args...)
# Runs a command under valgrind memcheck (no leaks, no errors) in a build without the
# sanitizers (valgrind cannot run ASan binaries); label "memcheck". In a sanitized build
# the same test is not registered: ASan/LSan cover it there.
# glibc's stack cache is off under memcheck (stack_cache_size=0): a joined thread's stack
# and its TLS block (DTV) are freed at once, not kept for a later thread. Kept, a gRPC
# thread still tearing down at exit could run on the cached stack of one of ours, and its
# DTV, allocated for our thread, came out "possibly lost" (once in about six runs of
# memcheck-cluster) under a stack no suppression may cover.
find_program(SPINLANE_VALGRIND valgrind)
find_program(SPINLANE_ENV env)
set(SPINLANE_MEMCHECK_CMD ${SPINLANE_ENV} GLIBC_TUNABLES=glibc.pthread.stack_cache_size=0
    ${SPINLANE_VALGRIND} --tool=memcheck --leak-check=full
    --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible
    --error-exitcode=99 --track-fds=no --quiet)
function(spinlane_memcheck name)
  cmake_parse_arguments(M "" "" "COMMAND" ${ARGN})
  if(SPINLANE_SANITIZE OR NOT SPINLANE_VALGRIND)
    return()
  endif()
  add_test(NAME ${name} COMMAND ${SPINLANE_MEMCHECK_CMD} ${M_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS memcheck TIMEOUT 600 SKIP_RETURN_CODE 77
                       ENVIRONMENT "SPINLANE_SOURCE_DIR=${PROJECT_SOURCE_DIR};SPINLANE_BINARY_DIR=${PROJECT_BINARY_DIR}")
endfunction()

# spinlane_check_pure(lib...): a pure room (parsers, formatting: no I/O engine) links only
# pure rooms: spincommon, spinproto and the other *_proto (protobuf-c messages), spinaddr and the *_pure
# libraries, and nothing that brings the gRPC engine, libcurl or libmicrohttpd. Walks each
# library's whole link closure at configure time (call it once every target is defined)
# and fails naming the chain (docs/architecture.md).
function(spinlane_check_pure)
  foreach(top ${ARGN})
    if(NOT TARGET ${top})
      continue()
    endif()
    set(todo ${top})
    set(seen "")
    set(via_${top} ${top})
    while(todo)
      list(POP_FRONT todo t)
      if(t IN_LIST seen)
        continue()
      endif()
      list(APPEND seen ${t})
      get_target_property(deps ${t} INTERFACE_LINK_LIBRARIES)
      if(NOT deps)
        continue()
      endif()
      foreach(d ${deps})
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" d "${d}")
        set(chain "${via_${t}} -> ${d}")
        if(d MATCHES "grpc|GRPC|curl|CURL|microhttpd|MHD"
           OR (d MATCHES "^spin" AND NOT d MATCHES "^(spincommon|spinproto|spin[a-z]*_proto|spinaddr|spin[a-z]*_pure)$"))
          message(FATAL_ERROR "${top} is a pure room but links ${d} (${chain}): it may link only spincommon, spinproto and *_proto, spinaddr and *_pure libraries (docs/architecture.md)")
        endif()
        if(TARGET ${d})
          get_target_property(imported ${d} IMPORTED)
          if(NOT imported)
            set(via_${d} "${chain}")
            list(APPEND todo ${d})
          endif()
        endif()
      endforeach()
    endwhile()
  endforeach()
endfunction()
