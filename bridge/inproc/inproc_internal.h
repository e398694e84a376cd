/* bridge/inproc/inproc_internal.h - shared pieces of the in-process transport.
 *
 * p4jj_class: one per Java class the bridge has touched, found by a dense id that the
 * helper's Bridge.classInfo hands out; holds the class's member cache.
 * p4jj_member: one resolved (name, argument kinds) -> method/constructor/field entry.
 * Both are created once and never freed (they live as long as the JVM); lookups are
 * lock-free, inserts take the class's mutex: thread-safe by construction.
 */
#ifndef P4J_INPROC_INTERNAL_H
#define P4J_INPROC_INTERNAL_H

#include <jni.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "client.h"

/* The ref.cls of a P4J_BYTES result whose handle is a JNI local reference of the thread
 * that made the call (call and call_at), not a global one: read_bytes must run on that
 * thread, with no local frame popped in between. */
extern const char p4j_bytes_local_tag;
#define P4J_BYTES_LOCAL ((void *)&p4j_bytes_local_tag)

#define P4J_MAX_ARGS 32 /* arguments per call; more is refused with a clear error */
#define P4J_CLASS_BUCKETS 64

/* One row per JNI primitive type: descriptor letter, C type, jvalue member, JNI name
 * (Call<Name>MethodA, Get<Name>Field, ...). RCONV_<letter> names its result row. */
#define P4J_PRIM_TABLE(X)        \
    X(Z, jboolean, z, Boolean)   \
    X(B, jbyte, b, Byte)         \
    X(C, jchar, c, Char)         \
    X(S, jshort, s, Short)       \
    X(I, jint, i, Int)           \
    X(J, jlong, j, Long)         \
    X(F, jfloat, f, Float)       \
    X(D, jdouble, d, Double)

/* How one argument becomes a jvalue; fixed per (parameter type, argument kind). */
typedef enum p4j_conv {
    CONV_Z, CONV_B, CONV_C, CONV_S, CONV_I, CONV_J, CONV_F, CONV_D, /* primitives */
    CONV_NULL,    /* null reference                         */
    CONV_REF,     /* the object itself                      */
    CONV_STRING,  /* str -> new String                      */
    CONV_BYTES,   /* bytes -> new byte[]                    */
    CONV_DECIMAL, /* text -> new BigDecimal                 */
    CONV_BOX_Z, CONV_BOX_B, CONV_BOX_C, CONV_BOX_S, CONV_BOX_I, CONV_BOX_J, CONV_BOX_F,
    CONV_BOX_D,   /* Python scalar -> java.lang box         */
    CONV_PROXY,   /* a socket-mode proxy value: refused in-process (see below) */
    CONV_INVALID, /* the argument kind cannot become this parameter type: refused */
} p4j_conv;

/* How a result becomes a p4j_value. */
typedef enum p4j_rconv {
    RCONV_VOID, RCONV_Z, RCONV_B, RCONV_C, RCONV_S, RCONV_I, RCONV_J, RCONV_F, RCONV_D,
    RCONV_STRING, /* declared String: read directly              */
    RCONV_BYTES,  /* declared byte[]                             */
    RCONV_OBJECT, /* anything else: classify by runtime class    */
} p4j_rconv;

/* What a name is on a class, as org.py4jni.Bridge.staticMemberKind answers (its
 * MEMBER_* constants; tests/python/project/test_source_layout.py checks that the two agree). */
typedef enum p4jj_static_kind {
    P4JJ_STATIC_NONE = 0,   /* no public static member of that name */
    P4JJ_STATIC_FIELD = 1,  /* a public static field                */
    P4JJ_STATIC_METHOD = 2, /* one or more public static methods     */
    P4JJ_STATIC_CLASS = 3,  /* a public member class                 */
} p4jj_static_kind;

/* What a member cache entry (p4jj_member) resolves. */
typedef enum p4jj_member_kind {
    P4JJ_MEMBER_METHOD,
    P4JJ_MEMBER_STATIC_METHOD,
    P4JJ_MEMBER_CTOR,
    P4JJ_MEMBER_FIELD,
    P4JJ_MEMBER_STATIC_FIELD,
} p4jj_member_kind;

struct p4jj_class;

typedef struct p4jj_member {
    struct p4jj_member *next;
    uint64_t hash;
    p4jj_member_kind kind;
    char *name;
    size_t name_len;
    uint8_t nargs;
    char keys[P4J_MAX_ARGS];                 /* argument kind letters             */
    struct p4jj_class *arg_cls[P4J_MAX_ARGS]; /* classes of 'r' arguments          */
    uint8_t conv[P4J_MAX_ARGS];              /* p4j_conv per argument             */
    uint8_t rconv;                           /* p4j_rconv of the result / field   */
    bool callstatic;                         /* the resolved method is static     */
    bool arg_refs;                           /* some argument conversion creates a
                                                local ref (deleted after the call) */
    bool short_call;                         /* methods: on the allowlist of calls
                                                that may keep the GIL (inproc_short.c) */
    jobject via_frame;                       /* methods: for a caller-sensitive method, the
                                                java.lang.reflect.Method that
                                                org.py4jni.CallerFrame invokes (global
                                                ref); NULL: JNI calls mid directly */
    struct p4jj_class *owner;                 /* the class it was resolved on     */
    struct p4jj_class *ret_cls;               /* object results: their exact class when
                                                the declared type is final, or NULL */
    struct p4jj_class *last_cls;              /* object results: class seen last time
                                                (a cache; benign race)             */
    char *desc;                              /* fields: the JNI type descriptor   */
    jclass ftype;                            /* fields: the type (global ref)     */
    bool final;                              /* fields: declared final            */
    jmethodID mid;
    jfieldID fid;
} p4jj_member;

typedef struct p4jj_class {
    jclass cls; /* global ref */
    uint32_t id;
    char role;  /* wire letter of instances: 'r', 'l', 's', ... (Bridge.classInfo) */
    uint8_t cb_state; /* bridge/inproc/callbacks.c: whether instances are Python proxies (a cache) */
    uint8_t buf_kind; /* bridge/inproc/inproc_buffers.c: what instances are as buffers (a cache) */
    pthread_mutex_t lock;
    p4jj_member *buckets[P4J_CLASS_BUCKETS]; /* read with __atomic acquire loads */
} p4jj_class;

/* Returns the p4jj_class of class `cls` (a local or global ref), creating it on first
 * sight. NULL with err set on failure. */
p4jj_class *p4jj_class_get(JNIEnv *env, jclass cls, p4j_error *err);

/* Returns the p4jj_class of object `obj`'s runtime class. */
p4jj_class *p4jj_class_of(JNIEnv *env, jobject obj, p4j_error *err);

/* Returns the kind letter used in member keys for argument `v` ('i', 's', 'r', ...). */
char p4j_arg_key(const p4j_value *v);

/* Finds or resolves the member `name` of `kind` on `cls` for `args`.
 * For 'r' arguments the p4jj_class of each is looked up (and cached in its ref.cls).
 * Returns NULL with err set when nothing applies. */
p4jj_member *p4jj_member_find(JNIEnv *env, p4jj_class *cls, p4jj_member_kind kind,
                              const char *name, size_t name_len, const p4j_value *args,
                              size_t nargs, p4j_error *err);

/* Returns the member p4jj_member_find would return when it is cached already, else NULL;
 * calls no Java (NULL too when an object argument's class is not known yet). */
p4jj_member *p4jj_member_peek(p4jj_class *cls, p4jj_member_kind kind, const char *name,
                              size_t name_len, const p4j_value *args, size_t nargs);

/* Returns the member cached at call site `site` (may be NULL) when it was resolved on
 * class `cls` for `kind`, `name` and arguments of the kinds and classes of `args`, else
 * NULL; `named`: the caller knows the site's member has this name (not compared). Calls
 * no Java. */
p4jj_member *p4jj_member_at(void **site, p4jj_class *cls, p4jj_member_kind kind,
                            const char *name, size_t name_len, bool named,
                            const p4j_value *args, size_t nargs);

/* True when method `name` with descriptor `sig`, declared by class `decl` (binary name,
 * "java.lang.Math"), called with arguments of kinds `keys` (p4j_arg_key; NULL: unknown),
 * is a short call: no blocking, no callback (inproc_short.c). */
bool p4jj_short_call(const char *decl, const char *name, const char *sig, const char *keys);

/* Decides, for method `m` just resolved as reflected `member`, whether it is called
 * through org.py4jni.CallerFrame (caller-sensitive: it needs a Java caller) and sets
 * m->via_frame if so (inproc_callers.c). P4J_ERROR with err set on failure. */
p4j_status p4jj_caller_plan(JNIEnv *env, p4jj_member *m, jobject member, p4j_error *err);

/* Invokes caller-sensitive `m` (m->via_frame set) on `obj` (ignored when static) with
 * arguments `a` through CallerFrame, storing the raw result in *rv as a direct call
 * would; a Java exception stays pending for the caller to capture. No local ref is
 * left behind but an object result's. */
void p4jj_invoke_in_frame(JNIEnv *env, const p4jj_member *m, jobject obj, const jvalue *a,
                          jvalue *rv);

/* Converts args[i] into jargs[i] following m->conv; creates local refs in the current
 * frame. Returns P4J_ERROR with err set on overflow or a failed allocation, having
 * deleted the local refs it made. */
p4j_status p4j_args_to_java(JNIEnv *env, const p4jj_member *m, const p4j_value *args,
                            jvalue *jargs, p4j_error *err);

/* Deletes the local references that p4j_args_to_java made for m's first `done`
 * arguments in `jargs`. */
static inline void p4j_args_drop(JNIEnv *env, const p4jj_member *m, const jvalue *jargs,
                                 size_t done)
{
    for (size_t i = 0; i < done; i++)
        if (m->conv[i] >= CONV_STRING && jargs[i].l)
            (*env)->DeleteLocalRef(env, jargs[i].l);
}

/* Sets `out` from the raw result `rv` of a method returning `rconv` when that is void,
 * boolean or an integral or double primitive (inline: the hot path's common results);
 * returns false, leaving `out` alone, for char, float and reference results. */
static inline bool p4j_scalar_result(p4j_rconv rconv, jvalue rv, p4j_value *out)
{
    switch (rconv) {
    case RCONV_VOID: out->kind = P4J_VOID; return true;
    case RCONV_Z: out->kind = P4J_BOOL; out->u.b = rv.z; return true;
    case RCONV_B: out->kind = P4J_INT; out->u.i = rv.b; return true;
    case RCONV_S: out->kind = P4J_INT; out->u.i = rv.s; return true;
    case RCONV_I: out->kind = P4J_INT; out->u.i = rv.i; return true;
    case RCONV_J: out->kind = P4J_LONG; out->u.l = rv.j; return true;
    case RCONV_D: out->kind = P4J_DOUBLE; out->u.d = rv.d; return true;
    default: return false;
    }
}

/* Converts a Java result (`rv` per `rconv`) into `out`. Object results become global
 * refs owned by `out`. `m` (may be NULL) lends its class knowledge for object results.
 * With `local_bytes` (a call's result on the hot path, no local frame), a byte[] result
 * is handed over as the local reference rv.l itself (ref.cls P4J_BYTES_LOCAL), which
 * the caller then leaves to read_bytes instead of deleting it. */
p4j_status p4j_result_from_java(JNIEnv *env, p4j_rconv rconv, p4jj_member *m, jvalue rv,
                                bool local_bytes, p4j_value *out, p4j_error *err);

/* Sets `out` to the byte[] `arr` handed over as this thread's local reference
 * (P4J_BYTES_LOCAL): no global reference, whose allocation takes a lock all threads share. */
static inline void p4j_bytes_local(JNIEnv *env, jobject arr, p4j_value *out)
{
    out->kind = P4J_BYTES;
    out->u.bytes.data = NULL;
    out->u.bytes.len = (size_t)(*env)->GetArrayLength(env, (jarray)arr);
    out->ref.handle = arr;
    out->ref.cls = P4J_BYTES_LOCAL;
}

/* Converts a Java object (may be NULL) into `out` by its runtime class. */
p4j_status p4j_object_to_value(JNIEnv *env, jobject obj, p4j_value *out, p4j_error *err);

/* Converts non-NULL `obj`, whose exact class is `pc`, into `out`. */
p4j_status p4j_object_of_class(JNIEnv *env, jobject obj, p4jj_class *pc, p4j_value *out,
                               p4j_error *err);

/* Returns how an argument of kind letter `key` converts to parameter type `desc`, or
 * CONV_INVALID when no conversion of that kind yields a value of that primitive type
 * (reference types are checked against the produced class by p4j_check_conversion). */
p4j_conv p4j_conv_for(const char *desc, char key);

/* Checks that conversion `conv` of an argument (class `arg_cls` for CONV_REF) yields a
 * value assignable to Java type `type`; P4J_ERROR with err naming both types if not. */
p4j_status p4j_check_conversion(JNIEnv *env, p4j_conv conv, char key, jclass arg_cls,
                                jclass type, p4j_error *err);

/* Returns Class.getName() of `cls` ("int", "java.lang.String") in a malloc'd string,
 * or NULL (pending exceptions cleared). */
char *p4jj_class_name(JNIEnv *env, jclass cls);

/* The Python type name of argument kind letter `key` ("str", "int", "JavaObject"). */
const char *p4j_key_python_name(char key);

/* Returns the end of the one type descriptor starting at `p` ("I", "[[B", "Lx/Y;"). */
const char *p4j_descriptor_end(const char *p);

/* Returns the p4j_rconv for JNI type descriptor `desc` (return or field type). */
p4j_rconv p4j_rconv_of(const char *desc);

/* P4J_ERROR with err set when `n` bytes exceed a Java array (2^31 - 1); else P4J_OK. */
p4j_status p4j_check_length(size_t n, p4j_error *err);

/* Returns true when `c` is an in-process client. */
bool p4j_client_is_inproc(const p4j_client *c);

/* Entry of a non-hot in-process operation: checks the client, resets `out` (may be
 * NULL) and returns the thread's env inside a new local frame of `capacity`; NULL
 * with err set on failure. Pair with p4j_inproc_leave on every exit. */
JNIEnv *p4j_inproc_enter(p4j_client *c, p4j_value *out, jint capacity, p4j_error *err);

/* Pops the frame pushed by p4j_inproc_enter and returns `st`. */
p4j_status p4j_inproc_leave(JNIEnv *env, p4j_status st);

/* The error for a P4J_PROXY value given to the in-process transport: in-process, the
 * binding turns Python proxies into the Java objects of their proxies (REF) instead. */
p4j_status p4j_proxy_value_refused(p4j_error *err);

/* The p4j_float_printer of the process's JVM (bridge/value.h): Bridge.floatsAsPrinted,
 * Float.toString's digits read back as doubles, one Java call for n floats. */
bool p4j_jvm_floats_as_printed(const float *src, double *dst, size_t n);

#endif /* P4J_INPROC_INTERNAL_H */
