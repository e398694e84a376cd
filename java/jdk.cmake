# java/jdk.cmake: finds the JDK the build needs: javac, jar and jni.h (libjvm is
# dlopen'ed at run time), plus java for the tests. Included by the root CMakeLists.txt
# and by perf/CMakeLists.txt when built on its own. Sets Java_JAVAC_EXECUTABLE,
# Java_JAR_EXECUTABLE, Java_JAVA_EXECUTABLE, Java_VERSION, _p4j_jdk_home, P4J_JNI_INCLUDE
# and P4J_JNI_INCLUDES, or stops with a FATAL_ERROR naming what is missing and how to fix it.
# Found in this order: -DJava_JAVAC_EXECUTABLE=<jdk>/bin/javac, else $JAVA_HOME (which
# must then be a JDK: a JRE there is an error, never a quiet switch to another javac),
# else the javac on PATH. jar, java and jni.h come from the same JDK. FindJava is not
# used: its Development component also demands javadoc, which the build never runs.
set(_p4j_how "Point CMake at a JDK (11 or later) with JAVA_HOME=<jdk> or -DJava_JAVAC_EXECUTABLE=<jdk>/bin/javac; on Debian: apt-get install openjdk-17-jdk-headless")
if(NOT Java_JAVAC_EXECUTABLE)
  if(NOT "$ENV{JAVA_HOME}" STREQUAL "")
    if(NOT EXISTS "$ENV{JAVA_HOME}/bin/javac")
      message(FATAL_ERROR "JAVA_HOME=$ENV{JAVA_HOME} is not a JDK: it has no bin/javac "
                          "(a JRE?). ${_p4j_how}.")
    endif()
    set(Java_JAVAC_EXECUTABLE "$ENV{JAVA_HOME}/bin/javac" CACHE FILEPATH "javac of the JDK")
  else()
    find_program(Java_JAVAC_EXECUTABLE javac)
  endif()
endif()
if(NOT Java_JAVAC_EXECUTABLE)
  message(FATAL_ERROR "No JDK found: no javac on PATH and JAVA_HOME is not set. ${_p4j_how}.")
endif()
get_filename_component(_p4j_javac_dir "${Java_JAVAC_EXECUTABLE}" REALPATH)
get_filename_component(_p4j_jdk_home "${_p4j_javac_dir}" DIRECTORY)
get_filename_component(_p4j_jdk_home "${_p4j_jdk_home}" DIRECTORY)
find_program(Java_JAR_EXECUTABLE jar HINTS "${_p4j_jdk_home}/bin" NO_DEFAULT_PATH)
find_program(Java_JAVA_EXECUTABLE java HINTS "${_p4j_jdk_home}/bin" NO_DEFAULT_PATH)
find_path(P4J_JNI_INCLUDE jni.h HINTS "${_p4j_jdk_home}/include" NO_DEFAULT_PATH)
set(_p4j_missing "")
foreach(_what Java_JAR_EXECUTABLE:bin/jar Java_JAVA_EXECUTABLE:bin/java P4J_JNI_INCLUDE:include/jni.h)
  string(REPLACE ":" ";" _what "${_what}")
  list(GET _what 0 _var)
  list(GET _what 1 _file)
  if(NOT ${_var})
    list(APPEND _p4j_missing "${_file}")
  endif()
endforeach()
if(_p4j_missing)
  string(REPLACE ";" ", " _p4j_missing "${_p4j_missing}")
  message(FATAL_ERROR "The JDK of ${Java_JAVAC_EXECUTABLE} (${_p4j_jdk_home}) lacks "
                      "${_p4j_missing}. ${_p4j_how}.")
endif()
execute_process(COMMAND "${Java_JAVAC_EXECUTABLE}" -version OUTPUT_VARIABLE _p4j_javac_out
                ERROR_VARIABLE _p4j_javac_out RESULT_VARIABLE _p4j_javac_rc)
string(REGEX MATCH "[0-9]+(\\.[0-9]+)*" Java_VERSION "${_p4j_javac_out}")
if(NOT _p4j_javac_rc EQUAL 0 OR Java_VERSION VERSION_LESS 11)
  message(FATAL_ERROR "${Java_JAVAC_EXECUTABLE} -version gave '${_p4j_javac_out}': "
                      "a JDK 11 or later is needed. ${_p4j_how}.")
endif()
message(STATUS "JDK ${Java_VERSION}: ${_p4j_jdk_home}")
set(P4J_JNI_INCLUDES "${P4J_JNI_INCLUDE}" "${P4J_JNI_INCLUDE}/linux")
