/* bridge/inproc/inproc_convert.c - p4j_value <-> jvalue for the in-process transport. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inproc_internal.h"
#include "jstrings.h"
#include "jvm.h"
#include "jvm_classes.h"

p4j_status p4j_proxy_value_refused(p4j_error *err)
{
    return p4j_error_set(err, P4J_ERR_BRIDGE,
                         "py4jni: a socket-mode proxy value reached the in-process transport "
                         "(in-process, Python proxies arrive as the Java objects of their proxies)");
}

static p4j_status overflow(p4j_error *err, const p4j_value *v, const char *type)
{
    return p4j_error_set(err, P4J_ERR_BRIDGE,
                         "py4jni: integer %lld out of range for Java %s",
                         (long long)(v->kind == P4J_INT ? v->u.i : v->u.l), type);
}

static int64_t int_of(const p4j_value *v) { return v->kind == P4J_INT ? v->u.i : v->u.l; }

/* Range-checks an integral argument for the Java type with bounds [lo, hi]. */
#define CHECKED_INT(v, lo, hi, type)                       \
    do {                                                   \
        if (int_of(v) < (lo) || int_of(v) > (hi))          \
            return overflow(err, v, type);                 \
    } while (0)

/* Returns the first UTF-16 unit of a string argument, or -1 when it is empty. */
static long first_char(const p4j_value *v)
{
    const p4j_str *s = &v->u.s;
    if (s->len == 0)
        return -1;
    switch (s->enc) {
    case P4J_ENC_LATIN1: return ((const unsigned char *)s->data)[0];
    case P4J_ENC_UTF16: return ((const uint16_t *)s->data)[0];
    case P4J_ENC_UCS4: {
        uint32_t cp = ((const uint32_t *)s->data)[0];
        return cp >= 0x10000 ? -2 : (long)cp;
    }
    case P4J_ENC_UTF8: {
        const unsigned char *p = s->data;
        if (p[0] < 0x80) return p[0];
        if ((p[0] & 0xE0) == 0xC0 && s->len >= 2) return ((p[0] & 0x1F) << 6) | (p[1] & 0x3F);
        if ((p[0] & 0xF0) == 0xE0 && s->len >= 3)
            return ((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
        return -2;
    }
    }
    return -1;
}

static p4j_status char_arg(const p4j_value *v, jchar *out, p4j_error *err)
{
    if (v->kind != P4J_STRING) /* only a str has characters to read */
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: a %s cannot be a Java char",
                             p4j_key_python_name(p4j_arg_key(v)));
    long c = first_char(v);
    if (c == -1)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: an empty str cannot be a Java char");
    if (c == -2)
        return p4j_error_set(err, P4J_ERR_BRIDGE,
                             "py4jni: a character outside the BMP cannot be a Java char");
    *out = (jchar)c;
    return P4J_OK;
}

p4j_status p4j_check_length(size_t n, p4j_error *err)
{
    if (n <= INT32_MAX)
        return P4J_OK;
    return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: %zu bytes are too many for a Java "
                         "array (at most 2^31 - 1)", n);
}

/* A new byte[] holding the bytes of `v`, or NULL with err set. */
static jobject new_bytes(JNIEnv *env, const p4j_value *v, p4j_error *err)
{
    jbyteArray arr = (*env)->NewByteArray(env, (jsize)v->u.bytes.len);
    if (p4j_jvm_alloc_failed(env, arr, err))
        return NULL;
    if (v->u.bytes.len) /* within bounds: cannot throw */
        (*env)->SetByteArrayRegion(env, arr, 0, (jsize)v->u.bytes.len,
                                   (const jbyte *)v->u.bytes.data);
    return arr;
}

static jobject new_decimal(JNIEnv *env, const p4j_value *v, p4j_error *err)
{
    jclass cls;
    jmethodID ctor;
    if (p4j_jc_decimal(env, &cls, &ctor, err) != P4J_OK)
        return NULL;
    jstring text = p4j_jstring_new(env, &v->u.s, err);
    return text ? (*env)->NewObject(env, cls, ctor, text) : NULL;
}

/* Converts argument i of `m`, args[i] = *v, into *j: P4J_OK, else an error with no
 * reference made for this argument. */
static inline __attribute__((always_inline)) p4j_status
arg_to_java(JNIEnv *env, const p4jj_member *m, size_t i, const p4j_value *v, jvalue *j,
            p4j_error *err)
{
    jchar ch;
    switch ((p4j_conv)m->conv[i]) {
    case CONV_Z: j->z = (jboolean)v->u.b; break;
    case CONV_B: CHECKED_INT(v, -128, 127, "byte"); j->b = (jbyte)int_of(v); break;
    case CONV_C: if (char_arg(v, &j->c, err) != P4J_OK) return P4J_ERROR; break;
    case CONV_S: CHECKED_INT(v, -32768, 32767, "short"); j->s = (jshort)int_of(v); break;
    case CONV_I: j->i = (jint)v->u.i; break;
    case CONV_J: j->j = (jlong)int_of(v); break;
    case CONV_F: j->f = (jfloat)v->u.d; break;
    case CONV_D: j->d = v->u.d; break;
    case CONV_NULL: j->l = NULL; break;
    case CONV_REF: j->l = (jobject)v->ref.handle; break;
    case CONV_STRING:
        if (!(j->l = p4j_jstring_new(env, &v->u.s, err)))
            return P4J_ERROR;
        break;
    case CONV_BYTES:
        if (p4j_check_length(v->u.bytes.len, err) != P4J_OK ||
            !(j->l = new_bytes(env, v, err)))
            return P4J_ERROR;
        break;
    case CONV_DECIMAL:
        if (!(j->l = new_decimal(env, v, err)) && err->kind != P4J_ERR_NONE)
            return P4J_ERROR;
        break;
    case CONV_BOX_Z:
        j->l = (*env)->CallStaticObjectMethod(env, p4j_jc.Boolean, p4j_jc.Boolean_valueOf,
                                              (jboolean)v->u.b);
        break;
    case CONV_BOX_B:
        CHECKED_INT(v, -128, 127, "Byte");
        j->l = (*env)->CallStaticObjectMethod(env, p4j_jc.Byte, p4j_jc.Byte_valueOf,
                                              (jbyte)int_of(v));
        break;
    case CONV_BOX_C:
        if (char_arg(v, &ch, err) != P4J_OK)
            return P4J_ERROR;
        j->l = (*env)->CallStaticObjectMethod(env, p4j_jc.Character,
                                              p4j_jc.Character_valueOf, ch);
        break;
    case CONV_BOX_S:
        CHECKED_INT(v, -32768, 32767, "Short");
        j->l = (*env)->CallStaticObjectMethod(env, p4j_jc.Short, p4j_jc.Short_valueOf,
                                              (jshort)int_of(v));
        break;
    case CONV_BOX_I:
        j->l = (*env)->CallStaticObjectMethod(env, p4j_jc.Integer, p4j_jc.Integer_valueOf,
                                              (jint)v->u.i);
        break;
    case CONV_BOX_J:
        j->l = (*env)->CallStaticObjectMethod(env, p4j_jc.Long, p4j_jc.Long_valueOf,
                                              (jlong)int_of(v));
        break;
    case CONV_BOX_F:
        j->l = (*env)->CallStaticObjectMethod(env, p4j_jc.Float, p4j_jc.Float_valueOf,
                                              (jfloat)v->u.d);
        break;
    case CONV_BOX_D:
        j->l = (*env)->CallStaticObjectMethod(env, p4j_jc.Double, p4j_jc.Double_valueOf,
                                              v->u.d);
        break;
    case CONV_PROXY:
        return p4j_proxy_value_refused(err);
    case CONV_INVALID: /* planning refuses these; never read a value of another kind */
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: a %s cannot be argument %zu",
                             p4j_key_python_name(p4j_arg_key(v)), i);
    }
    /* A conversion that called Java (boxes, BigDecimal) is checked here; STRING and
     * BYTES only allocate, and a result that is not NULL means no exception. */
    if (m->conv[i] > CONV_BYTES && (*env)->ExceptionCheck(env))
        return p4j_jvm_capture_exception(env, err);
    return P4J_OK;
}

p4j_status p4j_args_to_java(JNIEnv *env, const p4jj_member *m, const p4j_value *args,
                            jvalue *jargs, p4j_error *err)
{
    for (size_t i = 0; i < m->nargs; i++) {
        p4j_status st = arg_to_java(env, m, i, &args[i], &jargs[i], err);
        if (__builtin_expect(st != P4J_OK, 0)) {
            p4j_args_drop(env, m, jargs, i);
            return st;
        }
    }
    return P4J_OK;
}

/* Sets `out` to a global ref of `obj` with its class cached. */
static p4j_status as_ref(JNIEnv *env, jobject obj, p4j_kind kind, p4jj_class *pc,
                         p4j_value *out, p4j_error *err)
{
    out->kind = kind;
    out->ref.handle = p4j_jvm_global_new(env, obj);
    out->ref.cls = pc;
    if (!out->ref.handle)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of JNI global references");
    return P4J_OK;
}

const char p4j_bytes_local_tag = 'l';

/* A byte[] result: `arr` itself with `local_bytes` (see p4j_result_from_java), else a new
 * global reference, consumed by read_bytes. */
static p4j_status bytes_result(JNIEnv *env, jobject arr, bool local_bytes, p4j_value *out,
                               p4j_error *err)
{
    if (local_bytes) {
        p4j_bytes_local(env, arr, out);
        return P4J_OK;
    }
    out->kind = P4J_BYTES;
    out->u.bytes.data = NULL;
    out->u.bytes.len = (size_t)(*env)->GetArrayLength(env, arr);
    out->ref.cls = NULL;
    out->ref.handle = p4j_jvm_global_new(env, arr); /* consumed by read_bytes */
    if (!out->ref.handle)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of JNI global references");
    return P4J_OK;
}

static p4j_status string_result(JNIEnv *env, jobject str, p4j_kind kind, p4j_value *out,
                                p4j_error *err)
{
    return p4j_jstring_read(env, (jstring)str, kind, out, err);
}

static void char_result(jchar c, p4j_value *out)
{
    p4j_value_set_string(out, P4J_STRING, &c, 1, P4J_ENC_UTF16); /* fits inline */
}

p4j_status p4j_object_to_value(JNIEnv *env, jobject obj, p4j_value *out, p4j_error *err)
{
    if (!obj) {
        out->kind = P4J_NULL;
        return P4J_OK;
    }
    p4jj_class *pc = p4jj_class_of(env, obj, err);
    return pc ? p4j_object_of_class(env, obj, pc, out, err) : P4J_ERROR;
}

/* Returns the class of a method's object result, using what `m` knows. */
static p4jj_class *result_class(JNIEnv *env, p4jj_member *m, jobject obj, p4j_error *err)
{
    if (m->ret_cls)
        return m->ret_cls;
    jclass cls = (*env)->GetObjectClass(env, obj);
    p4jj_class *last = __atomic_load_n(&m->last_cls, __ATOMIC_ACQUIRE);
    p4jj_class *pc = last && (*env)->IsSameObject(env, cls, last->cls) ? last
                                                                      : p4jj_class_get(env, cls, err);
    (*env)->DeleteLocalRef(env, cls);
    if (pc && pc != last)
        __atomic_store_n(&m->last_cls, pc, __ATOMIC_RELEASE);
    return pc;
}

/* p4j_object_of_class; `local_bytes`: see p4j_result_from_java. */
static p4j_status object_of_class(JNIEnv *env, jobject obj, p4jj_class *pc, bool local_bytes,
                                  p4j_value *out, p4j_error *err)
{
    switch (pc->role) {
    case 's': return string_result(env, obj, P4J_STRING, out, err);
    case 'j': return bytes_result(env, obj, local_bytes, out, err);
    case 'i':
        out->kind = P4J_INT;
        out->u.i = (int32_t)(*env)->CallLongMethod(env, obj, p4j_jc.Number_long);
        break;
    case 'L':
        out->kind = P4J_LONG;
        out->u.l = (*env)->CallLongMethod(env, obj, p4j_jc.Number_long);
        break;
    case 'd':
        out->kind = P4J_DOUBLE;
        if ((*env)->IsInstanceOf(env, obj, p4j_jc.Float))
            out->u.d = p4j_float_as_printed((*env)->CallFloatMethod(env, obj, p4j_jc.Number_float));
        else
            out->u.d = (*env)->CallDoubleMethod(env, obj, p4j_jc.Number_double);
        break;
    case 'b':
        out->kind = P4J_BOOL;
        out->u.b = (*env)->CallBooleanMethod(env, obj, p4j_jc.Boolean_value);
        break;
    case 'c':
        char_result((*env)->CallCharMethod(env, obj, p4j_jc.Character_value), out);
        break;
    case 'D': {
        jstring text = (*env)->CallObjectMethod(env, obj, p4j_jc.Object_toString);
        if (p4j_jvm_failed(env, err))
            return P4J_ERROR;
        p4j_status st = string_result(env, text, P4J_DECIMAL, out, err);
        (*env)->DeleteLocalRef(env, text);
        return st;
    }
    case 'l': return as_ref(env, obj, P4J_LIST, pc, out, err);
    case 'h': return as_ref(env, obj, P4J_SET, pc, out, err);
    case 'a': return as_ref(env, obj, P4J_MAP, pc, out, err);
    case 'g': return as_ref(env, obj, P4J_ITERATOR, pc, out, err);
    case 't': return as_ref(env, obj, P4J_ARRAY, pc, out, err);
    default: return as_ref(env, obj, P4J_REF, pc, out, err);
    }
    return p4j_jvm_capture_exception(env, err) == P4J_OK ? P4J_OK : P4J_ERROR;
}

p4j_status p4j_object_of_class(JNIEnv *env, jobject obj, p4jj_class *pc, p4j_value *out,
                               p4j_error *err)
{
    if (pc->role == 'r') /* a plain object (most constructors): no switch */
        return as_ref(env, obj, P4J_REF, pc, out, err);
    return object_of_class(env, obj, pc, false, out, err);
}

bool p4j_jvm_floats_as_printed(const float *src, double *dst, size_t n)
{
    static jmethodID print;
    JNIEnv *env = p4j_jvm_env_or_null();
    if (!env || n > INT32_MAX || (*env)->ExceptionCheck(env))
        return false; /* never over a pending exception */
    jmethodID m = __atomic_load_n(&print, __ATOMIC_ACQUIRE);
    if (!m) {
        m = (*env)->GetStaticMethodID(env, p4j_jc.Bridge, "floatsAsPrinted", "([F)[D");
        if (!m) {
            (*env)->ExceptionClear(env);
            return false;
        }
        __atomic_store_n(&print, m, __ATOMIC_RELEASE);
    }
    if ((*env)->PushLocalFrame(env, 4) != 0) {
        (*env)->ExceptionClear(env);
        return false;
    }
    bool ok = false;
    jfloatArray fs = (*env)->NewFloatArray(env, (jsize)n);
    if (fs) {
        (*env)->SetFloatArrayRegion(env, fs, 0, (jsize)n, src);
        jdoubleArray ds = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, m, fs);
        if (ds && !(*env)->ExceptionCheck(env)) {
            (*env)->GetDoubleArrayRegion(env, ds, 0, (jsize)n, dst);
            ok = true;
        }
    }
    (*env)->ExceptionClear(env);
    (*env)->PopLocalFrame(env, NULL);
    return ok;
}

p4j_status p4j_result_from_java(JNIEnv *env, p4j_rconv rconv, p4jj_member *m, jvalue rv,
                                bool local_bytes, p4j_value *out, p4j_error *err)
{
    if (p4j_scalar_result(rconv, rv, out))
        return P4J_OK;
    switch (rconv) {
    case RCONV_C: char_result(rv.c, out); return P4J_OK;
    case RCONV_F: out->kind = P4J_DOUBLE; out->u.d = p4j_float_as_printed(rv.f); return P4J_OK;
    case RCONV_STRING:
        if (!rv.l) {
            out->kind = P4J_NULL;
            return P4J_OK;
        }
        return string_result(env, rv.l, P4J_STRING, out, err);
    case RCONV_BYTES:
        if (!rv.l) {
            out->kind = P4J_NULL;
            return P4J_OK;
        }
        return bytes_result(env, rv.l, local_bytes, out, err);
    case RCONV_OBJECT: {
        if (!rv.l || !m)
            return p4j_object_to_value(env, rv.l, out, err);
        p4jj_class *pc = result_class(env, m, rv.l, err);
        return pc ? object_of_class(env, rv.l, pc, local_bytes, out, err) : P4J_ERROR;
    }
    default: /* the scalar results, handled above */
        break;
    }
    return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: bad result conversion %d", (int)rconv);
}
