/* bridge/inproc/include/natives.h - Java `native` methods implemented by Python callables.
 *
 * Each method gets a libffi closure built for its exact JNI signature and is bound
 * with RegisterNatives: Java calls it like any native method (no boxing, no
 * reflection, no Proxy). The closure converts the raw JNI arguments into p4j_values
 * (primitives directly, String/byte[] by their parameter type, other objects by their
 * runtime class) and runs the callback hooks of bridge/inproc/include/callbacks.h with a
 * method flagged P4J_CB_CALL_TARGET (the target is the callable). Nothing here knows of Python.
 */
#ifndef P4J_NATIVES_H
#define P4J_NATIVES_H

#include "callbacks.h"

/* The native methods a class declares (not inherited), sorted by name then signature.
 * Entries are process-lifetime p4j_cb_methods: name, sig, nparams, flags
 * (P4J_CB_STATIC for static ones). */
typedef struct p4j_native_list {
    size_t n;
    const p4j_cb_method **methods;
} p4j_native_list;

/* Lists the native methods of class `cls` (a CLASS ref). Fails with P4J_ERR_BRIDGE
 * when it declares none. Free the list with p4j_natives_list_free. Any thread. */
p4j_status p4j_natives_describe(const p4j_ref *cls, p4j_native_list **out, p4j_error *err);

void p4j_natives_list_free(p4j_native_list *list);

/* Binds list->methods[which[i]] to targets[i] for i < n, in one RegisterNatives call.
 * On success each target's count (one, held by the caller) moves to the method's
 * closure; on failure the caller keeps them. A method has one closure for the process;
 * binding it again swaps its target, and the replaced one is released (hooks.release)
 * once no call of that method is in flight. */
p4j_status p4j_natives_bind(const p4j_ref *cls, const p4j_native_list *list,
                            const size_t *which, void *const *targets, size_t n,
                            p4j_error *err);

#endif /* P4J_NATIVES_H */
