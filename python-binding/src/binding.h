/* python-binding/src/binding.h - the CPython side of py4jni: shared types.
 *
 * Client wraps one p4j_client (in-process or socket); JavaObject, JavaClass and
 * JavaMember are the hot objects of py4j's API, written in C so that attribute access,
 * calls and conversions of the hot path never run Python code.
 */
#ifndef P4J_BINDING_H
#define P4J_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "client.h"

/* ---- free-threaded builds (Py_GIL_DISABLED) ----
 * Where the GIL orders the extension's shared state, a free-threaded build uses these:
 * relaxed/acquire atomics for single words (call sites, class caches, counts),
 * critical sections (the object's own lock, released while the thread waits) for state
 * of one object, a mutex for the module's tables. On GIL builds each expands to the plain
 * access or to nothing, so their code is what it was. */
#ifdef Py_GIL_DISABLED
#define P4JPY_LOAD(lv) __atomic_load_n(&(lv), __ATOMIC_ACQUIRE)
#define P4JPY_STORE(lv, v) __atomic_store_n(&(lv), (v), __ATOMIC_RELEASE)
#define P4JPY_LOCK_OBJ(o) Py_BEGIN_CRITICAL_SECTION(o)
#define P4JPY_UNLOCK_OBJ() Py_END_CRITICAL_SECTION()
#define P4JPY_MUTEX(name) static PyMutex name
#define P4JPY_MUTEX_LOCK(m) PyMutex_Lock(&(m))
#define P4JPY_MUTEX_UNLOCK(m) PyMutex_Unlock(&(m))
#else
#define P4JPY_LOAD(lv) (lv)
#define P4JPY_STORE(lv, v) ((lv) = (v))
#define P4JPY_LOCK_OBJ(o) {
#define P4JPY_UNLOCK_OBJ() }
#define P4JPY_MUTEX(name) typedef int name##_unused_t
#define P4JPY_MUTEX_LOCK(m) ((void)0)
#define P4JPY_MUTEX_UNLOCK(m) ((void)0)
#endif

typedef struct ClientObject {
    PyObject_HEAD
    p4j_client *c;
    PyObject *converter; /* callable(obj) -> JavaObject for other Python types, or None */
    PyObject *proxy_hook; /* socket mode: callable(obj) -> py4j proxy text "<id>;<iface>;..."
                             (None: not a proxy), from py4jni/socket_mode/callbacks.py; or None */
    PyObject *command_hook; /* pinned-thread mode: callable(bytes) -> bytes, runs a command
                               Java sent (py4jni/socket_mode/callbacks.py); or None */
    PyObject *weakreflist;
    PyObject *dict;    /* py4j's GatewayClient attributes set by py4jni (address, port, ...) */
    int auto_field;    /* py4j's auto_field: JavaObject attributes read public fields first */
    int keep_dropped;  /* py4j's enable_memory_management=False: a JavaObject Python drops
                          is not released (Java keeps the object, as py4j's server does) */
    PyObject *pending; /* dict: id -> JavaObject of a Java exception being raised (so that
                          JavaObject(id, client) in get_return_value finds it), or NULL */
} ClientObject;

/* A new reference to the object slot at `offset` of `cl` (its converter or a hook), read
 * under the client's lock in free-threaded builds (a setter may replace it meanwhile). */
static inline PyObject *p4jpy_client_slot_new(ClientObject *cl, size_t offset)
{
    PyObject *r;
    P4JPY_LOCK_OBJ(cl);
    r = Py_XNewRef(*(PyObject **)((char *)cl + offset));
    P4JPY_UNLOCK_OBJ();
    return r;
}

/* True when the client's transport has capability `cap` (P4J_CAP_*, bridge/client.h). */
static inline bool p4jpy_has_cap(const ClientObject *cl, unsigned cap)
{
    return (cl->c->ops->caps & cap) != 0;
}

typedef struct JavaObject {
    PyObject_HEAD
    ClientObject *client;
    p4j_ref ref;          /* handle NULL once detached                            */
    PyObject *weakreflist;
    Py_ssize_t busy;      /* calls in flight using the handle (changed under the GIL) */
    p4j_ref parked;       /* detached while busy: released when the last call returns */
    void *sites[4];       /* call sites of the methods called last, by name (the
                             interned name's address picks the slot): new JavaMembers
                             start from theirs (ops->call_at checks it fits), so
                             methods called in turn on one object each find theirs */
    /* Per-object state, NULL / -1 until used; an exact JavaObject that gains any of it
     * becomes a JavaObjectExtType (same layout, GC-tracked), so the plain type's
     * attribute fast path never looks at them. */
    PyObject *dict;       /* attributes set from Python: the __dict__ (tp_dictoffset) */
    PyObject *methods;    /* set of names known to be methods: auto_field lookups that
                             found no field, calls that failed (listed by dir())     */
    int auto_field;       /* -1: the client's; 0/1: set through _auto_field          */
} JavaObject;

/* Marks `o`'s handle in use by a call about to release the GIL (see p4j_unpin). */
static inline void p4j_pin(JavaObject *o)
{
#ifdef Py_GIL_DISABLED
    __atomic_add_fetch(&o->busy, 1, __ATOMIC_SEQ_CST);
#else
    o->busy++;
#endif
}

/* Ends a p4j_pin; releases a handle detached meanwhile once no call uses it (inline
 * where the GIL orders: every call of a JavaMember ends with it). */
#ifdef Py_GIL_DISABLED
void p4j_unpin(JavaObject *o);
#else
static inline void p4j_unpin(JavaObject *o)
{
    if (--o->busy == 0 && o->parked.handle) {
        o->client->c->ops->release(o->client->c, &o->parked);
        o->parked.handle = NULL;
    }
}
#endif

/* Pins `o` and copies its ref into *out: 1, or 0 (nothing pinned) once it was detached.
 * Free-threaded builds pin first, then read the handle: a detach on another thread either
 * sees the pin (and parks the handle) or has already cleared what this call reads. */
static inline int p4jpy_pin_copy(JavaObject *o, p4j_ref *out)
{
#ifdef Py_GIL_DISABLED
    p4j_pin(o);
    out->handle = __atomic_load_n(&o->ref.handle, __ATOMIC_SEQ_CST);
    out->cls = __atomic_load_n(&o->ref.cls, __ATOMIC_ACQUIRE);
    if (out->handle)
        return 1;
    p4j_unpin(o);
    return 0;
#else
    *out = o->ref;
    if (!out->handle)
        return 0;
    p4j_pin(o);
    return 1;
#endif
}

/* Keeps the class lookup `cls` of a call on `ref` (a ref without one, still `handle`). */
static inline void p4jpy_keep_cls(p4j_ref *ref, const void *handle, void *cls)
{
#ifdef Py_GIL_DISABLED
    void *none = NULL; /* read first: a compare-exchange takes the cache line even when it
                          fails, and a class's ref is shared by every thread calling it */
    if (cls && !__atomic_load_n(&ref->cls, __ATOMIC_RELAXED) &&
        __atomic_load_n(&ref->handle, __ATOMIC_RELAXED) == handle)
        __atomic_compare_exchange_n(&ref->cls, &none, cls, false, __ATOMIC_RELEASE,
                                    __ATOMIC_RELAXED);
#else
    if (!ref->cls && ref->handle == handle)
        ref->cls = cls;
#endif
}

typedef struct JavaClassObject {
    PyObject_HEAD
    ClientObject *client;
    p4j_ref ref;         /* CLASS ref: the java.lang.Class */
    PyObject *fqn;       /* str, binary name ("java.util.Map$Entry") */
    PyObject *members;   /* dict: name -> 1 (static field), 2 (method) or nested JavaClass */
    PyObject *weakreflist;
    vectorcallfunc vectorcall; /* constructs an instance */
    void *last_site;     /* as JavaObject.last_site, for static methods */
    void *ctor_site;     /* the transport's cache of the constructor (ops->construct_at) */
    /* A direct-mapped cache of `members` keyed by the interned name's address: the
     * JavaMember of a static method or a nested JavaClass (values borrowed from
     * `members`, emptied whenever it changes; names held). */
    struct {
        PyObject *name, *value;
    } slots[4];
} JavaClassObject;

typedef struct JavaMemberObject {
    PyObject_HEAD
    PyObject *owner;     /* JavaObject or JavaClass (strong) */
    PyObject *name;      /* str */
    const char *cname;   /* UTF-8 of name, owned by name */
    Py_ssize_t cname_len;
    unsigned flags;      /* P4J_CALL_STATIC for static methods */
    int cached;          /* held by its JavaClass's members (GC-tracked: the two make a
                            cycle); others are untracked */
    vectorcallfunc vectorcall;
    void *site;          /* the transport's cache of the resolved method (ops->call_at) */
} JavaMemberObject;

extern PyTypeObject ClientType, JavaObjectType, JavaClassType, JavaMemberType, NamespaceType;
/* The exact JavaObject with per-object state (see JavaObject.dict); a subtype of
 * JavaObjectType named like it. */
extern PyTypeObject JavaObjectExtType;

/* Exception classes and collection wrappers registered by the py4jni package. */
typedef struct p4j_registry {
    PyObject *Py4JError, *Py4JJavaError, *Py4JNetworkError, *Py4JAuthenticationError;
    PyObject *wrappers[P4J_KIND_COUNT]; /* type per ref kind (LIST, SET, ...) or NULL */
    PyObject *Decimal;                  /* decimal.Decimal, imported lazily */
    PyObject *gateway_module;  /* py4jni.java_gateway: its get_return_value is the error hook */
    PyObject *protocol_module; /* py4jni.protocol: its get_return_value, if replaced there */
    PyObject *default_hook;    /* the original get_return_value */
    PyObject *object_from_id;  /* callable(target_id, client): JavaObject(id, client) */
} p4j_registry;
extern p4j_registry p4j_reg;

/* What every use of a detached JavaObject raises (Py4JError). */
#define P4JPY_DETACHED "py4jni: this Java object was detached"

/* Sets Py4JError P4JPY_DETACHED; returns -1. */
static inline int p4jpy_raise_detached(void)
{
    PyErr_SetString(p4j_reg.Py4JError, P4JPY_DETACHED);
    return -1;
}

/* p4jpy_pin_copy for an operation about to hand the ref to Java: 0 once pinned, or -1
 * with Py4JError "detached" set. */
static inline int p4jpy_pin_or_raise(JavaObject *o, p4j_ref *out)
{
    return p4jpy_pin_copy(o, out) ? 0 : p4jpy_raise_detached();
}

#define P4J_IS_JAVAOBJECT(o) PyObject_TypeCheck((o), &JavaObjectType)
/* JavaClassType has no Py_TPFLAGS_BASETYPE: no subclass exists, the exact check is the
 * whole check (and spares PyType_IsSubtype on the call path). */
#define P4J_IS_JAVACLASS(o) Py_IS_TYPE((o), &JavaClassType)

/* Argument conversion state for one call: Python buffers and temporaries to release. */
#define P4J_ARGS_STACK 8
typedef struct p4j_argpack {
    p4j_value *vals;
    Py_ssize_t n;
    Py_ssize_t cap;        /* the number of arguments: slots of bufs and has_buf */
    p4j_value stack_vals[P4J_ARGS_STACK];
    PyObject *temps;       /* list of temporaries (converted arguments) or NULL */
    Py_buffer *bufs;       /* exported buffers, one slot per argument */
    char *has_buf;         /* 1 where bufs[i] must be released */
    JavaObject *owners[P4J_ARGS_STACK]; /* argument objects whose cls cache we update */
    int taken;             /* something to release: owners, temps, buffers, heap vals */
} p4j_argpack;

/* PySequence_Fast(data, message) whose items stay as they are while they convert: a
 * tuple copy of a list unless every item is an exact int, float, str or bytes, a bool,
 * None or a Java object (their conversion runs no Python code that could change the
 * list); always a copy in a free-threaded build, where another thread may. */
PyObject *p4j_stable_sequence(PyObject *data, const char *message);

/* Converts `n` Python arguments into pack->vals. Returns 0, or -1 with an exception. */
int p4j_args_from_py(ClientObject *cl, PyObject *const *args, Py_ssize_t n, p4j_argpack *pack);

/* The part of p4j_args_release for a pack that took something. */
void p4j_args_release_taken(p4j_argpack *pack);

/* Releases what p4j_args_from_py took (buffers, temporaries) and writes back caches;
 * nothing to do for plain values (ints, str, None, ...). */
static inline void p4j_args_release(p4j_argpack *pack)
{
    if (pack->taken)
        p4j_args_release_taken(pack);
    pack->vals = NULL;
}

/* Raises Py4JError and returns -1 when length `n` (of a `what`, counted in `unit`)
 * exceeds what a Java array or String holds (2^31 - 1); else 0. Check before copying. */
int p4j_check_java_length(Py_ssize_t n, const char *what, const char *unit);

/* Converts one Python value (for field set). Same contract as p4j_args_from_py. */
int p4j_value_from_py(ClientObject *cl, PyObject *o, p4j_value *v, p4j_argpack *pack,
                      Py_ssize_t index);

/* Recently made int results: Python ints are immutable, so a call that returns the
 * value it returned a moment ago (currentTimeMillis within one millisecond, a size, a
 * hash code) gets the same object instead of a new one. Direct-mapped by value; not in
 * free-threaded builds, whose threads would race on it. */
#define P4J_INT_CACHE 64
typedef struct p4j_int_slot {
    long long v;
    PyObject *o; /* strong, or NULL */
} p4j_int_slot;
extern p4j_int_slot p4j_int_cache[P4J_INT_CACHE];

/* The miss of p4j_long_new: a new int, kept in `slot`. */
PyObject *p4j_long_new_slow(long long v, p4j_int_slot *slot);

/* A Python int for `v` (new reference), NULL with an exception when out of memory. */
static inline PyObject *p4j_long_new(long long v)
{
#ifdef Py_GIL_DISABLED
    return PyLong_FromLongLong(v);
#else
    unsigned long long u = (unsigned long long)v;
    if (u + 5 <= 261) /* CPython's own small ints, -5..256 */
        return PyLong_FromLongLong(v);
    p4j_int_slot *s = &p4j_int_cache[(u ^ (u >> 6) ^ (u >> 12)) & (P4J_INT_CACHE - 1)];
    if (s->v == v && s->o)
        return Py_NewRef(s->o);
    return p4j_long_new_slow(v, s);
#endif
}

/* Converts a result into a new Python object and clears `v` (its ref passes to the
 * new object). Returns NULL with an exception set on failure. */
PyObject *p4j_value_to_py(ClientObject *cl, p4j_value *v);

/* Sets the Python exception for `err` and clears it. `where` is py4j's
 * "<target id>.<name>" of the failed call (or NULL). Returns NULL. */
PyObject *p4j_raise(ClientObject *cl, p4j_error *err, const char *where);

/* Like p4j_raise for a failed call of member `name` on py4j's `target` id (NULL: None,
 * as py4j's constructors). A Java exception goes through the current
 * py4jni.java_gateway.get_return_value (py4j's hook, looked up only here) with py4j's
 * arguments ("xr<id>", client, target, name); returns what the hook returns (a value
 * when a replaced hook swallows the exception), else NULL with the exception set. */
PyObject *p4j_raise_call(ClientObject *cl, p4j_error *err, const char *target,
                         const char *name);

/* Returns a new JavaObject (or registered wrapper for `kind`) owning `ref`. */
PyObject *p4j_wrap_ref(ClientObject *cl, p4j_kind kind, p4j_ref *ref);

/* Returns a new JavaClass owning `ref` for class `fqn`. */
PyObject *p4j_wrap_class(ClientObject *cl, p4j_ref *ref, PyObject *fqn);

/* Writes py4j's target id of `ref` ("o7f3a..." in-process, the server's id in socket
 * mode) into buf. */
void p4j_ref_id(ClientObject *cl, const p4j_ref *ref, char *buf, size_t cap);

/* Returns a new JavaMember bound to `owner`. */
PyObject *p4jpy_member_new(PyObject *owner, PyObject *name, unsigned flags);

/* Prepares the Java types (interned names, derived types; objects.c): 0, or -1. */
int p4j_objects_init(void);

/* 0 while the client of a JavaObject/JavaClass is open, else -1 with Py4JError. */
int p4j_closed_error(void);
static inline int p4j_check_open(ClientObject *cl)
{
    return __builtin_expect(cl->c->closed, 0) ? p4j_closed_error() : 0;
}

/* ---- collections and arrays (arrays.c, batches.c; java_collections.py builds on them) */

/* One primitive element type: JNI letter, buffer format, item size, Java name. */
typedef struct p4j_elem_row {
    char letter;
    const char *format;
    Py_ssize_t size;
    const char *name;
} p4j_elem_row;

/* Values packed in the native layout of a primitive array: borrowed from a buffer
 * (view held) or owned. Release with p4j_packed_release. */
typedef struct p4j_packed {
    const void *data;
    Py_ssize_t count;
    Py_buffer view;
    int has_view;
    void *owned;
} p4j_packed;

extern PyTypeObject JavaArrayBaseType;

/* 0 turns the transports' optional bulk ops off (tests of the fallback paths). */
extern int p4j_bulk_enabled;

/* The row of primitive letter `letter` ('I'), or NULL. */
const p4j_elem_row *p4j_elem_row_of(char letter);

/* Checks and stores Python value `v` as one element of `row` at dst. Returns 0, or -1
 * with TypeError (naming the Java type) or OverflowError. */
int p4j_elem_pack(const p4j_elem_row *row, PyObject *v, void *dst);

/* Packs a buffer of the matching format (no copy when contiguous) or an iterable of
 * values. Returns 0, or -1 with an exception naming the Java type. */
int p4j_pack_data(const p4j_elem_row *row, PyObject *data, p4j_packed *out);
void p4j_packed_release(p4j_packed *p);

/* Frees what an unconverted result value owns (its ref, a BYTES source). */
void p4j_value_discard(ClientObject *cl, p4j_value *v);

/* Add the types and functions of arrays.c / batches.c to the module. 0 or -1. */
int p4j_arrays_init(PyObject *module);
int p4j_batches_init(PyObject *module);

/* Adds buffers.c's zero-copy functions (direct_buffer, as_memoryview). 0 or -1. */
int p4j_buffers_init(PyObject *module);

/* ---- callbacks: Java calls Python (py_callbacks.c, py_natives.c; py4jni/inproc_mode/callbacks.py) */

/* When `o` is a py4j-style proxy (its class has `Java.implements`) and the client is
 * in-process: sets *out to a new JavaObject for its Java proxy (made once, then reused
 * while Java holds it) and returns 1. Returns 0 for other objects, -1 with an
 * exception on failure (e.g. an interface that does not exist). */
int p4j_proxy_for(ClientObject *cl, PyObject *o, PyObject **out);

/* When result `v` (a ref kind) is a Java proxy of a Python object: releases the ref and
 * returns a new reference to that Python object (py4j returns the object itself).
 * Else NULL, no exception. */
PyObject *p4j_proxy_unwrap(ClientObject *cl, p4j_value *v);

/* KeyboardInterrupt and SystemExit raised inside a callback (proxy or native) are kept
 * for the thread's Python caller (Java gets a Py4JException to unwind, and may catch
 * it): a binding call that returns from Java passes its result through
 * P4J_BASE_CHECKED, which raises the kept exception itself instead. */
extern int p4j_base_pending_any; /* threads holding one; read relaxed */
/* Raises this thread's kept exception (dropping `result`) and returns NULL; returns
 * `result` when there is none. GIL held. */
PyObject *p4j_base_rethrow(PyObject *result);
/* Whether this thread holds a kept exception. GIL held. */
int p4j_base_here(void);
#define P4J_BASE_CHECKED(r)                                                       \
    (__builtin_expect(__atomic_load_n(&p4j_base_pending_any, __ATOMIC_RELAXED) != 0, 0) \
         ? p4j_base_rethrow(r)                                                    \
         : (r))

/* ---- Ctrl-C into Java calls (interrupts.c; jni/include/jvm_signals.h) ---- */

/* The in-process client's unlock/relock (p4j_client.unlock, P4J_CALL_LOCK_HELD): the GIL,
 * and on the main thread the Java call window of a gateway that lets SIGINT interrupt
 * its calls (`interruptible`) or not (`plain`); p4jpy_relock ends either. */
void *p4jpy_unlock_interruptible(void);
void *p4jpy_unlock_plain(void);
void p4jpy_relock(void *saved);
/* Called by the atexit close of callbacks (GIL held) before Java calls start failing:
 * from then on another thread coming back from an in-process Java call waits, without
 * the GIL, until the interpreter is finalising (CPython then stops it as a daemon
 * thread), for up to about P4JPY_EXIT_PARK_MS, instead of running Python (e.g. printing the
 * call's exit-caused error) while the exiting thread finalises. */
void p4jpy_exit_begin(void);
#define P4JPY_EXIT_PARK_MS 2000

/* Whether the interpreter is finalising. Any thread, GIL or not. */
static inline int p4jpy_finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

extern int p4j_signals_owed; /* jni/include/jvm_signals.h */
/* On the main thread: runs the pending Python signal handlers if a SIGINT arrived since
 * they last ran here (0, or -1 with their exception). Elsewhere 0. GIL held. */
int p4jpy_signals_run_handlers(void);
/* Before a Java call that may wait: a SIGINT that arrived just before it has its Python
 * handler run now (as Python would at the next bytecode) instead of after the call.
 * Expands to 0, or -1 with the handler's exception (then skip the call). GIL held. */
#define P4JPY_SIGNALS_CATCH_UP()                                                   \
    (__builtin_expect(__atomic_load_n(&p4j_signals_owed, __ATOMIC_RELAXED) != 0, 0) \
         ? p4jpy_signals_run_handlers()                                           \
         : 0)
/* Adds the module functions _signals_install and _signal_changed. 0 or -1. */
int p4jpy_signals_init(PyObject *module);

/* ---- Ctrl-C during a socket wait (interrupts.c; socket_transport.h) ---- */

/* A socket client's interrupt check (p4j_socket_interrupt_fn), on a wait a signal
 * interrupted: takes the GIL and runs the pending Python signal handlers (on the main
 * thread; elsewhere nothing runs). When one raised, its exception is kept for this
 * thread and 1 returned: the wait is abandoned and the operation fails with
 * P4J_ERR_INTERRUPTED, whose raise (p4jpy_interrupt_raise) is that exception; should the
 * operation's caller swallow the failure (a release in a destructor), a pending call
 * raises it at the main thread's next bytecode. 0 resumes the wait. */
int p4jpy_socket_interrupted(void *ctx);
/* Keeps the current exception (a KeyboardInterrupt or SystemExit a pinned-thread
 * callback raised) as the reason of the P4J_ERR_INTERRUPTED failures it causes; clears
 * it. GIL held. */
void p4jpy_interrupt_keep(void);
/* Raises the exception behind a P4J_ERR_INTERRUPTED failure of this thread and returns
 * 1, or returns 0 when there is none. GIL held. */
int p4jpy_interrupt_raise(void);
/* Callbacks running on this thread's pinned connection (p4jpy_run_command): a wait
 * abandoned inside one abandons the waits below it too, which raise the same exception. */
extern __thread int p4jpy_command_depth;

/* Registers the function `def` describes (static storage) with Python's atexit.
 * 0 or -1 with an exception. */
int p4j_atexit_register(PyMethodDef *def);

/* How a Java thread holds the GIL between p4j_python_enter and p4j_python_leave. */
typedef struct p4j_gil {
    PyGILState_STATE st;
    int kept; /* this entry made the thread's kept thread state */
} p4j_gil;

/* The only way code on a Java thread enters Python (py_callbacks.c): takes the GIL and
 * returns 0, or returns -1 without touching Python once the interpreter is exiting. */
int p4j_python_enter(p4j_gil *g);

/* Releases the GIL p4j_python_enter took. */
void p4j_python_leave(p4j_gil *g);

/* Installs the callback hooks and adds py_callbacks.c / py_natives.c functions. 0 or -1. */
int p4j_callbacks_init(PyObject *module);

/* ---- callbacks in socket mode (socket_callbacks.c; py4jni/socket_mode/callbacks.py) ---- */

/* When the client is a socket client with a proxy hook and `o`'s class has `Java`:
 * asks the hook for o's py4j proxy text and sets `v` to a P4J_PROXY whose u.proxy is
 * that text (the str is kept in pack->temps for the call) and returns 1. Returns 0
 * when `o` is not a proxy for this client, -1 with an exception on failure. */
int p4j_socket_proxy_value(ClientObject *cl, PyObject *o, p4j_value *v, p4j_argpack *pack);

/* The client's command handler in pinned-thread mode (p4j_command_fn; ctx: the
 * ClientObject): runs a command Java sent through the client's command_hook, taking
 * the GIL. */
int p4jpy_run_command(void *ctx, const char *command, size_t len, char **answer,
                      size_t *answer_len);

/* Adds the wire helpers of socket_callbacks.c to the module. 0 or -1. */
int p4j_socket_callbacks_init(PyObject *module);

#endif /* P4J_BINDING_H */
