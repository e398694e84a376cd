/* jni/inproc.h - the in-process transport: py4j's command set through JNI. */
#ifndef P4J_INPROC_H
#define P4J_INPROC_H

#include "client.h"
#include "jvm.h"

/* Starts (or joins) the process's JVM with `opts` and returns a new in-process client.
 * Several clients may share the one JVM; each can be shut down on its own. */
p4j_status p4j_inproc_client_new(const p4j_jvm_options *opts, p4j_client **out,
                                 p4j_error *err);

/* Returns true when `c` is an in-process client. */
bool p4j_client_is_inproc(const p4j_client *c);

#endif /* P4J_INPROC_H */
