/* bridge/inproc/inproc_collections.c - batched collection walks and collection building for the
 * in-process transport (see inproc_bulk.h; Java side: org.py4jni.Cursor and Bulk).
 *
 * A walk moves a chunk of elements into flat Java arrays (kinds, bits, chars, refs)
 * with one Java call; this file reads each array with one region copy and converts the
 * chunk into p4j_values. Building goes the other way: values packed into flat arrays,
 * one Java call makes the collection.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inproc_bulk.h"
#include "inproc_internal.h"
#include "jstrings.h"
#include "jvm.h"
#include "jvm_classes.h"

/* ------------------------------------------------------------ the ID table */

static p4j_bulk_ids bulk_ids;
static int bulk_ready; /* read with acquire, set with release under bulk_lock */
static pthread_mutex_t bulk_lock = PTHREAD_MUTEX_INITIALIZER;

static p4j_status bulk_resolve(JNIEnv *env, p4j_bulk_ids *t, p4j_error *err)
{
#define BULK_CLASS_ROW(field, bin) P4J_CLASS_ROW(*t, field, bin)
#define BULK_METHOD_ROW(field, c, st, nm, sg) P4J_METHOD_ROW(*t, field, c, st, nm, sg)
#define BULK_FIELD_ROW(field, c, nm, sg) P4J_FIELD_ROW(*t, field, c, 0, nm, sg)
    const p4j_row rows[] = {P4J_BULK_CLASS_TABLE(BULK_CLASS_ROW)
                                P4J_BULK_METHOD_TABLE(BULK_METHOD_ROW)
                                    P4J_BULK_FIELD_TABLE(BULK_FIELD_ROW)};
#undef BULK_CLASS_ROW
#undef BULK_METHOD_ROW
#undef BULK_FIELD_ROW
    return p4j_rows_resolve(env, rows, sizeof rows / sizeof *rows, "py4jni", err);
}

const p4j_bulk_ids *p4j_bulk_ids_get(JNIEnv *env, p4j_error *err)
{
    if (__builtin_expect(__atomic_load_n(&bulk_ready, __ATOMIC_ACQUIRE), 1))
        return &bulk_ids;
    pthread_mutex_lock(&bulk_lock);
    p4j_status st = P4J_OK;
    if (!bulk_ready) {
        p4j_bulk_ids t = {0};
        st = bulk_resolve(env, &t, err);
        if (st == P4J_OK) {
            bulk_ids = t;
            __atomic_store_n(&bulk_ready, 1, __ATOMIC_RELEASE);
        }
        /* on failure the classes resolved so far stay referenced: a failed start-up
         * row means the helper jar is wrong, and every later call reports it again */
    }
    pthread_mutex_unlock(&bulk_lock);
    return st == P4J_OK ? &bulk_ids : NULL;
}

/* ------------------------------------------------------------ walks */

p4j_status p4j_inproc_cursor_open(p4j_client *c, const p4j_ref *source, char mode,
                                  p4j_value *out, p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    const p4j_bulk_ids *ids = p4j_bulk_ids_get(env, err);
    if (!ids)
        return p4j_inproc_leave(env, P4J_ERROR);
    if (!source || !source->handle)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE,
                                                 "py4jni: cannot walk a null object"));
    jobject cur = (*env)->CallStaticObjectMethod(env, ids->Cursor, ids->Cursor_open,
                                                 (jobject)source->handle, (jchar)mode);
    if (p4j_jvm_failed(env, err))
        return p4j_inproc_leave(env, P4J_ERROR);
    out->kind = P4J_REF;
    out->ref.handle = p4j_jvm_global_new(env, cur);
    if (!out->ref.handle)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_MEMORY,
                                                 "out of JNI global references"));
    return p4j_inproc_leave(env, P4J_OK);
}

/* Releases what values [0, n) own after a failed conversion. */
static void drop_values(JNIEnv *env, p4j_value *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (vals[i].ref.handle) /* refs, and BYTES sources */
            p4j_jvm_global_delete(env, (jobject)vals[i].ref.handle);
        vals[i].ref.handle = NULL;
        p4j_value_clear(&vals[i]);
        vals[i].kind = P4J_NULL;
    }
}

/* Converts slot i of a filled chunk into `v`. `chars` holds the chunk's texts; *pos
 * is the offset of the next text; `refs` is fetched on the first 'r' slot. */
static p4j_status slot_value(JNIEnv *env, const p4j_bulk_ids *ids, jobject cur, jsize i,
                             jbyte kind, jlong bits, const jchar *chars, size_t *pos,
                             jobjectArray *refs, p4j_value *v, p4j_error *err)
{
    v->owned = NULL;
    v->ref.handle = v->ref.cls = NULL;
    switch (kind) {
    case 'n': v->kind = P4J_NULL; return P4J_OK;
    case 'b': v->kind = P4J_BOOL; v->u.b = bits != 0; return P4J_OK;
    case 'i': v->kind = P4J_INT; v->u.i = (int32_t)bits; return P4J_OK;
    case 'L': v->kind = P4J_LONG; v->u.l = bits; return P4J_OK;
    case 'd': v->kind = P4J_DOUBLE; memcpy(&v->u.d, &bits, sizeof v->u.d); return P4J_OK;
    case 'f': {
        uint32_t fb = (uint32_t)bits;
        float f;
        memcpy(&f, &fb, sizeof f);
        v->kind = P4J_DOUBLE;
        v->u.d = p4j_float_as_printed(f);
        return P4J_OK;
    }
    case 'c': {
        jchar ch = (jchar)bits;
        p4j_value_set_string(v, P4J_STRING, &ch, 1, P4J_ENC_UTF16); /* fits inline */
        return P4J_OK;
    }
    case 's':
    case 'D': {
        size_t len = (size_t)bits;
        if (p4j_value_set_string(v, kind == 's' ? P4J_STRING : P4J_DECIMAL, chars + *pos, len,
                                 P4J_ENC_UTF16) < 0)
            return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory reading a string");
        *pos += len;
        return P4J_OK;
    }
    case 'r': {
        if (!*refs) {
            *refs = (*env)->GetObjectField(env, cur, ids->Cursor_refs);
            if (!*refs)
                return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: cursor without refs");
        }
        jobject o = (*env)->GetObjectArrayElement(env, *refs, i);
        if (p4j_jvm_failed(env, err))
            return P4J_ERROR;
        p4j_status st = p4j_object_to_value(env, o, v, err);
        (*env)->DeleteLocalRef(env, o);
        return st;
    }
    default:
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: bad slot kind %d", (int)kind);
    }
}

p4j_status p4j_inproc_cursor_next(p4j_client *c, const p4j_ref *cursor, p4j_value *vals,
                                  size_t max, size_t *n, p4j_error *err)
{
    *n = 0;
    JNIEnv *env = p4j_inproc_enter(c, NULL, 16, err);
    if (!env)
        return P4J_ERROR;
    const p4j_bulk_ids *ids = p4j_bulk_ids_get(env, err);
    if (!ids)
        return p4j_inproc_leave(env, P4J_ERROR);
    if (!cursor || !cursor->handle)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE,
                                                 "py4jni: the cursor is null"));
    jobject cur = (jobject)cursor->handle;
    jint count = (*env)->CallIntMethod(env, cur, ids->Cursor_fill,
                                       (jint)(max > 0x7fffffff ? 0x7fffffff : max));
    if (p4j_jvm_failed(env, err))
        return p4j_inproc_leave(env, P4J_ERROR);
    if (count <= 0)
        return p4j_inproc_leave(env, P4J_OK);

    jint nchars = (*env)->GetIntField(env, cur, ids->Cursor_nchars);
    size_t bytes = (size_t)count * (sizeof(jlong) + 1) + (size_t)nchars * sizeof(jchar);
    char *scratch = malloc(bytes ? bytes : 1);
    if (!scratch)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_MEMORY, "out of memory"));
    jlong *bits = (jlong *)scratch;                 /* aligned: first in the block */
    jchar *chars = (jchar *)(bits + count);
    jbyte *kinds = (jbyte *)(chars + nchars);
    p4j_status st = P4J_OK;
    jobject karr = (*env)->GetObjectField(env, cur, ids->Cursor_kinds);
    jobject barr = (*env)->GetObjectField(env, cur, ids->Cursor_bits);
    (*env)->GetByteArrayRegion(env, karr, 0, count, kinds);
    if (!(*env)->ExceptionCheck(env))
        (*env)->GetLongArrayRegion(env, barr, 0, count, bits);
    if (!(*env)->ExceptionCheck(env) && nchars > 0) {
        jobject carr = (*env)->GetObjectField(env, cur, ids->Cursor_chars);
        (*env)->GetCharArrayRegion(env, carr, 0, nchars, chars);
    }
    if (p4j_jvm_failed(env, err)) {
        st = P4J_ERROR;
        goto done;
    }
    jobjectArray refs = NULL;
    size_t pos = 0;
    for (jsize i = 0; i < count; i++) {
        if (slot_value(env, ids, cur, i, kinds[i], bits[i], chars, &pos, &refs, &vals[i],
                       err) != P4J_OK) {
            drop_values(env, vals, (size_t)i);
            st = P4J_ERROR;
            goto done;
        }
    }
    *n = (size_t)count;
done:
    free(scratch);
    return p4j_inproc_leave(env, st);
}

/* ------------------------------------------------------------ building */

/* UTF-16 units needed for a string value of the encodings packed as chars. */
static size_t utf16_units(const p4j_str *s)
{
    if (s->enc != P4J_ENC_UCS4)
        return s->len;
    size_t n = s->len;
    const uint32_t *p = s->data;
    for (size_t i = 0; i < s->len; i++)
        n += p[i] >= 0x10000;
    return n;
}

/* Writes `s` (LATIN1, UTF16, UCS4, or ASCII-only UTF8) as UTF-16 at dst; returns the
 * units written, or -1 when UTF8 text is not ASCII. */
static long to_utf16(const p4j_str *s, jchar *dst)
{
    switch (s->enc) {
    case P4J_ENC_UTF16:
        memcpy(dst, s->data, s->len * sizeof(jchar));
        return (long)s->len;
    case P4J_ENC_LATIN1:
        p4j_widen_latin1(s->data, s->len, dst);
        return (long)s->len;
    case P4J_ENC_UTF8: {
        const unsigned char *p = s->data;
        for (size_t i = 0; i < s->len; i++) {
            if (p[i] >= 0x80)
                return -1;
            dst[i] = p[i];
        }
        return (long)s->len;
    }
    case P4J_ENC_UCS4: {
        const uint32_t *p = s->data;
        long n = 0;
        for (size_t i = 0; i < s->len; i++) {
            uint32_t cp = p[i];
            if (cp >= 0x10000) {
                cp -= 0x10000;
                dst[n++] = (jchar)(0xD800 | (cp >> 10));
                dst[n++] = (jchar)(0xDC00 | (cp & 0x3FF));
            } else {
                dst[n++] = (jchar)cp;
            }
        }
        return n;
    }
    }
    return -1;
}

/* True when value `v` travels as text in the chars array ('s' or 'D'). */
static bool packs_as_text(const p4j_value *v)
{
    return (v->kind == P4J_STRING && v->u.s.enc != P4J_ENC_UTF8) || v->kind == P4J_DECIMAL;
}

/* Makes the Java object of a value that travels in refs; a new local ref (NULL for a
 * failure, with err set). */
static jobject ref_object(JNIEnv *env, const p4j_value *v, p4j_error *err)
{
    jobject o = NULL;
    switch (v->kind) {
    case P4J_STRING:
        return p4j_jstring_new(env, &v->u.s, err);
    case P4J_BYTES:
        if (p4j_check_length(v->u.bytes.len, err) != P4J_OK)
            return NULL;
        o = (*env)->NewByteArray(env, (jsize)v->u.bytes.len);
        if (o && v->u.bytes.len)
            (*env)->SetByteArrayRegion(env, o, 0, (jsize)v->u.bytes.len,
                                       (const jbyte *)v->u.bytes.data);
        return p4j_jvm_failed(env, err) ? NULL : o;
    case P4J_PROXY:
        p4j_proxy_value_refused(err);
        return NULL;
    default:
        if (!v->ref.handle) {
            p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: a detached object cannot be an element");
            return NULL;
        }
        return (*env)->NewLocalRef(env, (jobject)v->ref.handle);
    }
}

p4j_status p4j_inproc_collection_new(p4j_client *c, char kind, const p4j_value *vals,
                                     size_t n, p4j_value *out, p4j_error *err)
{
    if (n > 0x7fffffff)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: too many elements (%zu)", n);
    JNIEnv *env = p4j_inproc_enter(c, out, 16, err);
    if (!env)
        return P4J_ERROR;
    const p4j_bulk_ids *ids = p4j_bulk_ids_get(env, err);
    if (!ids)
        return p4j_inproc_leave(env, P4J_ERROR);

    size_t nchars = 0;
    bool any_ref = false;
    for (size_t i = 0; i < n; i++) {
        if (packs_as_text(&vals[i]))
            nchars += utf16_units(&vals[i].u.s);
        else if (vals[i].kind != P4J_NULL && vals[i].kind != P4J_VOID &&
                 vals[i].kind != P4J_BOOL && vals[i].kind != P4J_INT &&
                 vals[i].kind != P4J_LONG && vals[i].kind != P4J_DOUBLE)
            any_ref = true;
    }
    if (nchars > 0x7fffffff)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: texts too long"));
    char *scratch = malloc(n * (sizeof(jlong) + 1) + nchars * sizeof(jchar) + 1);
    if (!scratch)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_MEMORY, "out of memory"));
    jlong *bits = (jlong *)scratch;
    jchar *chars = (jchar *)(bits + n);
    jbyte *kinds = (jbyte *)(chars + nchars);
    p4j_status st = P4J_ERROR;
    jobjectArray refs = NULL;
    if (any_ref && !(refs = (*env)->NewObjectArray(env, (jsize)n, p4j_jc.Object, NULL))) {
        p4j_jvm_capture_exception(env, err);
        goto done;
    }
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        const p4j_value *v = &vals[i];
        bits[i] = 0;
        switch (v->kind) {
        case P4J_NULL: case P4J_VOID: kinds[i] = 'n'; continue;
        case P4J_BOOL: kinds[i] = 'b'; bits[i] = v->u.b; continue;
        case P4J_INT: kinds[i] = 'i'; bits[i] = v->u.i; continue;
        case P4J_LONG: kinds[i] = 'L'; bits[i] = v->u.l; continue;
        case P4J_DOUBLE: kinds[i] = 'd'; memcpy(&bits[i], &v->u.d, sizeof(double)); continue;
        default: break;
        }
        if (packs_as_text(v)) {
            long units = to_utf16(&v->u.s, chars + pos);
            if (units < 0) {
                p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: a decimal's text is not ASCII");
                goto done;
            }
            kinds[i] = v->kind == P4J_DECIMAL ? 'D' : 's';
            bits[i] = units;
            pos += (size_t)units;
            continue;
        }
        jobject o = ref_object(env, v, err);
        if (!o)
            goto done;
        (*env)->SetObjectArrayElement(env, refs, (jsize)i, o);
        (*env)->DeleteLocalRef(env, o);
        if (p4j_jvm_failed(env, err))
            goto done;
        kinds[i] = 'r';
    }
    jbyteArray jkinds = (*env)->NewByteArray(env, (jsize)n);
    jlongArray jbits = jkinds ? (*env)->NewLongArray(env, (jsize)n) : NULL;
    jcharArray jchars = jbits ? (*env)->NewCharArray(env, (jsize)pos) : NULL;
    if (!jchars) {
        p4j_jvm_capture_exception(env, err);
        goto done;
    }
    (*env)->SetByteArrayRegion(env, jkinds, 0, (jsize)n, kinds);
    (*env)->SetLongArrayRegion(env, jbits, 0, (jsize)n, bits);
    if (pos)
        (*env)->SetCharArrayRegion(env, jchars, 0, (jsize)pos, chars);
    if (p4j_jvm_failed(env, err))
        goto done;
    jobject coll = (*env)->CallStaticObjectMethod(env, ids->Bulk, ids->Bulk_build, (jchar)kind,
                                                  jkinds, jbits, jchars, refs);
    if (p4j_jvm_failed(env, err))
        goto done;
    st = p4j_object_to_value(env, coll, out, err);
done:
    free(scratch);
    return p4j_inproc_leave(env, st);
}
