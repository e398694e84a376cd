/* jni/include/inproc.h - the in-process transport's constructor: py4j's command set
 * through JNI (jni/inproc.c). The binding reaches the rest through the client's ops. */
#ifndef P4J_INPROC_H
#define P4J_INPROC_H

#include "client.h"
#include "jvm.h"

/* Starts (or joins) the process's JVM with `opts` and returns a new in-process client.
 * Several clients may share the one JVM; each can be shut down on its own. */
p4j_status p4j_inproc_client_new(const p4j_jvm_options *opts, p4j_client **out,
                                 p4j_error *err);

#endif /* P4J_INPROC_H */
