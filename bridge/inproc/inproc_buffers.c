/* bridge/inproc/inproc_buffers.c - zero-copy buffers (see inproc_buffers.h). */
#include "inproc_buffers.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "inproc.h"
#include "inproc_internal.h"
#include "jvm.h"
#include "jvm_classes.h"

/* What DirectBuffers.release(handle) hands back: the caller's release and context. */
typedef struct buffer_owner {
    p4j_buffer_release_fn release;
    void *ctx;
} buffer_owner;

/* Classes and methods, resolved on first use (process lifetime). */
#define BUF_CLASS_TABLE(X)                           \
    X(DirectBuffers, "org/py4jni/DirectBuffers")     \
    X(ByteBuffer, "java/nio/ByteBuffer")
#define BUF_METHOD_TABLE(X)                                                      \
    X(track, DirectBuffers, 1, "track", "(Ljava/nio/ByteBuffer;J)V")             \
    X(isDirect, ByteBuffer, 0, "isDirect", "()Z")                                \
    X(isReadOnly, ByteBuffer, 0, "isReadOnly", "()Z")

static struct {
#define BUF_CLASS_FIELD(field, bin) jclass field;
    BUF_CLASS_TABLE(BUF_CLASS_FIELD)
#undef BUF_CLASS_FIELD
#define BUF_METHOD_FIELD(field, c, st, nm, sg) jmethodID field;
    BUF_METHOD_TABLE(BUF_METHOD_FIELD)
#undef BUF_METHOD_FIELD
} ids;
static int ids_ready;
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;

static void JNICALL java_release(JNIEnv *env, jclass unused, jlong handle)
{
    (void)env;
    (void)unused;
    buffer_owner *o = (buffer_owner *)(intptr_t)handle;
    if (!o)
        return;
    /* Made on the caller's thread, released on a JVM thread: the hand-over goes through
     * Java's Cleaner; the acquire pairs with the release store of o->ctx below. */
    void *ctx = __atomic_load_n(&o->ctx, __ATOMIC_ACQUIRE);
    o->release(ctx);
    free(o);
}

static p4j_status ids_init_locked(JNIEnv *env, p4j_error *err)
{
#define BUF_CLASS_ROW(field, bin) P4J_CLASS_ROW(ids, field, bin)
#define BUF_METHOD_ROW(field, c, st, nm, sg) P4J_METHOD_ROW(ids, field, c, st, nm, sg)
    static const p4j_row rows[] = {BUF_CLASS_TABLE(BUF_CLASS_ROW) BUF_METHOD_TABLE(BUF_METHOD_ROW)};
#undef BUF_CLASS_ROW
#undef BUF_METHOD_ROW
    if (p4j_rows_resolve(env, rows, sizeof rows / sizeof *rows, "py4jni buffers", err) != P4J_OK)
        return P4J_ERROR;
    JNINativeMethod natives[] = {{"release", "(J)V", (void *)java_release}};
    if ((*env)->RegisterNatives(env, ids.DirectBuffers, natives, 1) != 0) {
        (*env)->ExceptionClear(env);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: org.py4jni.DirectBuffers does not "
                             "match this library (helper jar out of date?)");
    }
    return P4J_OK;
}

/* Resolves `ids` once. */
static p4j_status ids_get(JNIEnv *env, p4j_error *err)
{
    if (__builtin_expect(__atomic_load_n(&ids_ready, __ATOMIC_ACQUIRE), 1))
        return P4J_OK;
    pthread_mutex_lock(&ids_lock);
    p4j_status st = P4J_OK;
    if (!ids_ready && (st = ids_init_locked(env, err)) == P4J_OK)
        __atomic_store_n(&ids_ready, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ids_lock);
    return st;
}

static p4j_status refuse_socket(p4j_client *c, p4j_error *err)
{
    if (p4j_client_is_inproc(c))
        return P4J_OK;
    return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: zero-copy buffers need the in-process "
                         "gateway (socket mode: Java runs in another process)");
}

p4j_status p4j_inproc_direct_buffer(p4j_client *c, void *addr, size_t len,
                                    p4j_buffer_release_fn release, void *ctx,
                                    p4j_value *out, p4j_error *err)
{
    if (refuse_socket(c, err) != P4J_OK)
        return P4J_ERROR;
    if (len > INT_MAX)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: a ByteBuffer holds at most %d "
                             "bytes; this buffer has %zu", INT_MAX, len);
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    if (ids_get(env, err) != P4J_OK)
        return p4j_inproc_leave(env, P4J_ERROR);
    buffer_owner *o = malloc(sizeof *o);
    if (!o)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_MEMORY, "out of memory"));
    o->release = release;
    __atomic_store_n(&o->ctx, ctx, __ATOMIC_RELEASE); /* o is complete (java_release) */
    /* JNI wants a non-NULL address even for an empty buffer. */
    static char empty;
    jobject bb = (*env)->NewDirectByteBuffer(env, len ? addr : &empty, (jlong)len);
    if (!bb) {
        free(o);
        if (p4j_jvm_capture_exception(env, err) == P4J_OK)
            p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: this JVM does not support JNI "
                          "access to direct buffers");
        return p4j_inproc_leave(env, P4J_ERROR);
    }
    if (p4j_object_to_value(env, bb, out, err) != P4J_OK) {
        free(o);
        return p4j_inproc_leave(env, P4J_ERROR);
    }
    (*env)->CallStaticVoidMethod(env, ids.DirectBuffers, ids.track, bb,
                                 (jlong)(intptr_t)o);
    if (p4j_jvm_failed(env, err)) { /* not registered: the context stays the caller's */
        free(o);
        c->ops->release(c, &out->ref);
        out->kind = P4J_NULL;
        return p4j_inproc_leave(env, P4J_ERROR);
    }
    return p4j_inproc_leave(env, P4J_OK);
}

/* What the instances of a class are as buffers (p4jj_class.buf_kind). */
enum {
    BUF_UNKNOWN = 0, /* not asked yet */
    BUF_NONE,        /* not a java.nio.ByteBuffer */
    BUF_HEAP,        /* a heap ByteBuffer: no fixed address */
    BUF_DIRECT,      /* a direct ByteBuffer */
    BUF_DIRECT_RO,   /* a read-only direct ByteBuffer */
};

/* The buffer kind of `b`, whose class is `pc`, asked once per class: ByteBuffer's
 * subclasses all live in java.nio (its constructors are package-private), and there
 * being direct and being read-only are what the class is (HeapByteBuffer[R],
 * DirectByteBuffer[R]). BUF_UNKNOWN with err set on failure. */
static int buffer_kind(JNIEnv *env, p4jj_class *pc, jobject b, p4j_error *err)
{
    int kind = __atomic_load_n(&pc->buf_kind, __ATOMIC_ACQUIRE);
    if (__builtin_expect(kind != BUF_UNKNOWN, 1))
        return kind;
    if (ids_get(env, err) != P4J_OK)
        return BUF_UNKNOWN;
    if (!(*env)->IsInstanceOf(env, b, ids.ByteBuffer)) {
        kind = BUF_NONE;
    } else {
        jboolean direct = (*env)->CallBooleanMethod(env, b, ids.isDirect);
        if (p4j_jvm_failed(env, err))
            return BUF_UNKNOWN;
        jboolean ro = direct ? (*env)->CallBooleanMethod(env, b, ids.isReadOnly) : JNI_FALSE;
        if (p4j_jvm_failed(env, err))
            return BUF_UNKNOWN;
        kind = !direct ? BUF_HEAP : ro ? BUF_DIRECT_RO : BUF_DIRECT;
    }
    __atomic_store_n(&pc->buf_kind, (uint8_t)kind, __ATOMIC_RELEASE);
    return kind;
}

p4j_status p4j_inproc_buffer_address(p4j_client *c, const p4j_ref *buf, void **addr,
                                     size_t *len, bool *readonly, p4j_error *err)
{
    *addr = NULL;
    *len = 0;
    *readonly = false;
    if (refuse_socket(c, err) != P4J_OK)
        return P4J_ERROR;
    if (c->closed)
        return p4j_error_set(err, P4J_ERR_CLOSED, "py4jni: the gateway has been shut down");
    JNIEnv *env = p4j_jvm_env(err); /* no local frame: nothing below makes a local ref */
    if (!env)
        return P4J_ERROR;
    jobject b = buf ? (jobject)buf->handle : NULL;
    if (!b)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: not a java.nio.ByteBuffer");
    p4jj_class *pc = buf->cls;
    if (!pc && !(pc = ((p4j_ref *)buf)->cls = p4jj_class_of(env, b, err))) /* the caller's */
        return P4J_ERROR;                                              /* cache slot     */
    int kind = buffer_kind(env, pc, b, err);
    if (kind == BUF_UNKNOWN)
        return P4J_ERROR;
    if (kind == BUF_NONE)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: not a java.nio.ByteBuffer");
    if (kind == BUF_HEAP)
        return p4j_error_set(
            err, P4J_ERR_BRIDGE, "py4jni: a heap ByteBuffer has no fixed address (make it "
            "with ByteBuffer.allocateDirect, or copy it with bb.array())");
    void *a = (*env)->GetDirectBufferAddress(env, b);
    jlong cap = (*env)->GetDirectBufferCapacity(env, b);
    if (!a || cap < 0)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: this JVM does not give JNI "
                             "direct buffer addresses");
    *addr = a;
    *len = (size_t)cap;
    *readonly = kind == BUF_DIRECT_RO;
    return P4J_OK;
}
