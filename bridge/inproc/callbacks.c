/* bridge/inproc/callbacks.c - Java calls Python (see callbacks.h).
 *
 * The Java half lives in org.py4jni.Python*: a Proxy's InvocationHandler calls the
 * native PythonProxyHandler.call registered here; PythonProxies.retain/release move
 * counts of the binding's targets. Everything is resolved lazily, on the first proxy,
 * entry point or native registration (p4j_cb_ready), so a process without callbacks
 * pays nothing. Process-lifetime caches (classes, boxes, method entries) hold plain
 * global refs: p4j_jvm_global_count tracks only the references that come and go.
 *
 * Hot path of a callback: no call into Java. Boxes are read and made through their
 * `value` fields, a parameter's class is checked against the one it had last time,
 * and a Python proxy handed back is recognised by its class and its handler's type.
 *
 * Stack: callbacks nest (Python -> Java -> Python ...) on one native stack. HotSpot
 * bounds the process's main thread, attached later, by -Xss, as it does Java threads;
 * one level costs about 6 KiB, so py4jni starts the JVM with -Xss of the main thread's
 * stack limit (python-binding/py4jni/inproc_mode/transport.py: 1,000 levels in 8 MiB), and a
 * callback that would start with less than CB_STACK_RESERVE left throws
 * StackOverflowError instead (Java and Python code can catch it).
 */
#include "callbacks.h"
#include "idtable.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inproc.h"
#include "inproc_internal.h"
#include "jstrings.h"
#include "jvm.h"
#include "jvm_classes.h"

/* Classes, methods and fields this file uses: X(field, "binary/name"). */
#define CB_CLASS_TABLE(X)                                   \
    X(PythonMethod, "org/py4jni/PythonMethod")              \
    X(PythonProxyHandler, "org/py4jni/PythonProxyHandler")  \
    X(PythonProxies, "org/py4jni/PythonProxies")            \
    X(PythonEntryPoint, "org/py4jni/PythonEntryPoint")      \
    X(PythonNatives, "org/py4jni/PythonNatives")            \
    X(Py4JException, "org/py4jni/Py4JException") /* py4j's if found */ \
    X(Proxy, "java/lang/reflect/Proxy")                     \
    X(StackOverflowError, "java/lang/StackOverflowError")

/* X(field, class, is_static, "name", "signature") */
#define CB_METHOD_TABLE(X)                                                                \
    X(create, PythonProxies, 1, "create",                                                 \
      "(J[Ljava/lang/String;Ljava/lang/String;)Ljava/lang/Object;")                       \
    X(isProxyClass, PythonProxies, 1, "isProxyClass", "(Ljava/lang/Class;)Z")             \
    X(epSet, PythonEntryPoint, 1, "set", "(J)V")                                          \
    X(epClear, PythonEntryPoint, 1, "clear", "(J)V")                                      \
    X(describe, PythonNatives, 1, "describe", "(Ljava/lang/Class;)[Ljava/lang/Object;")   \
    X(excNew, Py4JException, 0, "<init>", "(Ljava/lang/String;)V")

#define CB_FIELD_TABLE(X)                                                        \
    X(pmId, PythonMethod, 0, "id", "I")                                          \
    X(pmName, PythonMethod, 0, "name", "Ljava/lang/String;")                     \
    X(pmSig, PythonMethod, 0, "signature", "Ljava/lang/String;")                 \
    X(pmFlags, PythonMethod, 0, "flags", "I")                                    \
    X(pmRet, PythonMethod, 0, "returnType", "Ljava/lang/Class;")                 \
    X(pmNoMethod, PythonMethod, 1, "NO_METHOD", "Ljava/lang/Object;")            \
    X(proxyH, Proxy, 0, "h", "Ljava/lang/reflect/InvocationHandler;")            \
    X(handlerHandle, PythonProxyHandler, 0, "handle", "J")

static struct {
#define CB_CLASS_FIELD(field, name) jclass field;
    CB_CLASS_TABLE(CB_CLASS_FIELD)
#undef CB_CLASS_FIELD
#define CB_METHOD_FIELD(field, cls, st, name, sig) jmethodID field;
    CB_METHOD_TABLE(CB_METHOD_FIELD)
#undef CB_METHOD_FIELD
#define CB_FIELD_FIELD(field, cls, st, name, sig) jfieldID field;
    CB_FIELD_TABLE(CB_FIELD_FIELD)
#undef CB_FIELD_FIELD
    jobject no_method; /* PythonMethod.NO_METHOD (global ref) */
} cb;

/* The eight boxes, read in place (a field access, no call into Java):
 * X(letter, p4j_jc class, jvalue member, JNI type name, descriptor). */
#define CB_BOX_TABLE(X)                      \
    X('Z', Boolean, z, Boolean, "Z")         \
    X('B', Byte, b, Byte, "B")               \
    X('C', Character, c, Char, "C")          \
    X('S', Short, s, Short, "S")             \
    X('I', Integer, i, Int, "I")             \
    X('J', Long, j, Long, "J")               \
    X('F', Float, f, Float, "F")             \
    X('D', Double, d, Double, "D")

typedef struct cb_box {
    jclass cls;        /* global (p4j_jc's) */
    p4jj_class *pc;     /* the transport's class entry */
    jfieldID value;    /* the private `value` field */
} cb_box;

static cb_box boxes[128]; /* indexed by descriptor letter */
static jobject small_ints[256]; /* Integer.valueOf(-128 .. 127), global refs */
static jobject booleans[2];     /* Boolean.FALSE, Boolean.TRUE */

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int cb_is_ready;
static const p4j_cb_hooks *volatile cb_hooks;
static volatile int cb_disabled;

/* A callback refuses to start with less native stack than this left: Python code and
 * HotSpot's guard and shadow zones need room (a crash is not an option). */
#define CB_STACK_RESERVE (160 * 1024)
#define CB_STACK_ARGS 4 /* arguments converted in a stack array; more are malloc'd */
/* Below this many parameters a callback keeps its arguments' local refs (and their
 * classes') until it returns: at most 2 per argument plus a few, inside the 16 a native
 * method is guaranteed. From it on, each is deleted once converted. No local frame is
 * pushed: the hook's own Java calls run in frames of their own. */
#define CB_FEW_ARGS 5

struct p4j_cb_call {
    JNIEnv *env;
    const p4j_cb_method *m;
    bool boxed;     /* the result is wanted as an object (InvocationHandler) */
    bool no_method; /* Java supplies the method */
    jvalue result;  /* local ref or primitive */
};

void p4j_cb_install(const p4j_cb_hooks *hooks)
{
    __atomic_store_n(&cb_hooks, hooks, __ATOMIC_RELEASE);
}

void p4j_cb_disable(void) { __atomic_store_n(&cb_disabled, 1, __ATOMIC_RELEASE); }

/* The hooks when callbacks may run, else NULL. */
static const p4j_cb_hooks *live_hooks(void)
{
    if (__atomic_load_n(&cb_disabled, __ATOMIC_ACQUIRE))
        return NULL;
    return __atomic_load_n(&cb_hooks, __ATOMIC_ACQUIRE);
}

/* ------------------------------------------------------------------ errors */

void p4j_cb_throw(JNIEnv *env, const char *msg)
{
    p4j_error ignored = {0};
    jstring s = p4j_jstring_from_utf8(env, msg ? msg : "py4jni: Python callback failed",
                                      &ignored);
    if (!s) { /* not UTF-8 (or OOM): fall back to modified UTF-8 of the ASCII part */
        (*env)->ExceptionClear(env);
        s = (*env)->NewStringUTF(env, "py4jni: Python callback failed (unprintable message)");
    }
    p4j_error_clear(NULL, &ignored);
    if (!s)
        return; /* OutOfMemoryError pending */
    jobject exc = (*env)->NewObject(env, cb.Py4JException, cb.excNew, s);
    (*env)->DeleteLocalRef(env, s);
    if (exc) {
        (*env)->Throw(env, (jthrowable)exc);
        (*env)->DeleteLocalRef(env, exc);
    }
}

/* Throws what `err` describes and clears it. */
static void throw_error(JNIEnv *env, p4j_error *err)
{
    if (err->kind == P4J_ERR_JAVA && err->throwable.handle) {
        (*env)->Throw(env, (jthrowable)err->throwable.handle);
        p4j_jvm_global_delete(env, (jobject)err->throwable.handle);
        err->throwable.handle = NULL;
    } else if (!(*env)->ExceptionCheck(env)) {
        p4j_cb_throw(env, err->message);
    }
    p4j_error_clear(NULL, err);
}

/* --------------------------------------------------------------- start-up */

static JNINativeMethod handler_natives[] = {
    {"call", "(JLorg/py4jni/PythonMethod;[Ljava/lang/Object;)Ljava/lang/Object;", NULL},
};
static JNINativeMethod proxies_natives[] = {
    {"retain", "(J)V", NULL},
    {"release", "(J)V", NULL},
};

static jobject JNICALL proxy_call(JNIEnv *env, jclass unused, jlong handle, jobject jm,
                                  jobjectArray jargs);
static void JNICALL java_retain(JNIEnv *env, jclass unused, jlong handle);
static void JNICALL java_release(JNIEnv *env, jclass unused, jlong handle);

/* Callbacks fail with py4j's own py4j.Py4JException (same constructor, same message
 * shape) when py4j's jar is on the classpath, as in PySpark whose jars include it, so
 * Java code that catches py4j's type works as with py4j; else org.py4jni's. */
static void prefer_py4j_exception(JNIEnv *env)
{
    jclass local = (*env)->FindClass(env, "py4j/Py4JException");
    jmethodID ctor = NULL;
    if (local && !(*env)->ExceptionCheck(env))
        ctor = (*env)->GetMethodID(env, local, "<init>", "(Ljava/lang/String;)V");
    if (ctor && !(*env)->ExceptionCheck(env)) {
        p4j_jvm_global_delete(env, cb.Py4JException);
        cb.Py4JException = (jclass)p4j_jvm_global_new(env, local); /* process-lifetime */
        cb.excNew = ctor;
    }
    (*env)->ExceptionCheck(env); /* -Xcheck:jni: checked before the clear */
    (*env)->ExceptionClear(env);
    if (local)
        (*env)->DeleteLocalRef(env, local);
}

static p4j_status init_locked(JNIEnv *env, p4j_error *err)
{
#define CB_CLASS_ROW(field, bin) P4J_CLASS_ROW(cb, field, bin)
#define CB_METHOD_ROW(field, c, st, nm, sg) P4J_METHOD_ROW(cb, field, c, st, nm, sg)
#define CB_FIELD_ROW(field, c, st, nm, sg) P4J_FIELD_ROW(cb, field, c, st, nm, sg)
    static const p4j_row rows[] = {CB_CLASS_TABLE(CB_CLASS_ROW) CB_METHOD_TABLE(CB_METHOD_ROW)
                                       CB_FIELD_TABLE(CB_FIELD_ROW)};
#undef CB_CLASS_ROW
#undef CB_METHOD_ROW
#undef CB_FIELD_ROW
    if (p4j_rows_resolve(env, rows, sizeof rows / sizeof *rows, "py4jni callbacks", err) !=
        P4J_OK)
        return P4J_ERROR;
    prefer_py4j_exception(env);

#define CB_BOX_RESOLVE(letter, Cls, member, Name, desc)                               \
    boxes[letter].cls = p4j_jc.Cls;                                                     \
    boxes[letter].value = (*env)->GetFieldID(env, p4j_jc.Cls, "value", desc);           \
    if (!boxes[letter].value) {                                                         \
        (*env)->ExceptionClear(env);                                                    \
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni callbacks: no %s.value",      \
                             #Cls);                                                     \
    }                                                                                   \
    if (!(boxes[letter].pc = p4jj_class_get(env, p4j_jc.Cls, err)))                      \
        return P4J_ERROR;
    CB_BOX_TABLE(CB_BOX_RESOLVE)
#undef CB_BOX_RESOLVE

    jobject nm = (*env)->GetStaticObjectField(env, cb.PythonMethod, cb.pmNoMethod);
    if (p4j_jvm_failed(env, err))
        return P4J_ERROR;
    cb.no_method = p4j_jvm_global_new(env, nm);
    for (int i = 0; i < 256; i++) { /* Integer.valueOf's cache: Java's == holds for them */
        jobject box = (*env)->CallStaticObjectMethod(env, p4j_jc.Integer, p4j_jc.Integer_valueOf,
                                                     (jint)(i - 128));
        if (p4j_jvm_failed(env, err))
            return P4J_ERROR;
        small_ints[i] = p4j_jvm_global_new(env, box);
        (*env)->DeleteLocalRef(env, box);
    }
    for (int i = 0; i < 2; i++) {
        jobject box = (*env)->CallStaticObjectMethod(env, p4j_jc.Boolean, p4j_jc.Boolean_valueOf,
                                                     (jboolean)i);
        if (p4j_jvm_failed(env, err))
            return P4J_ERROR;
        booleans[i] = p4j_jvm_global_new(env, box);
        (*env)->DeleteLocalRef(env, box);
    }
    (*env)->DeleteLocalRef(env, nm);

    handler_natives[0].fnPtr = (void *)proxy_call;
    proxies_natives[0].fnPtr = (void *)java_retain;
    proxies_natives[1].fnPtr = (void *)java_release;
    if ((*env)->RegisterNatives(env, cb.PythonProxyHandler, handler_natives, 1) != 0 ||
        (*env)->RegisterNatives(env, cb.PythonProxies, proxies_natives, 2) != 0) {
        if (p4j_jvm_failed(env, err))
            return P4J_ERROR;
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni callbacks: RegisterNatives failed");
    }
    return P4J_OK;
}

p4j_status p4j_cb_ready(JNIEnv *env, p4j_error *err)
{
    if (__builtin_expect(__atomic_load_n(&cb_is_ready, __ATOMIC_ACQUIRE), 1))
        return P4J_OK;
    pthread_mutex_lock(&init_lock);
    p4j_status st = P4J_OK;
    if (!cb_is_ready && (st = init_locked(env, err)) == P4J_OK)
        __atomic_store_n(&cb_is_ready, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&init_lock);
    return st;
}

/* ------------------------------------------------------------ method table */

static p4j_idtable methods; /* PythonMethod id -> p4j_cb_method */
static pthread_mutex_t method_lock = PTHREAD_MUTEX_INITIALIZER;

/* Argument kind letters (p4j_arg_key) in the order of p4j_cb_method.ret_conv. */
static const char KEYS[] = "nbiLdDsjrf";

static size_t key_index(char key)
{
    switch (key) {
    case 'n': return 0;
    case 'b': return 1;
    case 'i': return 2;
    case 'L': return 3;
    case 'd': return 4;
    case 'D': return 5;
    case 's': return 6;
    case 'j': return 7;
    case 'f': return 9;
    default: return 8; /* 'r' */
    }
}

static void method_free(p4j_cb_method *m)
{
    free((char *)m->name);
    free((char *)m->sig);
    free(m->ret_desc);
    free(m);
}

/* Builds the entry of PythonMethod `pm` (id `id`). */
static p4j_cb_method *method_build(JNIEnv *env, jobject pm, int32_t id, p4j_error *err)
{
    p4j_cb_method *m = calloc(1, sizeof *m);
    jstring name = (*env)->GetObjectField(env, pm, cb.pmName);
    jstring sig = (*env)->GetObjectField(env, pm, cb.pmSig);
    jobject ret = (*env)->GetObjectField(env, pm, cb.pmRet);
    if (!m)
        goto oom;
    m->id = id;
    m->flags = (unsigned)(*env)->GetIntField(env, pm, cb.pmFlags);
    m->name = p4j_jstring_utf8(env, name);
    m->sig = p4j_jstring_utf8(env, sig);
    if (!m->name || !m->sig)
        goto oom;
    m->name_len = strlen(m->name);
    const char *p = m->sig + 1;
    size_t n = 0;
    while (*p && *p != ')') {
        if (n == P4J_CB_MAX_ARGS) {
            p4j_error_set(err, P4J_ERR_BRIDGE,
                          "py4jni: %s has more than %d parameters; Python cannot implement it",
                          m->name, P4J_CB_MAX_ARGS);
            goto fail;
        }
        const char *end = p4j_descriptor_end(p);
        char letter = *p;
        if ((size_t)(end - p) == 18 && strncmp(p, "Ljava/lang/String;", 18) == 0)
            letter = 's';
        else if (end - p == 2 && strncmp(p, "[B", 2) == 0)
            letter = 'j';
        m->params[n++] = letter;
        p = end;
    }
    m->nparams = (uint8_t)n;
    if (*p == ')')
        p++;
    m->ret = *p;
    if (!(m->ret_desc = strdup(p)))
        goto oom;
    if ((m->ret == 'L' || m->ret == '[') && ret && strcmp(p, "Ljava/lang/Object;") != 0)
        m->ret_cls = (jclass)p4j_jvm_global_new(env, ret); /* lives with the entry */
    if (m->ret == 'L' || m->ret == '[')
        for (size_t k = 0; KEYS[k]; k++)
            m->ret_conv[k] = (uint8_t)p4j_conv_for(m->ret_desc, KEYS[k]);
    (*env)->DeleteLocalRef(env, name);
    (*env)->DeleteLocalRef(env, sig);
    (*env)->DeleteLocalRef(env, ret);
    return m;
oom:
    p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
fail:
    if (m)
        method_free(m);
    (*env)->DeleteLocalRef(env, name);
    (*env)->DeleteLocalRef(env, sig);
    (*env)->DeleteLocalRef(env, ret);
    return NULL;
}

const p4j_cb_method *p4j_cb_method_of(JNIEnv *env, jobject pm, p4j_error *err)
{
    int32_t id = (*env)->GetIntField(env, pm, cb.pmId);
    if (id < 0 || (uint32_t)id >= P4J_IDTABLE_MAX) {
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: too many distinct callback methods");
        return NULL;
    }
    p4j_cb_method *m = p4j_idtable_get(&methods, (uint32_t)id);
    if (__builtin_expect(m != NULL, 1))
        return m;
    if (!(m = method_build(env, pm, id, err)))
        return NULL;
    pthread_mutex_lock(&method_lock);
    p4j_cb_method *now = p4j_idtable_put(&methods, (uint32_t)id, m);
    pthread_mutex_unlock(&method_lock);
    if (!now) {
        method_free(m);
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        return NULL;
    }
    p4j_cb_method *raced = now != m ? now : NULL;
    if (raced) { /* another thread built it first: keep one */
        if (m->ret_cls)
            p4j_jvm_global_delete(env, m->ret_cls);
        method_free(m);
        m = raced;
    }
    return m;
}

/* --------------------------------------------- which classes are proxy classes */

enum { CLASS_UNKNOWN = 0, CLASS_PLAIN = 1, CLASS_PROXY = 2 };

/* The state lives in the class's cb_state byte (a cache: benign races). */
static int class_state_get(const p4jj_class *pc)
{
    return __atomic_load_n(&pc->cb_state, __ATOMIC_ACQUIRE);
}

static void class_state_set(const p4jj_class *pc, int state)
{
    __atomic_store_n(&((p4jj_class *)pc)->cb_state, (uint8_t)state, __ATOMIC_RELEASE);
}

/* The target behind object `obj` of class `pc`, or NULL. */
static void *target_of(JNIEnv *env, jobject obj, const p4jj_class *pc)
{
    int state = class_state_get(pc);
    if (state == CLASS_PLAIN)
        return NULL;
    if (state == CLASS_UNKNOWN) {
        jboolean is_proxy = (*env)->CallStaticBooleanMethod(env, cb.PythonProxies,
                                                            cb.isProxyClass, pc->cls);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            return NULL;
        }
        class_state_set(pc, is_proxy ? CLASS_PROXY : CLASS_PLAIN);
        if (!is_proxy)
            return NULL;
    }
    /* A Proxy class is shared by every handler: check that this one is ours. */
    jobject h = (*env)->GetObjectField(env, obj, cb.proxyH);
    void *target = NULL;
    if (h && (*env)->IsInstanceOf(env, h, cb.PythonProxyHandler))
        target = (void *)(intptr_t)(*env)->GetLongField(env, h, cb.handlerHandle);
    if (h)
        (*env)->DeleteLocalRef(env, h);
    return target;
}

void *p4j_cb_proxy_target(const p4j_ref *ref)
{
    if (!__atomic_load_n(&cb_is_ready, __ATOMIC_ACQUIRE) || !ref->handle || !ref->cls)
        return NULL; /* no proxy can exist before the machinery is ready */
    const p4jj_class *pc = ref->cls;
    if (class_state_get(pc) == CLASS_PLAIN)
        return NULL;
    JNIEnv *env = p4j_jvm_env_or_null();
    return env ? target_of(env, (jobject)ref->handle, pc) : NULL;
}

/* The class of `obj`, through the per-parameter cache of `m` (slot `slot`). */
static p4jj_class *class_cached(JNIEnv *env, const p4j_cb_method *m, size_t slot, jobject obj,
                               p4j_error *err)
{
    jclass cls = (*env)->GetObjectClass(env, obj);
    void **cache = (void **)&m->last_cls[slot]; /* a cache inside a shared entry */
    p4jj_class *last = __atomic_load_n((p4jj_class **)cache, __ATOMIC_ACQUIRE);
    p4jj_class *pc = last && (*env)->IsSameObject(env, cls, last->cls) ? last
                                                                      : p4jj_class_get(env, cls, err);
    if (m->nparams >= CB_FEW_ARGS) /* few arguments: the call's own 16 slots suffice */
        (*env)->DeleteLocalRef(env, cls);
    if (pc && pc != last)
        __atomic_store_n((p4jj_class **)cache, pc, __ATOMIC_RELEASE);
    return pc;
}

/* Reads box `obj` (of class `pc`) into `out`; false when pc is not a box class. */
static bool box_read(JNIEnv *env, const p4jj_class *pc, jobject obj, p4j_value *out)
{
    if (pc == boxes['I'].pc) {
        out->kind = P4J_INT;
        out->u.i = (*env)->GetIntField(env, obj, boxes['I'].value);
    } else if (pc == boxes['J'].pc) {
        out->kind = P4J_LONG;
        out->u.l = (*env)->GetLongField(env, obj, boxes['J'].value);
    } else if (pc == boxes['D'].pc) {
        out->kind = P4J_DOUBLE;
        out->u.d = (*env)->GetDoubleField(env, obj, boxes['D'].value);
    } else if (pc == boxes['Z'].pc) {
        out->kind = P4J_BOOL;
        out->u.b = (*env)->GetBooleanField(env, obj, boxes['Z'].value) != 0;
    } else if (pc == boxes['F'].pc) {
        out->kind = P4J_DOUBLE;
        out->u.d = p4j_float_as_printed((*env)->GetFloatField(env, obj, boxes['F'].value));
    } else if (pc == boxes['S'].pc) {
        out->kind = P4J_INT;
        out->u.i = (*env)->GetShortField(env, obj, boxes['S'].value);
    } else if (pc == boxes['B'].pc) {
        out->kind = P4J_INT;
        out->u.i = (*env)->GetByteField(env, obj, boxes['B'].value);
    } else if (pc == boxes['C'].pc) {
        jchar c = (*env)->GetCharField(env, obj, boxes['C'].value);
        p4j_value_set_string(out, P4J_STRING, &c, 1, P4J_ENC_UTF16); /* inline */
    } else {
        return false;
    }
    return true;
}

/* A byte[] argument, handed to Python as a new local reference of this native call:
 * Python reads and deletes it (read_bytes) while it converts the arguments, on this
 * thread, or p4j_cb_release_args deletes it. No global reference: HotSpot allocates
 * those under one lock that all threads share. */
static p4j_status bytes_arg(JNIEnv *env, jobject a, p4j_value *out, p4j_error *err)
{
    jobject local = (*env)->NewLocalRef(env, a);
    if (!local)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of JNI local references");
    p4j_bytes_local(env, local, out);
    return P4J_OK;
}

/* Converts non-NULL object `obj` by its runtime class. */
static p4j_status object_arg(JNIEnv *env, const p4j_cb_method *m, size_t slot, jobject obj,
                             p4j_value *out, p4j_error *err)
{
    p4jj_class *pc = class_cached(env, m, slot, obj, err);
    if (!pc)
        return P4J_ERROR;
    if (box_read(env, pc, obj, out))
        return P4J_OK;
    if (class_state_get(pc) != CLASS_PLAIN) {
        void *t = target_of(env, obj, pc);
        if (t) {
            out->kind = P4J_PROXY;
            out->u.proxy = t;
            return P4J_OK;
        }
    }
    if (pc->role == 'j') /* a byte[] passed as an Object */
        return bytes_arg(env, obj, out, err);
    return p4j_object_of_class(env, obj, pc, out, err);
}

/* ------------------------------------------------------------ dispatch */

static bool stack_ok(void)
{
    static __thread uintptr_t stack_lo;
    char here;
    if (__builtin_expect(stack_lo == 0, 0)) {
        pthread_attr_t a;
        void *addr = NULL;
        size_t size = 0;
        stack_lo = 1; /* unknown: never refuse */
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr)
                stack_lo = (uintptr_t)addr;
            pthread_attr_destroy(&a);
        }
    }
    return (uintptr_t)&here - stack_lo > CB_STACK_RESERVE;
}

void p4j_cb_release_args(JNIEnv *env, p4j_value *args, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p4j_value *v = &args[i];
        if (v->kind == P4J_BYTES && v->ref.cls == P4J_BYTES_LOCAL && v->ref.handle)
            (*env)->DeleteLocalRef(env, (jobject)v->ref.handle); /* not read: bytes_arg's */
        else if ((p4j_kind_has_ref(v->kind) || v->kind == P4J_BYTES) && v->ref.handle)
            p4j_jvm_global_delete(env, (jobject)v->ref.handle);
        v->ref.handle = NULL;
        p4j_value_clear(v);
    }
}

p4j_status p4j_cb_dispatch(JNIEnv *env, void *target, const p4j_cb_method *m,
                           p4j_value *args, size_t nargs, bool boxed, jvalue *result,
                           bool *no_method)
{
    p4j_error err = {0};
    struct p4j_cb_call call = {.env = env, .m = m, .boxed = boxed};
    const p4j_cb_hooks *hooks = live_hooks();
    p4j_status st;
    result->j = 0;
    *no_method = false;
    if (!hooks) {
        st = p4j_error_set(&err, P4J_ERR_CLOSED,
                           "py4jni: cannot call Python method %s: the Python interpreter is "
                           "exiting (or py4jni's callback layer is not loaded)", m->name);
    } else if (!stack_ok()) {
        p4j_cb_release_args(env, args, nargs);
        (*env)->ThrowNew(env, cb.StackOverflowError,
                         "py4jni: too little native stack left to call Python (callbacks "
                         "nested too deeply)");
        return P4J_ERROR;
    } else {
        uint64_t context = p4j_thread_context; /* the Java caller's, given back below */
        st = hooks->invoke(target, m, args, nargs, &call, &err);
        if (__builtin_expect(p4j_thread_context != context, 0) && st == P4J_OK &&
            !(*env)->ExceptionCheck(env))
            st = p4j_inproc_enter_context(env, context, &err);
    }
    p4j_cb_release_args(env, args, nargs);
    if (st == P4J_OK && (*env)->ExceptionCheck(env)) /* a hook must not leave one */
        st = p4j_jvm_capture_exception(env, &err);
    if (st != P4J_OK) {
        throw_error(env, &err);
        return P4J_ERROR;
    }
    *result = call.result;
    *no_method = call.no_method;
    return P4J_OK;
}

p4j_status p4j_cb_ref_arg(JNIEnv *env, const p4j_cb_method *m, size_t slot, jobject a,
                          p4j_value *out, p4j_error *err)
{
    out->kind = P4J_NULL;
    out->owned = NULL;
    out->ref.handle = out->ref.cls = NULL;
    if (!a)
        return P4J_OK;
    switch (slot == P4J_CB_RECEIVER ? 'L' : m->params[slot]) {
    case 's':
        return p4j_jstring_read(env, (jstring)a, P4J_STRING, out, err);
    case 'j':
        return bytes_arg(env, a, out, err);
    default:
        return object_arg(env, m, slot, a, out, err);
    }
}

/* Converts argument `a` of a proxy call for parameter `slot` of `m`: primitives arrive
 * boxed in exactly their wrapper class, read in place. */
static p4j_status boxed_arg(JNIEnv *env, const p4j_cb_method *m, size_t slot, jobject a,
                            p4j_value *out, p4j_error *err)
{
    char letter = m->params[slot];
    out->owned = NULL;
    out->ref.handle = out->ref.cls = NULL;
    if (!a) {
        out->kind = P4J_NULL;
        return P4J_OK;
    }
    switch (letter) {
    case 'Z':
        out->kind = P4J_BOOL;
        out->u.b = (*env)->GetBooleanField(env, a, boxes['Z'].value) != 0;
        return P4J_OK;
    case 'B':
        out->kind = P4J_INT;
        out->u.i = (*env)->GetByteField(env, a, boxes['B'].value);
        return P4J_OK;
    case 'S':
        out->kind = P4J_INT;
        out->u.i = (*env)->GetShortField(env, a, boxes['S'].value);
        return P4J_OK;
    case 'I':
        out->kind = P4J_INT;
        out->u.i = (*env)->GetIntField(env, a, boxes['I'].value);
        return P4J_OK;
    case 'J':
        out->kind = P4J_LONG;
        out->u.l = (*env)->GetLongField(env, a, boxes['J'].value);
        return P4J_OK;
    case 'F':
        out->kind = P4J_DOUBLE;
        out->u.d = p4j_float_as_printed((*env)->GetFloatField(env, a, boxes['F'].value));
        return P4J_OK;
    case 'D':
        out->kind = P4J_DOUBLE;
        out->u.d = (*env)->GetDoubleField(env, a, boxes['D'].value);
        return P4J_OK;
    case 'C': {
        jchar c = (*env)->GetCharField(env, a, boxes['C'].value);
        p4j_value_set_string(out, P4J_STRING, &c, 1, P4J_ENC_UTF16);
        return P4J_OK;
    }
    default:
        return p4j_cb_ref_arg(env, m, slot, a, out, err);
    }
}

/* PythonProxyHandler.call(long handle, PythonMethod m, Object[] args). */
static jobject JNICALL proxy_call(JNIEnv *env, jclass unused, jlong handle, jobject jm,
                                  jobjectArray jargs)
{
    (void)unused;
    p4j_jvm_adopt_env(env);
    p4j_error err = {0};
    const p4j_cb_method *m = p4j_cb_method_of(env, jm, &err);
    if (!m) {
        throw_error(env, &err);
        return NULL;
    }
    /* Proxy passes exactly the method's arguments (null for none). No local frame:
     * each argument's local ref is deleted once converted, so few are live at once. */
    jsize n = jargs ? (jsize)m->nparams : 0;
    /* Small frames: callbacks nest (Python -> Java -> Python ...) on one native stack. */
    p4j_value stack_vals[CB_STACK_ARGS];
    p4j_value *vals = n <= CB_STACK_ARGS ? stack_vals : malloc(sizeof *vals * (size_t)n);
    if (!vals) {
        p4j_cb_throw(env, "py4jni: out of memory");
        return NULL;
    }
    jsize got = 0;
    for (; got < n; got++) {
        jobject a = (*env)->GetObjectArrayElement(env, jargs, got);
        p4j_status st = boxed_arg(env, m, (size_t)got, a, &vals[got], &err);
        if (a && n >= CB_FEW_ARGS)
            (*env)->DeleteLocalRef(env, a);
        if (st != P4J_OK)
            break;
    }
    jvalue r = {0};
    bool no_method = false, ok = false;
    if (got < n) {
        p4j_cb_release_args(env, vals, (size_t)got);
        throw_error(env, &err);
    } else {
        ok = p4j_cb_dispatch(env, (void *)(intptr_t)handle, m, vals, (size_t)n, true, &r,
                             &no_method) == P4J_OK;
    }
    if (vals != stack_vals)
        free(vals);
    if (!ok)
        return NULL;
    return no_method ? (*env)->NewLocalRef(env, cb.no_method) : r.l;
}

static void JNICALL java_retain(JNIEnv *env, jclass unused, jlong handle)
{
    (void)unused;
    p4j_jvm_adopt_env(env);
    const p4j_cb_hooks *hooks = live_hooks();
    if (hooks)
        hooks->retain((void *)(intptr_t)handle);
}

void p4j_cb_target_release(void *target)
{
    const p4j_cb_hooks *hooks = live_hooks();
    if (hooks) /* after disable the Python object is left to the exiting interpreter */
        hooks->release(target);
}

static void JNICALL java_release(JNIEnv *env, jclass unused, jlong handle)
{
    (void)unused;
    p4j_jvm_adopt_env(env);
    p4j_cb_target_release((void *)(intptr_t)handle);
}

/* ------------------------------------------------------------ results */

/* A new box of `letter` holding `v`, or NULL with an exception pending: the cached
 * Integer and Boolean instances, else Cls.valueOf(v), as Java's autoboxing gives it. Not a
 * field store into an AllocObject'ed box: `value` is final, and JDK 26's -Xcheck:jni
 * reports JNI stores into final fields (JEP 500), which later JDKs may refuse. */
static jobject box_new(JNIEnv *env, char letter, jvalue v)
{
    if (letter == 'I' && v.i >= -128 && v.i <= 127) /* what Java's autoboxing returns */
        return (*env)->NewLocalRef(env, small_ints[v.i + 128]);
    if (letter == 'Z')
        return (*env)->NewLocalRef(env, booleans[v.z ? 1 : 0]);
    switch (letter) {
#define CB_BOX_NEW(L, Cls, member, Name, desc) \
    case L:                                    \
        return (*env)->CallStaticObjectMethodA(env, p4j_jc.Cls, p4j_jc.Cls##_valueOf, &v);
        CB_BOX_TABLE(CB_BOX_NEW)
#undef CB_BOX_NEW
    default:
        return NULL;
    }
}

static const char *kind_words(p4j_kind k)
{
    switch (k) {
    case P4J_NULL: return "null (None)";
    case P4J_BOOL: return "a boolean";
    case P4J_INT: return "an int";
    case P4J_LONG: return "an int beyond 32 bits";
    case P4J_DOUBLE: return "a float";
    case P4J_DECIMAL: return "a decimal";
    case P4J_STRING: return "a string";
    case P4J_BYTES: return "bytes";
    default: return "an object";
    }
}

static const char *prim_name(char letter)
{
    switch (letter) {
    case 'Z': return "boolean";
    case 'B': return "byte";
    case 'C': return "char";
    case 'S': return "short";
    case 'I': return "int";
    case 'J': return "long";
    case 'F': return "float";
    case 'D': return "double";
    default: return "void";
    }
}

static int64_t int_of(const p4j_value *v) { return v->kind == P4J_INT ? v->u.i : v->u.l; }

/* Converts `v` to a primitive of `letter` into *out. */
static p4j_status to_primitive(JNIEnv *env, char letter, const p4j_value *v, jvalue *out,
                               p4j_error *err)
{
    bool integral = v->kind == P4J_INT || v->kind == P4J_LONG;
    int64_t lo = 0, hi = 0;
    switch (letter) {
    case 'Z':
        if (v->kind != P4J_BOOL)
            break;
        out->z = v->u.b;
        return P4J_OK;
    case 'B': lo = -128; hi = 127; goto integer;
    case 'S': lo = -32768; hi = 32767; goto integer;
    case 'I': lo = INT32_MIN; hi = INT32_MAX; goto integer;
    case 'J': lo = INT64_MIN; hi = INT64_MAX;
    integer:
        if (!integral)
            break;
        if (int_of(v) < lo || int_of(v) > hi)
            return p4j_error_set(err, P4J_ERR_BRIDGE, "%lld is out of range for Java %s",
                                 (long long)int_of(v), prim_name(letter));
        switch (letter) {
        case 'B': out->b = (jbyte)int_of(v); break;
        case 'S': out->s = (jshort)int_of(v); break;
        case 'I': out->i = (jint)int_of(v); break;
        default: out->j = (jlong)int_of(v); break;
        }
        return P4J_OK;
    case 'F': case 'D': {
        if (v->kind != P4J_DOUBLE && !integral)
            break;
        double d = v->kind == P4J_DOUBLE ? v->u.d : (double)int_of(v);
        if (letter == 'F')
            out->f = (jfloat)d;
        else
            out->d = d;
        return P4J_OK;
    }
    case 'C': {
        if (v->kind != P4J_STRING || v->u.s.len != 1)
            break;
        p4jj_member plan = {.nargs = 1};
        plan.keys[0] = 's';
        plan.conv[0] = CONV_C;
        return p4j_args_to_java(env, &plan, v, out, err);
    }
    default:
        break;
    }
    if (v->kind == P4J_STRING && letter == 'C')
        return p4j_error_set(err, P4J_ERR_BRIDGE, "a string of length %zu cannot be a Java char",
                             v->u.s.len);
    return p4j_error_set(err, P4J_ERR_BRIDGE, "cannot convert %s to Java %s",
                         kind_words(v->kind), prim_name(letter));
}

/* Converts `v` to an object of the method's reference return type into out->l (a new
 * local ref, or NULL). */
static p4j_status to_object(JNIEnv *env, const p4j_cb_method *m, const p4j_value *v,
                            jvalue *out, p4j_error *err)
{
    out->l = NULL;
    if (v->kind == P4J_NULL || v->kind == P4J_VOID)
        return P4J_OK;
    p4jj_member plan = {.nargs = 1};
    plan.keys[0] = p4j_arg_key(v);
    plan.conv[0] = m->ret_conv[key_index(plan.keys[0])];
    switch (plan.conv[0]) { /* the common boxes, made in place */
    case CONV_BOX_I: out->l = box_new(env, 'I', (jvalue){.i = v->u.i}); break;
    case CONV_BOX_J: out->l = box_new(env, 'J', (jvalue){.j = int_of(v)}); break;
    case CONV_BOX_D: out->l = box_new(env, 'D', (jvalue){.d = v->u.d}); break;
    case CONV_BOX_Z: out->l = box_new(env, 'Z', (jvalue){.z = v->u.b}); break;
    case CONV_PROXY:
        return p4j_error_set(err, P4J_ERR_BRIDGE, "a Python proxy value cannot be returned here");
    default:
        if (p4j_args_to_java(env, &plan, v, out, err) != P4J_OK)
            return P4J_ERROR;
        break;
    }
    if (!out->l) /* a box or String could not be made: the exception is pending */
        return p4j_jvm_capture_exception(env, err) == P4J_OK
                   ? p4j_error_set(err, P4J_ERR_MEMORY, "out of memory") : P4J_ERROR;
    if (plan.conv[0] == CONV_REF && out->l) /* the ref belongs to the value: take our own */
        out->l = (*env)->NewLocalRef(env, out->l);
    if (out->l && m->ret_cls && !(*env)->IsInstanceOf(env, out->l, m->ret_cls)) {
        jclass have = (*env)->GetObjectClass(env, out->l);
        jstring hn = (*env)->CallObjectMethod(env, have, p4j_jc.Class_getName);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            hn = NULL;
        }
        jstring wn = (*env)->CallObjectMethod(env, m->ret_cls, p4j_jc.Class_getName);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            wn = NULL;
        }
        char *h = p4j_jstring_utf8(env, hn);
        char *w = p4j_jstring_utf8(env, wn);
        p4j_error_set(err, P4J_ERR_BRIDGE, "cannot convert %s (Java %s) to Java %s",
                      kind_words(v->kind), h ? h : "?", w ? w : m->ret_desc);
        free(h);
        free(w);
        (*env)->DeleteLocalRef(env, have);
        if (hn) (*env)->DeleteLocalRef(env, hn);
        if (wn) (*env)->DeleteLocalRef(env, wn);
        (*env)->DeleteLocalRef(env, out->l);
        out->l = NULL;
        return P4J_ERROR;
    }
    return P4J_OK;
}

p4j_status p4j_cb_return(p4j_cb_call *call, const p4j_value *v, p4j_error *err)
{
    JNIEnv *env = call->env;
    const p4j_cb_method *m = call->m;
    jvalue r = {0};
    call->no_method = false;
    if (m->ret == 'V') {
        call->result.l = NULL;
        return P4J_OK;
    }
    if (m->ret == 'L' || m->ret == '[') {
        if (to_object(env, m, v, &r, err) != P4J_OK)
            return P4J_ERROR;
        call->result = r;
        return P4J_OK;
    }
    if (v->kind == P4J_NULL)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "None cannot be returned as Java %s",
                             prim_name(m->ret));
    if (to_primitive(env, m->ret, v, &r, err) != P4J_OK)
        return P4J_ERROR;
    if (!call->boxed) {
        call->result = r;
        return P4J_OK;
    }
    if ((call->result.l = box_new(env, m->ret, r)) != NULL)
        return P4J_OK;
    return p4j_jvm_capture_exception(env, err) == P4J_OK
               ? p4j_error_set(err, P4J_ERR_MEMORY, "out of memory") : P4J_ERROR;
}

void p4j_cb_return_default(p4j_cb_call *call)
{
    call->no_method = (call->m->flags & P4J_CB_HAS_DEFAULT) != 0;
    call->result.j = 0;
}

/* ------------------------------------------------------------ proxies */

p4j_status p4j_cb_proxy_new(void *target, const char *const *ifaces, size_t n,
                            const char *type_name, p4j_ref *out, void **weak,
                            p4j_error *err)
{
    out->handle = out->cls = NULL;
    *weak = NULL;
    JNIEnv *env = p4j_jvm_env(err);
    if (!env || p4j_cb_ready(env, err) != P4J_OK)
        return P4J_ERROR;
    if ((*env)->PushLocalFrame(env, 16) != 0)
        return p4j_jvm_capture_exception(env, err);
    p4j_status st = P4J_ERROR;
    jobjectArray names = (*env)->NewObjectArray(env, (jsize)n, p4j_jc.String, NULL);
    if (p4j_jvm_failed(env, err))
        goto done;
    for (size_t i = 0; i < n; i++) {
        jstring s = p4j_jstring_from_utf8(env, ifaces[i], err);
        if (!s)
            goto done;
        (*env)->SetObjectArrayElement(env, names, (jsize)i, s);
        (*env)->DeleteLocalRef(env, s);
    }
    jstring tname = p4j_jstring_from_utf8(env, type_name ? type_name : "?", err);
    if (!tname)
        goto done;
    jobject proxy = (*env)->CallStaticObjectMethod(env, cb.PythonProxies, cb.create,
                                                   (jlong)(intptr_t)target, names, tname);
    if (p4j_jvm_failed(env, err))
        goto done;
    p4jj_class *pc = p4jj_class_of(env, proxy, err);
    if (!pc)
        goto done;
    class_state_set(pc, CLASS_PROXY);
    out->handle = p4j_jvm_global_new(env, proxy);
    out->cls = pc;
    *weak = (*env)->NewWeakGlobalRef(env, proxy);
    if (!out->handle || !*weak) {
        p4j_jvm_global_delete(env, (jobject)out->handle);
        out->handle = NULL;
        if (*weak)
            (*env)->DeleteWeakGlobalRef(env, (jweak)*weak);
        *weak = NULL;
        p4j_error_set(err, P4J_ERR_MEMORY, "out of JNI references");
        goto done;
    }
    st = P4J_OK;
done:
    (*env)->PopLocalFrame(env, NULL);
    return st;
}

bool p4j_cb_weak_get(void *weak, p4j_ref *out)
{
    p4j_error err = {0};
    JNIEnv *env = weak ? p4j_jvm_env(&err) : NULL;
    p4j_error_clear(NULL, &err);
    out->handle = env ? p4j_jvm_global_new(env, (jobject)weak) : NULL; /* NULL: collected */
    return out->handle != NULL;
}

void p4j_cb_weak_delete(void *weak)
{
    if (!weak)
        return;
    JNIEnv *env = p4j_jvm_env_or_null();
    if (env)
        (*env)->DeleteWeakGlobalRef(env, (jweak)weak);
}

p4j_status p4j_cb_entry_point_set(void *target, bool clear_only, p4j_error *err)
{
    JNIEnv *env = p4j_jvm_env(err);
    if (!env || p4j_cb_ready(env, err) != P4J_OK)
        return P4J_ERROR;
    (*env)->CallStaticVoidMethod(env, cb.PythonEntryPoint, clear_only ? cb.epClear : cb.epSet,
                                 (jlong)(intptr_t)target);
    return p4j_jvm_capture_exception(env, err);
}

/* ------------------------------------------------- natives describe (bridge/inproc/natives.c) */

jobjectArray p4j_cb_describe_natives(JNIEnv *env, jclass cls, p4j_error *err)
{
    if (p4j_cb_ready(env, err) != P4J_OK)
        return NULL;
    jobjectArray a = (*env)->CallStaticObjectMethod(env, cb.PythonNatives, cb.describe, cls);
    return p4j_jvm_failed(env, err) ? NULL : a;
}
