/* jni/jstrings.c - see jstrings.h. */
#include "jstrings.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "fault.h"
#include "jvm.h"
#include "jvm_classes.h"

#define STACK_UNITS 256
#define SHORT_UNITS 64 /* a Latin-1 string this short is widened on a small stack frame */

/* Decodes UTF-8 into UTF-16 `dst` (capacity >= len units). Returns the unit count,
 * or -1 on malformed input. */
static long utf8_to_utf16(const unsigned char *s, size_t len, jchar *dst)
{
    size_t i = 0, n = 0;
    while (i < len) {
        unsigned c = s[i];
        uint32_t cp;
        size_t extra;
        if (c < 0x80) { dst[n++] = (jchar)c; i++; continue; }
        if ((c & 0xE0) == 0xC0) { cp = c & 0x1F; extra = 1; }
        else if ((c & 0xF0) == 0xE0) { cp = c & 0x0F; extra = 2; }
        else if ((c & 0xF8) == 0xF0) { cp = c & 0x07; extra = 3; }
        else return -1;
        if (i + extra >= len)
            return -1; /* truncated sequence */
        for (size_t k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return -1;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        i += extra + 1;
        if (cp >= 0xD800 && cp <= 0xDFFF)
            return -1;
        if (cp >= 0x10000) {
            if (cp > 0x10FFFF)
                return -1;
            cp -= 0x10000;
            dst[n++] = (jchar)(0xD800 | (cp >> 10));
            dst[n++] = (jchar)(0xDC00 | (cp & 0x3FF));
        } else {
            dst[n++] = (jchar)cp;
        }
    }
    return (long)n;
}

/* p4j_widen_latin1, in line for p4j_jstring_new's short strings. */
static inline __attribute__((always_inline)) void widen(const unsigned char *p, size_t len,
                                                       jchar *dst)
{
    size_t i = 0;
#ifdef __SSE2__
    /* Whole blocks of 16, then the rest as one more block (8 or 4 for a short string)
     * that ends at the end and overlaps units already written with the same values: no
     * read or write outside the string and the buffer, no loop over the last units. */
    const __m128i zero = _mm_setzero_si128();
    if (len >= 16) {
        for (;; i += 16) {
            if (i + 16 > len)
                i = len - 16;
            __m128i bytes = _mm_loadu_si128((const __m128i *)(p + i));
            _mm_storeu_si128((__m128i *)(dst + i), _mm_unpacklo_epi8(bytes, zero));
            _mm_storeu_si128((__m128i *)(dst + i + 8), _mm_unpackhi_epi8(bytes, zero));
            if (i + 16 == len)
                return;
        }
    }
    if (len >= 8) {
        __m128i head = _mm_loadl_epi64((const __m128i *)p);
        __m128i tail = _mm_loadl_epi64((const __m128i *)(p + len - 8));
        _mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi8(head, zero));
        _mm_storeu_si128((__m128i *)(dst + len - 8), _mm_unpacklo_epi8(tail, zero));
        return;
    }
    if (len >= 4) {
        int32_t h, t;
        memcpy(&h, p, 4);
        memcpy(&t, p + len - 4, 4);
        _mm_storel_epi64((__m128i *)dst, _mm_unpacklo_epi8(_mm_cvtsi32_si128(h), zero));
        _mm_storel_epi64((__m128i *)(dst + len - 4),
                         _mm_unpacklo_epi8(_mm_cvtsi32_si128(t), zero));
        return;
    }
#endif
    for (; i < len; i++)
        dst[i] = p[i];
}

void p4j_widen_latin1(const unsigned char *p, size_t len, jchar *dst) { widen(p, len, dst); }

#define LATIN1_BYTES_MIN 512 /* from here a byte[] + new String(b, ISO_8859_1) is faster */

static jobject latin1_charset; /* global ref to ISO_8859_1, made on first use */

/* Returns the ISO_8859_1 Charset (a global ref), or NULL with err set. */
static jobject latin1(JNIEnv *env, p4j_error *err)
{
    jobject cs = __atomic_load_n(&latin1_charset, __ATOMIC_ACQUIRE);
    if (cs)
        return cs;
    jstring name = (*env)->NewStringUTF(env, "ISO-8859-1");
    if (p4j_jvm_failed(env, err))
        return NULL;
    jobject local = (*env)->CallStaticObjectMethod(env, p4j_jc.Charset, p4j_jc.Charset_forName, name);
    (*env)->DeleteLocalRef(env, name);
    if (p4j_jvm_failed(env, err))
        return NULL;
    jobject global = p4j_jvm_global_new(env, local);
    (*env)->DeleteLocalRef(env, local);
    jobject expected = NULL;
    if (!__atomic_compare_exchange_n(&latin1_charset, &expected, global, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        p4j_jvm_global_delete(env, global); /* another thread won the race */
        global = expected;
    }
    return global;
}

/* Long Latin-1 text: Java copies the bytes into its compact String as they are,
 * where NewString would take UTF-16 that we widen and Java narrows again. */
static jstring latin1_string(JNIEnv *env, const p4j_str *s, p4j_error *err)
{
    jobject cs = latin1(env, err);
    if (!cs)
        return NULL;
    jbyteArray bytes = (*env)->NewByteArray(env, (jsize)s->len);
    if (p4j_jvm_failed(env, err))
        return NULL;
    (*env)->SetByteArrayRegion(env, bytes, 0, (jsize)s->len, (const jbyte *)s->data);
    jstring out = (*env)->NewObject(env, p4j_jc.String, p4j_jc.String_newBytes, bytes, cs);
    (*env)->DeleteLocalRef(env, bytes);
    return p4j_jvm_failed(env, err) ? NULL : out;
}

/* p4j_jstring_new for any string but a short Latin-1 one. */
static __attribute__((noinline)) jstring jstring_new_general(JNIEnv *env, const p4j_str *s,
                                                             p4j_error *err)
{
    if (s->len > INT32_MAX) { /* a jsize would truncate it: refuse before any copy */
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: a string of %zu characters is too long "
                      "for a Java String (at most 2^31 - 1)", s->len);
        return NULL;
    }
    if (s->enc == P4J_ENC_LATIN1 && s->len >= LATIN1_BYTES_MIN)
        return latin1_string(env, s, err);
    if (s->enc == P4J_ENC_UTF16) {
        jstring out = (*env)->NewString(env, (const jchar *)s->data, (jsize)s->len);
        return p4j_jvm_alloc_failed(env, out, err) ? NULL : out;
    }
    jchar stack[STACK_UNITS];
    jchar *buf = stack;
    jsize n = 0;
    jstring out = NULL;
    size_t cap = s->enc == P4J_ENC_UCS4 ? 2 * s->len : s->len; /* upper bound in units */
    if (cap > STACK_UNITS && (P4J_FAULT("string.alloc") || !(buf = malloc(cap * sizeof(jchar))))) {
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory converting a string");
        return NULL;
    }
    switch (s->enc) {
    case P4J_ENC_LATIN1:
        p4j_widen_latin1(s->data, s->len, buf);
        n = (jsize)s->len;
        break;
    case P4J_ENC_UCS4: {
        const uint32_t *p = s->data;
        for (size_t i = 0; i < s->len; i++) {
            uint32_t cp = p[i];
            if (cp >= 0x10000) {
                cp -= 0x10000;
                buf[n++] = (jchar)(0xD800 | (cp >> 10));
                buf[n++] = (jchar)(0xDC00 | (cp & 0x3FF));
            } else {
                buf[n++] = (jchar)cp;
            }
        }
        break;
    }
    case P4J_ENC_UTF8: {
        long got = utf8_to_utf16(s->data, s->len, buf);
        if (got < 0) {
            p4j_error_set(err, P4J_ERR_BRIDGE, "string is not valid UTF-8");
            goto done;
        }
        n = (jsize)got;
        break;
    }
    default:
        p4j_error_set(err, P4J_ERR_BRIDGE, "unknown string encoding %d", (int)s->enc);
        goto done;
    }
    out = (*env)->NewString(env, buf, n);
    if (p4j_jvm_alloc_failed(env, out, err))
        out = NULL;
done:
    if (buf != stack)
        free(buf);
    return out;
}

jstring p4j_jstring_new(JNIEnv *env, const p4j_str *s, p4j_error *err)
{
    if (s->enc == P4J_ENC_LATIN1 && s->len <= SHORT_UNITS) { /* most arguments: a small frame */
        jchar buf[SHORT_UNITS];
        widen(s->data, s->len, buf);
        jstring out = (*env)->NewString(env, buf, (jsize)s->len);
        return p4j_jvm_alloc_failed(env, out, err) ? NULL : out;
    }
    return jstring_new_general(env, s, err);
}

p4j_status p4j_jstring_read(JNIEnv *env, jstring str, p4j_kind kind, p4j_value *out,
                            p4j_error *err)
{
    jsize len = (*env)->GetStringLength(env, str);
    jchar *dst = (jchar *)out->inl;
    out->owned = NULL;
    if ((size_t)len * sizeof(jchar) > sizeof out->inl) {
        dst = malloc((size_t)len * sizeof(jchar));
        if (!dst)
            return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory reading a string");
        out->owned = dst;
    }
    (*env)->GetStringRegion(env, str, 0, len, dst);
    out->kind = kind;
    out->u.s.data = dst;
    out->u.s.len = (size_t)len;
    out->u.s.enc = P4J_ENC_UTF16;
    return P4J_OK;
}

char *p4j_jstring_utf8(JNIEnv *env, jstring str)
{
    if (!str)
        return NULL;
    jsize len = (*env)->GetStringLength(env, str);
    jchar stack[STACK_UNITS];
    jchar *u = len <= STACK_UNITS ? stack : malloc((size_t)len * sizeof(jchar));
    char *out = u ? malloc((size_t)len * 3 + 1) : NULL;
    if (!out)
        goto done;
    (*env)->GetStringRegion(env, str, 0, len, u);
    size_t n = 0;
    for (jsize i = 0; i < len; i++) {
        uint32_t cp = u[i];
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < len && u[i + 1] >= 0xDC00 &&
            u[i + 1] <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (u[++i] - 0xDC00u);
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD; /* a lone surrogate cannot be UTF-8 */
        }
        if (cp < 0x80) {
            out[n++] = (char)cp;
        } else if (cp < 0x800) {
            out[n++] = (char)(0xC0 | (cp >> 6));
            out[n++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out[n++] = (char)(0xE0 | (cp >> 12));
            out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
            out[n++] = (char)(0xF0 | (cp >> 18));
            out[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
            out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    out[n] = '\0';
done:
    if (u != stack)
        free(u);
    return out;
}

jstring p4j_jstring_from_utf8(JNIEnv *env, const char *s, p4j_error *err)
{
    p4j_str str = {.data = s, .len = strlen(s), .enc = P4J_ENC_UTF8};
    return p4j_jstring_new(env, &str, err);
}
