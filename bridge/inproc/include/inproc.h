/* bridge/inproc/include/inproc.h - the in-process transport's constructor: py4j's command set
 * through JNI (bridge/inproc/inproc.c). The binding reaches the rest through the client's ops. */
#ifndef P4J_INPROC_H
#define P4J_INPROC_H

#include <stdint.h>

#include "client.h"
#include "jvm.h"

/* Starts (or joins) the process's JVM with `opts` and returns a new in-process client.
 * Several clients may share the one JVM; each can be shut down on its own. */
p4j_status p4j_inproc_client_new(const p4j_jvm_options *opts, p4j_client **out,
                                 p4j_error *err);

/* Makes `c` a client whose calls run for `context` (an org.py4jni.CallContext; NULL:
 * none): the Java thread of each call through `c` enters it (CallContext.restore, only
 * when the thread's last context was another), so its context class loader is the
 * context's and name lookups through `c` resolve in it. May be called again, from any
 * thread; calls already running keep the context they entered. */
p4j_status p4j_inproc_set_context(p4j_client *c, jobject context, p4j_error *err);

/* The id of the CallContext the calling thread entered last (0: none). A callback from
 * Java reads it on entry and, when Python's calls moved the thread to another,
 * gives the thread its context back with p4j_inproc_enter_context before returning. */
extern __thread uint64_t p4j_thread_context __attribute__((tls_model("initial-exec")));

/* Makes the CallContext `id` (0: none) the calling thread's (CallContext.restore). */
p4j_status p4j_inproc_enter_context(JNIEnv *env, uint64_t id, p4j_error *err);

#endif /* P4J_INPROC_H */
