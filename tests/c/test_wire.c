/* tests/c/test_wire.c - the py4j wire codec (bridge/socket/wire.h) without a server:
 * argument encoding for every kind, escaping, base64, answer decoding for every
 * prefix, and malformed or truncated answers. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire.h"

/* ---- helpers ---------------------------------------------------------------------- */

/* Encodes one argument and returns the text (static buffer, NUL-terminated). */
static const char *enc(const p4j_value *v)
{
    static char out[4096];
    p4j_wbuf b;
    p4j_error err = {0};
    p4j_wbuf_init(&b);
    assert_int_equal(p4j_wire_arg(&b, v, NULL, NULL, &err), P4J_OK);
    assert_false(b.oom);
    assert_true(b.len < sizeof out);
    memcpy(out, b.data, b.len);
    out[b.len] = 0;
    p4j_wbuf_free(&b);
    return out;
}

static p4j_value mk(p4j_kind kind)
{
    p4j_value v;
    memset(&v, 0, sizeof v);
    v.kind = kind;
    return v;
}

static p4j_value mkstr(const void *data, size_t len, p4j_enc e)
{
    p4j_value v = mk(P4J_STRING);
    v.u.s.data = data;
    v.u.s.len = len;
    v.u.s.enc = e;
    return v;
}

/* Decodes a NUL-terminated answer (copied so the decoder may not read past it). */
static p4j_answer dec(const char *line, p4j_value *out, p4j_error *err)
{
    size_t n = strlen(line);
    char *copy = malloc(n ? n : 1);
    memcpy(copy, line, n);
    p4j_answer a = p4j_wire_decode(copy, n, NULL, out, err);
    /* the value must not point into the line when no block was offered */
    memset(copy, '#', n);
    free(copy);
    return a;
}

static void drop(p4j_value *v)
{
    p4j_value_clear(v);
    free(v->ref.handle);
    v->ref.handle = NULL;
}

static void expect_malformed(const char *line)
{
    p4j_value v;
    p4j_error err = {0};
    p4j_answer a = dec(line, &v, &err);
    if (a != P4J_ANSWER_MALFORMED)
        fail_msg("\"%s\" decoded as answer %d, expected malformed", line, (int)a);
    assert_int_equal(v.kind, P4J_NULL);
    assert_null(v.owned);
    assert_null(v.ref.handle);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(err.message);
    p4j_error_clear(NULL, &err);
}

/* ---- encoding ----------------------------------------------------------------------- */

static void test_encode_scalars(void **state)
{
    (void)state;
    p4j_value v = mk(P4J_NULL);
    assert_string_equal(enc(&v), "n\n");
    v = mk(P4J_BOOL);
    v.u.b = true;
    assert_string_equal(enc(&v), "btrue\n");
    v.u.b = false;
    assert_string_equal(enc(&v), "bfalse\n");
    v = mk(P4J_INT);
    v.u.i = 0;
    assert_string_equal(enc(&v), "i0\n");
    v.u.i = INT32_MIN;
    assert_string_equal(enc(&v), "i-2147483648\n");
    v.u.i = INT32_MAX;
    assert_string_equal(enc(&v), "i2147483647\n");
    v = mk(P4J_LONG);
    v.u.l = INT64_MIN;
    assert_string_equal(enc(&v), "L-9223372036854775808\n");
    v.u.l = INT64_MAX;
    assert_string_equal(enc(&v), "L9223372036854775807\n");
    v = mk(P4J_DECIMAL);
    v.u.s.data = "1.50";
    v.u.s.len = 4;
    v.u.s.enc = P4J_ENC_UTF8;
    assert_string_equal(enc(&v), "D1.50\n");
}

static void test_encode_doubles(void **state)
{
    (void)state;
    static const struct {
        double d;
        const char *text;
    } cases[] = {
        {0.1, "d0.1\n"},      {-0.0, "d-0.0\n"},        {0.0, "d0.0\n"},
        {42.0, "d42.0\n"},    {1e300, "d1e+300\n"},     {1.0 / 3, "d0.3333333333333333\n"},
        {0.1 + 0.2, "d0.30000000000000004\n"}, {-2.5, "d-2.5\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        p4j_value v = mk(P4J_DOUBLE);
        v.u.d = cases[i].d;
        assert_string_equal(enc(&v), cases[i].text);
    }
    p4j_value v = mk(P4J_DOUBLE);
    v.u.d = INFINITY;
    assert_string_equal(enc(&v), "dInfinity\n");
    v.u.d = -INFINITY;
    assert_string_equal(enc(&v), "d-Infinity\n");
    v.u.d = NAN;
    assert_string_equal(enc(&v), "dNaN\n");
}

/* Every double written must read back bit for bit (random bit patterns). */
static void test_double_round_trip(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        if (i % 3 == 0)
            d = (double)(x % 1000000) / 1000.0; /* everyday values too */
        char text[32];
        size_t n = p4j_wire_format_double(d, text);
        assert_int_equal(n, strlen(text));
        char line[40];
        snprintf(line, sizeof line, "!yd%s", text);
        p4j_value v;
        p4j_error err = {0};
        assert_int_equal(dec(line, &v, &err), P4J_ANSWER_VALUE);
        assert_int_equal(v.kind, P4J_DOUBLE);
        if (isnan(d))
            assert_true(isnan(v.u.d));
        else
            assert_memory_equal(&v.u.d, &d, sizeof d);
    }
}

static void test_encode_strings(void **state)
{
    (void)state;
    /* UTF-8: only backslash, LF and CR are escaped; NUL and emoji pass as UTF-8. */
    static const char u8[] = "a\\b\nc\rd\0e\xF0\x9F\x98\x80\t";
    p4j_value v = mkstr(u8, sizeof u8 - 1, P4J_ENC_UTF8);
    char expect[64];
    static const char want[] = "sa\\\\b\\nc\\rd\0e\xF0\x9F\x98\x80\t\n";
    p4j_wbuf b;
    p4j_error err = {0};
    p4j_wbuf_init(&b);
    assert_int_equal(p4j_wire_arg(&b, &v, NULL, NULL, &err), P4J_OK);
    assert_int_equal(b.len, sizeof want - 1);
    assert_memory_equal(b.data, want, sizeof want - 1);

    /* Latin-1 bytes become two-byte UTF-8. */
    static const unsigned char l1[] = {'x', 0xE9, '\\', 0xFF, '\n'};
    p4j_wbuf_reset(&b);
    v = mkstr(l1, sizeof l1, P4J_ENC_LATIN1);
    assert_int_equal(p4j_wire_arg(&b, &v, NULL, NULL, &err), P4J_OK);
    snprintf(expect, sizeof expect, "sx\xC3\xA9\\\\\xC3\xBF\\n\n");
    assert_int_equal(b.len, strlen(expect));
    assert_memory_equal(b.data, expect, b.len);

    /* UTF-16 with a surrogate pair and a 3-byte character. */
    static const uint16_t u16[] = {'a', 0xD83D, 0xDE00, 0x20AC, '\r'};
    p4j_wbuf_reset(&b);
    v = mkstr(u16, 5, P4J_ENC_UTF16);
    assert_int_equal(p4j_wire_arg(&b, &v, NULL, NULL, &err), P4J_OK);
    snprintf(expect, sizeof expect, "sa\xF0\x9F\x98\x80\xE2\x82\xAC\\r\n");
    assert_int_equal(b.len, strlen(expect));
    assert_memory_equal(b.data, expect, b.len);

    /* UCS-4 */
    static const uint32_t u32[] = {0x1F600, 'z', 0, 0x7FF, 0x800};
    p4j_wbuf_reset(&b);
    v = mkstr(u32, 5, P4J_ENC_UCS4);
    assert_int_equal(p4j_wire_arg(&b, &v, NULL, NULL, &err), P4J_OK);
    static const char want4[] = "s\xF0\x9F\x98\x80z\0\xDF\xBF\xE0\xA0\x80\n";
    assert_int_equal(b.len, sizeof want4 - 1);
    assert_memory_equal(b.data, want4, b.len);

    /* empty string */
    p4j_wbuf_reset(&b);
    v = mkstr("", 0, P4J_ENC_UTF8);
    assert_int_equal(p4j_wire_arg(&b, &v, NULL, NULL, &err), P4J_OK);
    assert_int_equal(b.len, 2);
    assert_memory_equal(b.data, "s\n", 2);
    p4j_wbuf_free(&b);
}

static void test_encode_bad_strings(void **state)
{
    (void)state;
    p4j_wbuf b;
    p4j_wbuf_init(&b);
    static const uint16_t lone_hi[] = {'a', 0xD800};
    static const uint16_t lone_lo[] = {0xDC00, 'a'};
    static const uint16_t reversed[] = {0xDE00, 0xD83D};
    static const uint32_t big[] = {0x110000};
    static const uint32_t sur[] = {0xDFFF};
    p4j_value bad[] = {
        mkstr(lone_hi, 2, P4J_ENC_UTF16), mkstr(lone_lo, 2, P4J_ENC_UTF16),
        mkstr(reversed, 2, P4J_ENC_UTF16), mkstr(big, 1, P4J_ENC_UCS4),
        mkstr(sur, 1, P4J_ENC_UCS4),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p4j_error err = {0};
        p4j_wbuf_reset(&b);
        assert_int_equal(p4j_wire_arg(&b, &bad[i], NULL, NULL, &err), P4J_ERROR);
        assert_int_equal(err.kind, P4J_ERR_BRIDGE);
        assert_non_null(err.message);
        p4j_error_clear(NULL, &err);
    }
    p4j_wbuf_free(&b);
}

static void test_encode_bytes_refs_proxies(void **state)
{
    (void)state;
    static const uint8_t raw[] = {0, 1, 2, 3, 0xFF};
    p4j_value v = mk(P4J_BYTES);
    v.u.bytes.data = raw;
    v.u.bytes.len = 0;
    assert_string_equal(enc(&v), "j\n");
    v.u.bytes.len = 4;
    assert_string_equal(enc(&v), "jAAECAw==\n");
    v.u.bytes.len = 5;
    assert_string_equal(enc(&v), "jAAECA/8=\n");

    static const p4j_kind refs[] = {P4J_REF, P4J_LIST, P4J_SET, P4J_MAP, P4J_ARRAY,
                                    P4J_ITERATOR};
    for (size_t i = 0; i < 6; i++) {
        v = mk(refs[i]);
        v.ref.handle = "o42";
        assert_string_equal(enc(&v), "ro42\n");
    }
    v = mk(P4J_PROXY);
    v.u.proxy = "p0;java.lang.Runnable";
    assert_string_equal(enc(&v), "fp0;java.lang.Runnable\n");
}

static int proxy_cb(void *ctx, void *proxy, p4j_wbuf *out)
{
    int *calls = ctx;
    (*calls)++;
    if (!proxy)
        return -1;
    p4j_wbuf_put(out, "p7;java.util.Comparator", 23);
    return 0;
}

static void test_encode_proxy_callback_and_refusals(void **state)
{
    (void)state;
    int calls = 0;
    p4j_wbuf b;
    p4j_error err = {0};
    p4j_wbuf_init(&b);
    p4j_value v = mk(P4J_PROXY);
    v.u.proxy = &calls;
    assert_int_equal(p4j_wire_arg(&b, &v, proxy_cb, &calls, &err), P4J_OK);
    assert_int_equal(b.len, 25);
    assert_memory_equal(b.data, "fp7;java.util.Comparator\n", 25);
    v.u.proxy = NULL;
    assert_int_equal(p4j_wire_arg(&b, &v, proxy_cb, &calls, &err), P4J_ERROR);
    assert_int_equal(calls, 2);
    p4j_error_clear(NULL, &err);

    static const p4j_kind refused[] = {P4J_VOID, P4J_CLASS, P4J_PACKAGE, P4J_METHOD};
    for (size_t i = 0; i < 4; i++) {
        v = mk(refused[i]);
        assert_int_equal(p4j_wire_arg(&b, &v, NULL, NULL, &err), P4J_ERROR);
        assert_int_equal(err.kind, P4J_ERR_BRIDGE);
        p4j_error_clear(NULL, &err);
    }
    v = mk(P4J_REF); /* released ref */
    assert_int_equal(p4j_wire_arg(&b, &v, NULL, NULL, &err), P4J_ERROR);
    p4j_error_clear(NULL, &err);
    p4j_wbuf_free(&b);
}

static void test_encode_command(void **state)
{
    (void)state;
    p4j_wbuf b;
    p4j_error err = {0};
    p4j_wbuf_init(&b);
    p4j_wire_cpart(&b, "c");
    p4j_wire_cpart(&b, "o12");
    p4j_wire_part(&b, "appendXX", 6);
    p4j_value s = mkstr("hi", 2, P4J_ENC_UTF8);
    p4j_value i = mk(P4J_INT);
    i.u.i = 42;
    assert_int_equal(p4j_wire_arg(&b, &s, NULL, NULL, &err), P4J_OK);
    assert_int_equal(p4j_wire_arg(&b, &i, NULL, NULL, &err), P4J_OK);
    p4j_wire_end(&b);
    static const char want[] = "c\no12\nappend\nshi\ni42\ne\n";
    assert_int_equal(b.len, sizeof want - 1);
    assert_memory_equal(b.data, want, b.len);
    assert_false(b.invalid);

    /* a raw part with a line break would inject protocol lines: refused */
    p4j_wbuf_reset(&b);
    p4j_wire_cpart(&b, "evil\ne\nc");
    assert_true(b.invalid);
    assert_int_equal(b.len, 0);
    p4j_wbuf_reset(&b);
    p4j_wire_part(&b, "x\r", 2);
    assert_true(b.invalid);

    /* escaped parts (import patterns, view names) */
    p4j_wbuf_reset(&b);
    p4j_wire_escaped_part(&b, "a\nb\\", 4);
    assert_int_equal(b.len, 7);
    assert_memory_equal(b.data, "a\\nb\\\\\n", 7);
    p4j_wbuf_free(&b);
}

/* ---- base64 ---------------------------------------------------------------------- */

static void test_base64_vectors(void **state)
{
    (void)state;
    static const char *vec[][2] = {
        {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},       {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < 7; i++) {
        size_t n = strlen(vec[i][0]);
        char out[16];
        assert_int_equal(p4j_base64_encoded_len(n), strlen(vec[i][1]));
        assert_int_equal(p4j_base64_encode((const uint8_t *)vec[i][0], n, out),
                         strlen(vec[i][1]));
        assert_memory_equal(out, vec[i][1], strlen(vec[i][1]));
        uint8_t back[16];
        size_t dl;
        assert_int_equal(p4j_base64_decoded_len(vec[i][1], strlen(vec[i][1]), &dl), 0);
        assert_int_equal(dl, n);
        assert_int_equal(p4j_base64_decode(vec[i][1], strlen(vec[i][1]), back), (long long)n);
        assert_memory_equal(back, vec[i][0], n);
    }
}

static void test_base64_round_trip(void **state)
{
    (void)state;
    uint8_t src[1100], back[1100];
    char text[1500];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 131 + (i >> 3));
    for (size_t n = 0; n <= 1030; n++) {
        size_t tl = p4j_base64_encode(src, n, text);
        assert_int_equal(tl, p4j_base64_encoded_len(n));
        memset(back, 0xAA, sizeof back);
        assert_int_equal(p4j_base64_decode(text, tl, back), (long long)n);
        assert_memory_equal(back, src, n);
        assert_int_equal(back[n], 0xAA); /* wrote exactly n bytes */
    }
    /* all 256 byte values */
    for (int i = 0; i < 256; i++)
        src[i] = (uint8_t)i;
    size_t tl = p4j_base64_encode(src, 256, text);
    assert_int_equal(p4j_base64_decode(text, tl, back), 256);
    assert_memory_equal(back, src, 256);
}

static void test_base64_invalid(void **state)
{
    (void)state;
    static const char *bad[] = {"A", "AB", "ABC", "ABCDE", "A===", "====", "=AAA", "AA=A",
                                "A=AA", "AB C", "AB-_", "ABC\x80", "Zg==Zg==", "Zm9v\n",
                                "AB\0D"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n = i == 14 ? 4 : strlen(bad[i]);
        uint8_t out[16];
        assert_int_equal(p4j_base64_decode(bad[i], n, out), -1);
    }
}

/* ---- decoding ------------------------------------------------------------------------ */

static void test_decode_scalars(void **state)
{
    (void)state;
    p4j_value v;
    p4j_error err = {0};
    assert_int_equal(dec("!yn", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_NULL);
    assert_int_equal(dec("!yv", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_VOID);
    assert_int_equal(dec("!ybtrue", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_BOOL);
    assert_true(v.u.b);
    assert_int_equal(dec("!ybfalse", &v, &err), P4J_ANSWER_VALUE);
    assert_false(v.u.b);
    assert_int_equal(dec("!ybTrue", &v, &err), P4J_ANSWER_VALUE); /* any case, as py4j */
    assert_true(v.u.b);
    assert_int_equal(dec("!ybFALSE", &v, &err), P4J_ANSWER_VALUE);
    assert_false(v.u.b);
    assert_int_equal(dec("!yi-5", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_INT);
    assert_int_equal(v.u.i, -5);
    assert_int_equal(dec("!yi2147483647", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.u.i, INT32_MAX);
    assert_int_equal(dec("!yi-2147483648", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.u.i, INT32_MIN);
    assert_int_equal(dec("!yL-9223372036854775808", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_LONG);
    assert_true(v.u.l == INT64_MIN);
    assert_int_equal(dec("!yL9223372036854775807", &v, &err), P4J_ANSWER_VALUE);
    assert_true(v.u.l == INT64_MAX);
    assert_int_equal(dec("!yL1796035585611", &v, &err), P4J_ANSWER_VALUE);
    assert_true(v.u.l == 1796035585611LL);
    assert_int_equal(dec("!yd1.4142135623730951", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_DOUBLE);
    assert_true(v.u.d == 1.4142135623730951);
    assert_int_equal(dec("!yd1.0E300", &v, &err), P4J_ANSWER_VALUE); /* Java's form */
    assert_true(v.u.d == 1e300);
    assert_int_equal(dec("!yd1.0E-320", &v, &err), P4J_ANSWER_VALUE);
    assert_true(v.u.d == 1e-320);
    assert_int_equal(dec("!yd-0.0", &v, &err), P4J_ANSWER_VALUE);
    assert_true(v.u.d == 0 && signbit(v.u.d));
    assert_int_equal(dec("!ydNaN", &v, &err), P4J_ANSWER_VALUE);
    assert_true(isnan(v.u.d));
    assert_int_equal(dec("!ydInfinity", &v, &err), P4J_ANSWER_VALUE);
    assert_true(isinf(v.u.d) && v.u.d > 0);
    assert_int_equal(dec("!yd-Infinity", &v, &err), P4J_ANSWER_VALUE);
    assert_true(isinf(v.u.d) && v.u.d < 0);
    /* Python's float() spellings, which py4j's client reads too */
    assert_int_equal(dec("!ydinf", &v, &err), P4J_ANSWER_VALUE);
    assert_true(isinf(v.u.d) && v.u.d > 0);
    assert_int_equal(dec("!yd-INF", &v, &err), P4J_ANSWER_VALUE);
    assert_true(isinf(v.u.d) && v.u.d < 0);
    assert_int_equal(dec("!yd+infinity", &v, &err), P4J_ANSWER_VALUE);
    assert_true(isinf(v.u.d) && v.u.d > 0);
    assert_int_equal(dec("!ydnan", &v, &err), P4J_ANSWER_VALUE);
    assert_true(isnan(v.u.d));
    assert_int_equal(dec("!yd-NaN", &v, &err), P4J_ANSWER_VALUE);
    assert_true(isnan(v.u.d));
    assert_int_equal(dec("!yD1.50", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_DECIMAL);
    assert_int_equal(v.u.s.len, 4);
    assert_memory_equal(v.u.s.data, "1.50", 4);
    drop(&v);
    assert_int_equal(err.kind, P4J_ERR_NONE);
}

static void test_decode_strings(void **state)
{
    (void)state;
    p4j_value v;
    p4j_error err = {0};
    assert_int_equal(dec("!ys", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_STRING);
    assert_int_equal(v.u.s.len, 0);
    drop(&v);
    /* escapes, and a NUL in the middle (decoded with an explicit length) */
    static const char line[] = "!ys\\\\a\0b\\r\xF0\x9F\x98\x80\\n\\\\n";
    static const char want[] = "\\a\0b\r\xF0\x9F\x98\x80\n\\n";
    char copy[sizeof line];
    memcpy(copy, line, sizeof line);
    assert_int_equal(p4j_wire_decode(copy, sizeof line - 1, NULL, &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.u.s.enc, P4J_ENC_UTF8);
    assert_int_equal(v.u.s.len, sizeof want - 1);
    assert_memory_equal(v.u.s.data, want, sizeof want - 1);
    drop(&v);
    /* long strings go to the heap */
    char big[300] = "!ys";
    memset(big + 3, 'q', 200);
    big[203] = 0;
    assert_int_equal(dec(big, &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.u.s.len, 200);
    assert_non_null(v.owned);
    drop(&v);
}

/* Encoding then decoding any string gives it back. */
static void test_string_round_trip(void **state)
{
    (void)state;
    static const char *samples[] = {"", "plain", "\\", "\\\\", "\n", "\r\n", "\\n",
                                    "end\\", "a\nb\rc\\d", "\xE2\x82\xAC\xF0\x9F\x98\x80"};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        p4j_wbuf b;
        p4j_error err = {0};
        p4j_wbuf_init(&b);
        p4j_wbuf_put(&b, "!y", 2);
        p4j_value s = mkstr(samples[i], strlen(samples[i]), P4J_ENC_UTF8);
        assert_int_equal(p4j_wire_arg(&b, &s, NULL, NULL, &err), P4J_OK);
        p4j_value v;
        assert_int_equal(p4j_wire_decode(b.data, b.len - 1, NULL, &v, &err), P4J_ANSWER_VALUE);
        assert_int_equal(v.u.s.len, strlen(samples[i]));
        assert_memory_equal(v.u.s.data, samples[i], v.u.s.len);
        drop(&v);
        p4j_wbuf_free(&b);
    }
}

static void test_decode_bytes(void **state)
{
    (void)state;
    p4j_value v;
    p4j_error err = {0};
    uint8_t out[8] = {9, 9, 9, 9, 9, 9, 9, 9};
    assert_int_equal(dec("!yjAAAAAAA=", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_BYTES);
    assert_int_equal(v.u.bytes.len, 5);
    assert_int_equal(p4j_wire_read_bytes(&v, out, &err), P4J_OK);
    static const uint8_t zeros[5] = {0};
    assert_memory_equal(out, zeros, 5);
    assert_int_equal(out[5], 9);
    drop(&v);

    assert_int_equal(dec("!yj", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.u.bytes.len, 0);
    assert_int_equal(p4j_wire_read_bytes(&v, out, &err), P4J_OK);
    drop(&v);

    /* valid length and padding, invalid character: found when reading */
    assert_int_equal(dec("!yjAA*A", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(p4j_wire_read_bytes(&v, out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    p4j_error_clear(NULL, &err);
    drop(&v);

    /* reading a value of another kind is refused */
    assert_int_equal(dec("!yi1", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(p4j_wire_read_bytes(&v, out, &err), P4J_ERROR);
    p4j_error_clear(NULL, &err);
}

static void test_decode_refs(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        p4j_kind kind;
    } cases[] = {{"!yro0", P4J_REF},  {"!ylo12", P4J_LIST},    {"!yho8", P4J_SET},
                 {"!yao7", P4J_MAP},  {"!yto3", P4J_ARRAY},    {"!ygo99", P4J_ITERATOR}};
    for (size_t i = 0; i < 6; i++) {
        p4j_value v;
        p4j_error err = {0};
        assert_int_equal(dec(cases[i].line, &v, &err), P4J_ANSWER_VALUE);
        assert_int_equal(v.kind, cases[i].kind);
        assert_string_equal(v.ref.handle, cases[i].line + 3);
        assert_null(v.ref.cls);
        assert_true(p4j_kind_has_ref(v.kind));
        drop(&v);
    }
    p4j_value v;
    p4j_error err = {0};
    assert_int_equal(dec("!yfp3;java.lang.Runnable", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_PROXY);
    assert_string_equal(v.u.proxy, "p3;java.lang.Runnable");
    drop(&v);
}

static void test_decode_reflection_answers(void **state)
{
    (void)state;
    p4j_value v;
    p4j_error err = {0};
    assert_int_equal(dec("!ycjava.util.ArrayList", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_CLASS);
    assert_int_equal(v.u.s.len, 19);
    assert_memory_equal(v.u.s.data, "java.util.ArrayList", 19);
    assert_string_equal(v.ref.handle, "java.util.ArrayList");
    assert_ptr_equal(v.ref.cls, p4j_wire_class_tag);
    drop(&v);
    assert_int_equal(dec("!yc", &v, &err), P4J_ANSWER_VALUE); /* "r m" nested class */
    assert_int_equal(v.kind, P4J_CLASS);
    assert_int_equal(v.u.s.len, 0);
    drop(&v);
    assert_int_equal(dec("!yp", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_PACKAGE);
    assert_int_equal(dec("!ym", &v, &err), P4J_ANSWER_VALUE);
    assert_int_equal(v.kind, P4J_METHOD);
    assert_int_equal(dec("!yo", &v, &err), P4J_ANSWER_NO_MEMBER);
    assert_int_equal(v.kind, P4J_NULL);
}

static void test_decode_errors(void **state)
{
    (void)state;
    p4j_value v;
    p4j_error err = {0};
    assert_int_equal(dec("!xro5", &v, &err), P4J_ANSWER_JAVA_ERROR);
    assert_int_equal(v.kind, P4J_REF);
    assert_string_equal(v.ref.handle, "o5");
    drop(&v);
    assert_int_equal(err.kind, P4J_ERR_NONE);

    assert_int_equal(dec("!xspy4j.Py4JException: Method nosuch([]) does not exist\\n\tat x",
                         &v, &err),
                     P4J_ANSWER_ERROR);
    assert_int_equal(v.kind, P4J_NULL);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_string_equal(err.message,
                        "py4j.Py4JException: Method nosuch([]) does not exist\n\tat x");
    p4j_error_clear(NULL, &err);

    assert_int_equal(dec("!x", &v, &err), P4J_ANSWER_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_null(err.message);
    p4j_error_clear(NULL, &err);

    assert_int_equal(dec("!xn", &v, &err), P4J_ANSWER_ERROR);
    assert_non_null(err.message);
    p4j_error_clear(NULL, &err);

    assert_int_equal(dec("!zsjava.lang.IllegalArgumentException: Can not set int\\n", &v, &err),
                     P4J_ANSWER_FATAL);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_string_equal(err.message, "java.lang.IllegalArgumentException: Can not set int\n");
    p4j_error_clear(NULL, &err);

    assert_int_equal(dec("!z", &v, &err), P4J_ANSWER_FATAL);
    assert_int_equal(err.kind, P4J_ERR_NETWORK);
    p4j_error_clear(NULL, &err);
}

static void test_decode_malformed(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",        "!",          "!y",       "yv",          "?yv",     "!q",
        "!yq",     "!yi",        "!yi12a",   "!yi2147483648", "!yi-2147483649",
        "!yi+",    "!yi--1",     "!yi 1",    "!yL9223372036854775808",
        "!yL-9223372036854775809", "!yL99999999999999999999", "!yb",
        "!ybtruex", "!yd",       "!ydabc",   "!yd1e5x",     "!ydinfx", "!yd0x1p3",
        "!ydnan1", "!yd1.0.0e",  "!ys\\",    "!ys\\q",      "!ysab\\", "!yr",
        "!xr",     "!yjA",       "!yjABCDE", "!yvx",        "!ynx",    "!ypx",
        "!ymx",    "!yox",       "!yD",      "!yf",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_malformed(bad[i]);
    /* a long double text is refused, not overflowed */
    char longd[200] = "!yd";
    memset(longd + 3, '1', 150);
    longd[153] = 0;
    expect_malformed(longd);
}

/* Every prefix of every valid answer decodes to something without reading out of
 * bounds (run under valgrind or ASan to see it). */
static void test_decode_truncated(void **state)
{
    (void)state;
    static const char *lines[] = {
        "!ybtrue",   "!yi-2147483648",  "!yL1796035585611", "!yd1.0E-320", "!ydInfinity",
        "!yD1.50",   "!ysa\\\\b\\nc",   "!yjAAECAw==",      "!yro12",      "!ycjava.lang.String",
        "!xro5",     "!xsjava.lang.X\\n", "!zsboom",        "!yp",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        size_t n = strlen(lines[i]);
        for (size_t k = 0; k <= n; k++) {
            char *copy = malloc(k ? k : 1);
            memcpy(copy, lines[i], k);
            p4j_value v;
            p4j_error err = {0};
            p4j_answer a = p4j_wire_decode(copy, k, NULL, &v, &err);
            if (a == P4J_ANSWER_VALUE && v.kind == P4J_BYTES) {
                uint8_t out[16];
                if (p4j_wire_read_bytes(&v, out, &err) != P4J_OK)
                    p4j_error_clear(NULL, &err);
            }
            drop(&v);
            p4j_error_clear(NULL, &err);
            free(copy);
        }
    }
}

/* Big payloads may take over the caller's block instead of copying. */
static void test_decode_adopts_large_payloads(void **state)
{
    (void)state;
    size_t n = 200000;
    char *line = malloc(n + 8);
    memcpy(line, "!ys", 3);
    for (size_t i = 0; i < n; i++)
        line[3 + i] = (i % 1000 == 0) ? '\\' : 'x';
    for (size_t i = 0; i < n; i += 1000)
        line[3 + i + 1] = 'n';
    void *block = line;
    p4j_value v;
    p4j_error err = {0};
    assert_int_equal(p4j_wire_decode(line, n + 3, &block, &v, &err), P4J_ANSWER_VALUE);
    assert_null(block);
    assert_ptr_equal(v.owned, line);
    assert_int_equal(v.u.s.len, n - n / 1000);
    const char *s = v.u.s.data;
    assert_int_equal(s[0], '\n');
    assert_int_equal(s[1], 'x');
    assert_int_equal(s[999], '\n');
    drop(&v);

    /* bytes: base64 of 150000 bytes */
    size_t bn = 150000;
    uint8_t *raw = malloc(bn), *back = malloc(bn);
    for (size_t i = 0; i < bn; i++)
        raw[i] = (uint8_t)(i * 7);
    size_t tl = p4j_base64_encoded_len(bn);
    line = malloc(tl + 3);
    memcpy(line, "!yj", 3);
    p4j_base64_encode(raw, bn, line + 3);
    block = line;
    assert_int_equal(p4j_wire_decode(line, tl + 3, &block, &v, &err), P4J_ANSWER_VALUE);
    assert_null(block);
    assert_int_equal(v.u.bytes.len, bn);
    assert_int_equal(p4j_wire_read_bytes(&v, back, &err), P4J_OK);
    assert_memory_equal(back, raw, bn);
    drop(&v);

    /* small payloads are copied and leave the block alone */
    char small[] = "!ysabc";
    block = small;
    assert_int_equal(p4j_wire_decode(small, 6, &block, &v, &err), P4J_ANSWER_VALUE);
    assert_ptr_equal(block, small);
    drop(&v);
    free(raw);
    free(back);
}

static void test_value_kinds_letters(void **state)
{
    (void)state;
    /* the prefixes the codec uses agree with value.h's table */
    assert_int_equal(p4j_kind_letter(P4J_BYTES), 'j');
    assert_int_equal(p4j_kind_letter(P4J_ITERATOR), 'g');
    assert_int_equal(p4j_kind_letter(P4J_PROXY), 'f');
    assert_int_equal(p4j_kind_letter(P4J_CLASS), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_scalars),
        cmocka_unit_test(test_encode_doubles),
        cmocka_unit_test(test_double_round_trip),
        cmocka_unit_test(test_encode_strings),
        cmocka_unit_test(test_encode_bad_strings),
        cmocka_unit_test(test_encode_bytes_refs_proxies),
        cmocka_unit_test(test_encode_proxy_callback_and_refusals),
        cmocka_unit_test(test_encode_command),
        cmocka_unit_test(test_base64_vectors),
        cmocka_unit_test(test_base64_round_trip),
        cmocka_unit_test(test_base64_invalid),
        cmocka_unit_test(test_decode_scalars),
        cmocka_unit_test(test_decode_strings),
        cmocka_unit_test(test_string_round_trip),
        cmocka_unit_test(test_decode_bytes),
        cmocka_unit_test(test_decode_refs),
        cmocka_unit_test(test_decode_reflection_answers),
        cmocka_unit_test(test_decode_errors),
        cmocka_unit_test(test_decode_malformed),
        cmocka_unit_test(test_decode_truncated),
        cmocka_unit_test(test_decode_adopts_large_payloads),
        cmocka_unit_test(test_value_kinds_letters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
