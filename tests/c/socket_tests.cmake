# tests/c/socket_tests.cmake - CMocka tests of the py4j wire codec and socket client.
# Included from tests/CMakeLists.txt; needs the p4j_socket target (bridge/socket/).
#   test_wire           codec only, no server
#   test_socket_client  against a real py4j GatewayServer started by the test
#                       (skipped when P4J_PY4J_JAR is empty)
#   test_pinned         pinned-thread mode (py4j's ClientServer) against a fake peer
#   test_socket_tls     TLS (OpenSSL) against a fake TLS peer, certificates made at run time
#   test_socket_no_openssl  TLS asked in a process with no OpenSSL loaded: a clear error
#   test_socket_tls_dlopen  TLS on an OpenSSL the process dlopens after start (as Python's
#                       ssl module), any 1.1.1 or 3.x (P4J_TEST_LIBSSL, see the file)

find_package(PkgConfig REQUIRED)
pkg_check_modules(P4J_CMOCKA REQUIRED IMPORTED_TARGET cmocka)
pkg_check_modules(P4J_TEST_OPENSSL REQUIRED IMPORTED_TARGET openssl) # test_socket_tls's peer

# Default jar: the one shipped in the active Python's py4j wheel (share/py4j/).
if(NOT DEFINED CACHE{P4J_PY4J_JAR})
  set(_p4j_default_jar "")
  if(NOT Python_EXECUTABLE)
    find_package(Python COMPONENTS Interpreter QUIET)
  endif()
  if(Python_EXECUTABLE)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c
        "import sys\ntry:\n from py4j.java_gateway import find_jar_path; print(find_jar_path())\nexcept Exception:\n print('')\nprint(sys.prefix)"
      OUTPUT_VARIABLE _p4j_py_out OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REPLACE "\n" ";" _p4j_py_lines "${_p4j_py_out}")
    list(GET _p4j_py_lines 0 _p4j_found)
    list(GET _p4j_py_lines -1 _p4j_prefix)
    if(_p4j_found AND EXISTS "${_p4j_found}")
      get_filename_component(_p4j_default_jar "${_p4j_found}" ABSOLUTE)
    else()
      file(GLOB _p4j_jars "${_p4j_prefix}/share/py4j/py4j*.jar")
      if(_p4j_jars)
        list(GET _p4j_jars 0 _p4j_default_jar)
      endif()
    endif()
  endif()
  set(P4J_PY4J_JAR "${_p4j_default_jar}" CACHE FILEPATH
      "py4j jar for the socket-client tests (empty: those tests are skipped)")
endif()

# The JVM that runs the py4j server: the JDK the root found, else `java` on PATH.
set(_p4j_java "java")
if(Java_JAVA_EXECUTABLE)
  set(_p4j_java "${Java_JAVA_EXECUTABLE}")
endif()

add_executable(test_wire "${CMAKE_CURRENT_LIST_DIR}/test_wire.c")
target_link_libraries(test_wire PRIVATE p4j_socket PkgConfig::P4J_CMOCKA m)
target_include_directories(test_wire PRIVATE "${CMAKE_SOURCE_DIR}/bridge/socket")

add_executable(test_socket_client "${CMAKE_CURRENT_LIST_DIR}/test_socket_client.c")
target_link_libraries(test_socket_client PRIVATE p4j_socket PkgConfig::P4J_CMOCKA m)
target_include_directories(test_socket_client PRIVATE "${CMAKE_SOURCE_DIR}/bridge/socket")

add_executable(test_pinned "${CMAKE_CURRENT_LIST_DIR}/test_pinned.c")
target_link_libraries(test_pinned PRIVATE p4j_socket PkgConfig::P4J_CMOCKA pthread)
target_include_directories(test_pinned PRIVATE "${CMAKE_SOURCE_DIR}/bridge/socket")

add_executable(test_socket_tls "${CMAKE_CURRENT_LIST_DIR}/test_socket_tls.c")
# The test links OpenSSL itself (its fake peer, its certificates); the transport finds
# that libssl at run time, as it finds Python's in the extension.
target_link_libraries(test_socket_tls PRIVATE p4j_socket PkgConfig::P4J_CMOCKA pthread
                      PkgConfig::P4J_TEST_OPENSSL)
target_include_directories(test_socket_tls PRIVATE "${CMAKE_SOURCE_DIR}/bridge/socket")

# Links no OpenSSL, on purpose (the transport must say none is loaded).
add_executable(test_socket_no_openssl "${CMAKE_CURRENT_LIST_DIR}/test_socket_no_openssl.c")
target_link_libraries(test_socket_no_openssl PRIVATE p4j_socket PkgConfig::P4J_CMOCKA)
target_include_directories(test_socket_no_openssl PRIVATE "${CMAKE_SOURCE_DIR}/bridge/socket")

# Links no OpenSSL either: it opens one with dlopen, as Python does.
add_executable(test_socket_tls_dlopen "${CMAKE_CURRENT_LIST_DIR}/test_socket_tls_dlopen.c")
target_link_libraries(test_socket_tls_dlopen PRIVATE p4j_socket PkgConfig::P4J_CMOCKA pthread
                      ${CMAKE_DL_LIBS})
target_include_directories(test_socket_tls_dlopen PRIVATE "${CMAKE_SOURCE_DIR}/bridge/socket")

add_test(NAME socket_wire COMMAND test_wire)
add_test(NAME socket_tls_dlopen COMMAND test_socket_tls_dlopen)
set_tests_properties(socket_tls_dlopen PROPERTIES TIMEOUT 120)
add_test(NAME socket_no_openssl COMMAND test_socket_no_openssl)
add_test(NAME socket_tls COMMAND test_socket_tls)
set_tests_properties(socket_tls PROPERTIES TIMEOUT 120)
add_test(NAME socket_pinned COMMAND test_pinned)
set_tests_properties(socket_pinned PROPERTIES TIMEOUT 120)
add_test(NAME socket_client COMMAND test_socket_client)
set_tests_properties(socket_client PROPERTIES
  ENVIRONMENT "P4J_PY4J_JAR=${P4J_PY4J_JAR};P4J_JAVA=${_p4j_java}"
  TIMEOUT 300)
