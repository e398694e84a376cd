# bridge/socket.cmake - the py4j socket transport: wire codec + socket client.
# Included from the root CMakeLists.txt right after `add_library(p4j_bridge ...)`.
# No JNI and no Python here; only POSIX sockets and pthreads.

target_sources(p4j_bridge PRIVATE
  "${CMAKE_CURRENT_LIST_DIR}/wire.c"
  "${CMAKE_CURRENT_LIST_DIR}/socket_client.c")
find_package(Threads REQUIRED)
target_link_libraries(p4j_bridge PUBLIC Threads::Threads)

# libFuzzer target for the answer decoder. It compiles the codec itself (not the
# library) so that the code under test carries the fuzzer's instrumentation.
# Build with: cmake -DCMAKE_C_COMPILER=clang -DP4J_FUZZ=ON ...; run tests/c/run_fuzz.sh.
option(P4J_FUZZ "Build the libFuzzer target fuzz_wire_decode (clang only)" OFF)
if(P4J_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "P4J_FUZZ=ON needs clang (libFuzzer); set CMAKE_C_COMPILER=clang")
  endif()
  get_filename_component(_p4j_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
  add_executable(fuzz_wire_decode
    "${_p4j_root}/tests/c/fuzz_wire_decode.c"
    "${CMAKE_CURRENT_LIST_DIR}/wire.c"
    "${CMAKE_CURRENT_LIST_DIR}/value.c"
    "${CMAKE_CURRENT_LIST_DIR}/error.c")
  target_include_directories(fuzz_wire_decode PRIVATE "${CMAKE_CURRENT_LIST_DIR}")
  target_compile_options(fuzz_wire_decode PRIVATE -g -O1 -fsanitize=fuzzer,address,undefined
                         -fno-sanitize-recover=undefined)
  target_link_options(fuzz_wire_decode PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_wire_decode PRIVATE Threads::Threads m)
endif()
