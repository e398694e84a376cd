/* jni/include/classhooks.h - JVMTI class-file hooks for taken-over program launches.
 *
 * org.py4jni.ClassHooks' natives (jni/classhooks.c): an armed ClassFileLoadHook for
 * named classes that hands their class files to ClassHooks.transform, RetransformClasses,
 * and JNI reads that no Java access rule applies to. The JVMTI environment and its
 * capabilities (can_retransform_classes, can_generate_all_class_hook_events) are taken
 * on the first install, in the live phase. Nothing here knows of Python.
 */
#ifndef P4J_CLASSHOOKS_H
#define P4J_CLASSHOOKS_H

#include "client.h"

/* Registers ClassHooks' natives in this process's JVM (idempotent; any thread). Fails
 * with JVMTI's reason when the JVM grants no JVMTI environment or capability. */
p4j_status p4j_classhooks_install(p4j_error *err);

#endif /* P4J_CLASSHOOKS_H */
