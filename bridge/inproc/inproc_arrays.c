/* bridge/inproc/inproc_arrays.c - primitive array regions for the in-process transport (see
 * inproc_bulk.h). Reads and writes are one Get/Set<Type>ArrayRegion each: a copy, no
 * Java call and never a critical region, so no JNI state outlives the operation. */
#include "inproc_bulk.h"
#include "inproc_internal.h"
#include "jvm.h"

/* The descriptor letter of each P4J_PRIM_TABLE row, usable as a case label. */
enum { ELEM_Z = 'Z', ELEM_B = 'B', ELEM_C = 'C', ELEM_S = 'S', ELEM_I = 'I', ELEM_J = 'J',
       ELEM_F = 'F', ELEM_D = 'D' };

/* Checks that `arr` is a primitive array of component `elem` and that [start,
 * start + count) lies inside it. */
static p4j_status check_region(JNIEnv *env, const p4j_bulk_ids *ids, jobject arr, char elem,
                               size_t start, size_t count, p4j_error *err)
{
    jclass want = NULL;
    switch (elem) {
#define P4J_ARR_CLASS(L, ctype, field, Name) case ELEM_##L: want = ids->Arr##L; break;
        P4J_PRIM_TABLE(P4J_ARR_CLASS)
#undef P4J_ARR_CLASS
    default: break;
    }
    if (!want)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: '%c' is not a primitive type letter",
                             elem ? elem : '?');
    if (!arr)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: the array is null");
    if (!(*env)->IsInstanceOf(env, arr, want))
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: the object is not a %c[] array", elem);
    size_t len = (size_t)(*env)->GetArrayLength(env, (jarray)arr);
    if (start > len || count > len - start)
        return p4j_error_set(err, P4J_ERR_BRIDGE,
                             "py4jni: region [%zu, %zu) outside an array of length %zu", start,
                             start + count, len);
    return P4J_OK;
}

p4j_status p4j_inproc_array_info(p4j_client *c, const p4j_ref *arr, char *elem, size_t *len,
                                 p4j_error *err)
{
    *elem = 0;
    *len = 0;
    JNIEnv *env = p4j_inproc_enter(c, NULL, 8, err);
    if (!env)
        return P4J_ERROR;
    const p4j_bulk_ids *ids = p4j_bulk_ids_get(env, err);
    if (!ids)
        return p4j_inproc_leave(env, P4J_ERROR);
    jobject a = arr ? (jobject)arr->handle : NULL;
    if (!a)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: the array is null"));
#define P4J_ARR_TEST(L, ctype, field, Name)                  \
    if (!*elem && (*env)->IsInstanceOf(env, a, ids->Arr##L)) \
        *elem = (char)ELEM_##L;
    P4J_PRIM_TABLE(P4J_ARR_TEST)
#undef P4J_ARR_TEST
    if (!*elem) {
        p4jj_class *pc = p4jj_class_of(env, a, err);
        if (!pc)
            return p4j_inproc_leave(env, P4J_ERROR);
        if (pc->role != 't')
            return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE,
                                                     "py4jni: the object is not an array"));
        *elem = 'L';
    }
    *len = (size_t)(*env)->GetArrayLength(env, (jarray)a);
    return p4j_inproc_leave(env, P4J_OK);
}

/* Copies between `buf` (native layout) and elements [start, start + count) of primitive
 * array `arr` (component `elem`): into Java when `to_java`, out of it otherwise. */
static p4j_status array_copy(const p4j_ref *arr, char elem, size_t start, size_t count,
                             void *buf, bool to_java, p4j_error *err)
{
    JNIEnv *env = p4j_jvm_env(err);
    if (!env)
        return P4J_ERROR;
    const p4j_bulk_ids *ids = p4j_bulk_ids_get(env, err);
    if (!ids)
        return P4J_ERROR;
    jobject a = arr ? (jobject)arr->handle : NULL;
    if (check_region(env, ids, a, elem, start, count, err) != P4J_OK)
        return P4J_ERROR;
    switch (elem) {
#define P4J_ARR_COPY(L, ctype, field, Name)                                                 \
    case ELEM_##L:                                                                           \
        if (to_java)                                                                         \
            (*env)->Set##Name##ArrayRegion(env, (ctype##Array)a, (jsize)start, (jsize)count, \
                                           (const ctype *)buf);                              \
        else                                                                                 \
            (*env)->Get##Name##ArrayRegion(env, (ctype##Array)a, (jsize)start, (jsize)count, \
                                           (ctype *)buf);                                    \
        break;
        P4J_PRIM_TABLE(P4J_ARR_COPY)
#undef P4J_ARR_COPY
    default: break;
    }
    return p4j_jvm_failed(env, err) ? P4J_ERROR : P4J_OK;
}

p4j_status p4j_inproc_array_read(p4j_client *c, const p4j_ref *arr, char elem, size_t start,
                                 size_t count, void *dst, p4j_error *err)
{
    (void)c; /* reading an array already held is allowed after shutdown, as read_bytes */
    return array_copy(arr, elem, start, count, dst, false, err);
}

p4j_status p4j_inproc_array_write(p4j_client *c, const p4j_ref *arr, char elem, size_t start,
                                  size_t count, const void *src, p4j_error *err)
{
    if (c->closed)
        return p4j_error_set(err, P4J_ERR_CLOSED, "py4jni: the gateway has been shut down");
    return array_copy(arr, elem, start, count, (void *)src, true, err);
}

p4j_status p4j_inproc_array_new(p4j_client *c, char elem, size_t count, const void *src,
                                p4j_value *out, p4j_error *err)
{
    if (count > 0x7fffffff)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: %zu elements exceed a Java array",
                             count);
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    jarray a = NULL;
    switch (elem) {
#define P4J_ARR_NEW(L, ctype, field, Name)                                                \
    case ELEM_##L:                                                                           \
        a = (*env)->New##Name##Array(env, (jsize)count);                                  \
        if (a && src && count)                                                            \
            (*env)->Set##Name##ArrayRegion(env, (ctype##Array)a, 0, (jsize)count,         \
                                           (const ctype *)src);                           \
        break;
        P4J_PRIM_TABLE(P4J_ARR_NEW)
#undef P4J_ARR_NEW
    default:
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE,
                                                 "py4jni: '%c' is not a primitive type letter",
                                                 elem ? elem : '?'));
    }
    if (p4j_jvm_failed(env, err))
        return p4j_inproc_leave(env, P4J_ERROR);
    if (!a)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_MEMORY, "out of Java memory"));
    out->kind = P4J_ARRAY;
    out->ref.handle = p4j_jvm_global_new(env, a);
    if (!out->ref.handle)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_MEMORY,
                                                 "out of JNI global references"));
    return p4j_inproc_leave(env, P4J_OK);
}
