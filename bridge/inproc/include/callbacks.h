/* bridge/inproc/include/callbacks.h - Java calls Python: proxies (py4j callbacks) and the
 * dispatch that Python-implemented natives (bridge/inproc/natives.c) share.
 *
 * Nothing here knows of Python. The binding installs hooks (p4j_cb_install); a "target"
 * is the binding's opaque handle on a Python object, counted by retain/release. Java
 * holds targets as longs: every proxy owns one count, given back by a Cleaner when the
 * proxy becomes unreachable (org.py4jni.PythonProxies).
 *
 * A call from Java: the native entry converts the Java arguments into p4j_values (the
 * conversions of results: p4j_object_to_value; Python proxies come back as P4J_PROXY
 * carrying their target), calls hooks.invoke on the calling thread, and turns the
 * outcome into the Java result or a thrown exception:
 *  - P4J_OK after p4j_cb_return: that value, converted to the method's return type;
 *  - P4J_OK after p4j_cb_return_default: Java supplies the method (toString, hashCode,
 *    equals, interface default methods);
 *  - P4J_ERROR with a P4J_ERR_JAVA error: its throwable is rethrown as is;
 *  - P4J_ERROR otherwise: py4j.Py4JException(err.message) when py4j's jar is on the
 *    classpath, else org.py4jni.Py4JException(err.message).
 * Arguments left unconsumed by the hook (refs still set) are released by the entry.
 */
#ifndef P4J_CALLBACKS_H
#define P4J_CALLBACKS_H

#include <jni.h>
#include <stdbool.h>
#include <stdint.h>

#include "client.h"

#define P4J_CB_MAX_ARGS 32 /* parameters of a callback method; more is refused */

/* Method flags (mirror org.py4jni.PythonMethod). */
#define P4J_CB_TO_STRING 1u   /* Object.toString                                     */
#define P4J_CB_HASH_CODE 2u   /* Object.hashCode                                     */
#define P4J_CB_EQUALS 4u      /* Object.equals                                       */
#define P4J_CB_HAS_DEFAULT 8u /* Java can supply the method (Object methods, default) */
#define P4J_CB_CALL_TARGET 16u/* a native: the target itself is the callable         */
#define P4J_CB_STATIC 32u     /* a static native: no receiver argument                */

/* One Java method Python implements. Created once per org.py4jni.PythonMethod id and
 * never freed; readable from any thread. */
typedef struct p4j_cb_method {
    int32_t id;              /* dense from 0, unique in the process            */
    const char *name;        /* UTF-8, NUL-terminated                          */
    size_t name_len;
    unsigned flags;          /* P4J_CB_*                                       */
    const char *sig;         /* JNI descriptor, "(ILjava/lang/Object;)Z"        */
    uint8_t nparams;         /* Java parameters (the receiver not counted)     */
    char params[P4J_CB_MAX_ARGS]; /* per parameter: its descriptor's first letter,
                                     but 's' for String and 'j' for byte[] */
    char ret;                /* first descriptor letter of the return type     */
    /* private to bridge/inproc/ */
    char *ret_desc;          /* full return descriptor                         */
    jclass ret_cls;          /* reference returns: the class (global ref)      */
    uint8_t ret_conv[16];    /* reference returns: p4j_conv per argument key   */
    /* object arguments: class seen last per parameter (the receiver of an instance
     * native in the last slot), a cache that spares a class lookup; benign race */
    void *last_cls[P4J_CB_MAX_ARGS + 1];
} p4j_cb_method;

#define P4J_CB_RECEIVER P4J_CB_MAX_ARGS /* last_cls slot of an instance native's receiver */

/* One call in flight (lives on the native entry's stack). */
typedef struct p4j_cb_call p4j_cb_call;

typedef struct p4j_cb_hooks {
    /* Runs method `m` of `target` with `args` (nargs values; for instance natives the
     * receiver comes first). Called on the Java thread making the call, which holds no
     * lock of ours; the hook takes whatever it needs (the GIL). The hook may consume
     * args (taking their refs: set ref.handle NULL). See the contract above. */
    p4j_status (*invoke)(void *target, const p4j_cb_method *m, p4j_value *args,
                         size_t nargs, p4j_cb_call *call, p4j_error *err);
    /* Takes one count of `target` / gives one back. Any thread. */
    void (*retain)(void *target);
    void (*release)(void *target);
} p4j_cb_hooks;

/* Installs the binding's hooks (process-wide; `hooks` must outlive the process). */
void p4j_cb_install(const p4j_cb_hooks *hooks);

/* From now on Java callbacks throw Py4JException and releases are dropped (the
 * interpreter is exiting). Irreversible. Any thread. */
void p4j_cb_disable(void);

/* Sets the result of `call` from `v` (borrowed; may be called with the GIL held),
 * converted to the method's return type: Python's None to a primitive, an int out of
 * range, or a value of the wrong type fail with a P4J_ERR_BRIDGE explanation (the
 * caller adds what the Python value was). Void methods ignore `v`. */
p4j_status p4j_cb_return(p4j_cb_call *call, const p4j_value *v, p4j_error *err);

/* Lets Java supply the method (only for methods flagged P4J_CB_HAS_DEFAULT). */
void p4j_cb_return_default(p4j_cb_call *call);

/* ----------------------------------------------------------------------- proxies */

/* Creates a Java proxy for `target` implementing the interfaces named (binary names,
 * UTF-8). `type_name` names the Python type in messages. On success `out` owns a global
 * ref (its cls cached) and *weak is a new weak reference to it (for reuse: see
 * p4j_cb_weak_get). The proxy takes one count of target (hooks.retain). Any thread;
 * the caller should not hold the GIL (Java runs). */
p4j_status p4j_cb_proxy_new(void *target, const char *const *ifaces, size_t n,
                            const char *type_name, p4j_ref *out, void **weak,
                            p4j_error *err);

/* A new global ref in `out` to the proxy behind `weak`; false when it was collected. */
bool p4j_cb_weak_get(void *weak, p4j_ref *out);

/* Deletes a weak reference made by p4j_cb_proxy_new. Safe for NULL. */
void p4j_cb_weak_delete(void *weak);

/* The target of `ref` when it is a Python proxy, else NULL (cheap: one table read for
 * objects of other classes). `ref` must come from the in-process transport. */
void *p4j_cb_proxy_target(const p4j_ref *ref);

/* Registers `target` as the Python entry point (NULL clears), as seen by Java's
 * org.py4jni.PythonEntryPoint.get(Class[]). clear_only: clear only if it is `target`. */
p4j_status p4j_cb_entry_point_set(void *target, bool clear_only, p4j_error *err);

/* ------------------------------------------------- shared with bridge/inproc/natives.c */

/* Resolves the lazily initialised callback machinery (classes, natives). */
p4j_status p4j_cb_ready(JNIEnv *env, p4j_error *err);

/* The cached method for an org.py4jni.PythonMethod object, NULL with err set. */
const p4j_cb_method *p4j_cb_method_of(JNIEnv *env, jobject pm, p4j_error *err);

/* Converts reference argument `a` (may be NULL) for parameter `slot` of `m` (letter
 * m->params[slot], or the receiver at P4J_CB_RECEIVER) into `out`: String and byte[]
 * parameters directly, other objects by their runtime class (boxes read in place,
 * Python proxies as P4J_PROXY carrying their target, the rest as global refs). */
p4j_status p4j_cb_ref_arg(JNIEnv *env, const p4j_cb_method *m, size_t slot, jobject a,
                          p4j_value *out, p4j_error *err);

/* Releases what is left of converted arguments (refs, owned storage). */
void p4j_cb_release_args(JNIEnv *env, p4j_value *args, size_t n);

/* Runs the hook for a call whose arguments are converted, then releases what the hook
 * left of them. On failure the Java exception is pending when this returns P4J_ERROR.
 * `boxed`: the result is wanted as an object (InvocationHandler) rather than a raw
 * jvalue. `*result` receives the local ref / primitive; *no_method is set when Java
 * should supply the method. */
p4j_status p4j_cb_dispatch(JNIEnv *env, void *target, const p4j_cb_method *m,
                           p4j_value *args, size_t nargs, bool boxed, jvalue *result,
                           bool *no_method);

/* org.py4jni.PythonNatives.describe(cls): PythonMethod[] of the class's native methods
 * (a local ref), or NULL with err set. */
jobjectArray p4j_cb_describe_natives(JNIEnv *env, jclass cls, p4j_error *err);

/* Gives one count of `target` back (hooks.release), unless callbacks are disabled.
 * Any thread. */
void p4j_cb_target_release(void *target);

/* Throws (pending in `env`) py4j.Py4JException (when loadable, else
 * org.py4jni.Py4JException) with `msg` (UTF-8). */
void p4j_cb_throw(JNIEnv *env, const char *msg);

#endif /* P4J_CALLBACKS_H */
