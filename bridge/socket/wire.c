/* bridge/socket/wire.c - py4j wire codec (see wire.h). No I/O, no global mutable state
 * after the one-time table set-up. */
#include "wire.h"

#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Payloads at least this long may be adopted in place instead of copied. */
#define ADOPT_MIN (64u * 1024u)

const char p4j_wire_class_tag[] = "p4j-socket-class";

/* ---- one-time tables ------------------------------------------------------------- */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

#define B64_BAD 0x01000000u

static uint16_t b64_pair[4096];   /* 12 bits -> two alphabet chars (memory order)  */
static uint32_t b64_dec[4][256];  /* char -> 6 bits shifted into place, or B64_BAD */
static unsigned char esc_class[256]; /* 1 for bytes py4j escapes: '\\' '\n' '\r'  */
static p4j_kind ref_kind[256];    /* answer prefix -> kind carrying an object id  */
static locale_t c_locale;         /* "C" numeric locale for doubles (may be 0)    */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_init(void)
{
    for (unsigned i = 0; i < 4096; i++) {
        unsigned char two[2] = {(unsigned char)b64_alphabet[i >> 6],
                                (unsigned char)b64_alphabet[i & 63]};
        memcpy(&b64_pair[i], two, 2);
    }
    for (unsigned c = 0; c < 256; c++)
        for (unsigned k = 0; k < 4; k++)
            b64_dec[k][c] = B64_BAD;
    for (unsigned v = 0; v < 64; v++) {
        unsigned char c = (unsigned char)b64_alphabet[v];
        b64_dec[0][c] = v << 18;
        b64_dec[1][c] = v << 12;
        b64_dec[2][c] = v << 6;
        b64_dec[3][c] = v;
    }
    esc_class['\\'] = esc_class['\n'] = esc_class['\r'] = 1;
    /* value.h's kind table says which prefixes carry an object id */
    for (int k = 0; k < P4J_KIND_COUNT; k++) {
        char letter = p4j_kind_letter((p4j_kind)k);
        if (letter && p4j_kind_has_ref((p4j_kind)k))
            ref_kind[(unsigned char)letter] = (p4j_kind)k;
    }
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

static inline void tables(void)
{
    pthread_once(&tables_once, tables_init);
}

/* ---- output buffer ------------------------------------------------------------- */

void p4j_wbuf_init(p4j_wbuf *b)
{
    memset(b, 0, sizeof *b);
}

void p4j_wbuf_free(p4j_wbuf *b)
{
    free(b->data);
    p4j_wbuf_init(b);
}

void p4j_wbuf_reset(p4j_wbuf *b)
{
    b->len = 0;
    b->oom = false;
    b->invalid = false;
}

char *p4j_wbuf_reserve(p4j_wbuf *b, size_t extra)
{
    if (b->oom)
        return NULL;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->oom = true;
        return NULL;
    }
    size_t need = b->len + extra;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->oom = true;
            return NULL;
        }
        b->data = p;
        b->cap = cap;
    }
    return b->data + b->len;
}

void p4j_wbuf_put(p4j_wbuf *b, const void *p, size_t n)
{
    char *dst = p4j_wbuf_reserve(b, n);
    if (dst) {
        if (n)
            memcpy(dst, p, n);
        b->len += n;
    }
}

static inline void put_byte(p4j_wbuf *b, char c)
{
    if (b->len < b->cap) {
        b->data[b->len++] = c;
        return;
    }
    p4j_wbuf_put(b, &c, 1);
}

/* ---- encoding helpers ------------------------------------------------------------ */

void p4j_wire_part(p4j_wbuf *b, const char *text, size_t len)
{
    if (len && (memchr(text, '\n', len) || memchr(text, '\r', len))) {
        b->invalid = true;
        return;
    }
    char *dst = p4j_wbuf_reserve(b, len + 1);
    if (!dst)
        return;
    if (len)
        memcpy(dst, text, len);
    dst[len] = '\n';
    b->len += len + 1;
}

void p4j_wire_cpart(p4j_wbuf *b, const char *text)
{
    p4j_wire_part(b, text, strlen(text));
}

void p4j_wire_end(p4j_wbuf *b)
{
    p4j_wbuf_put(b, "e\n", 2);
}

/* Writes the escape sequence for an escaped byte; returns bytes written. */
static inline size_t put_escape(char *d, unsigned char c)
{
    d[0] = '\\';
    d[1] = c == '\\' ? '\\' : c == '\n' ? 'n' : 'r';
    return 2;
}

/* Escapes UTF-8 bytes into d (room for 2 * n); returns bytes written. */
static size_t escape_utf8(char *d, const unsigned char *s, size_t n)
{
    char *start = d;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (esc_class[s[i]]) {
            memcpy(d, s + run, i - run);
            d += i - run;
            d += put_escape(d, s[i]);
            run = i + 1;
        }
    }
    memcpy(d, s + run, n - run);
    d += n - run;
    return (size_t)(d - start);
}

static inline size_t put_utf8(char *d, uint32_t cp)
{
    if (cp < 0x80) {
        if (esc_class[cp])
            return put_escape(d, (unsigned char)cp);
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xC0 | (cp >> 6));
        d[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xE0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Appends the escaped UTF-8 form of `s` (any encoding) and '\n'. Returns 0, or
 * -1 with err set for an invalid code point. */
static int put_escaped_string(p4j_wbuf *b, const p4j_str *s, p4j_error *err)
{
    size_t n = s->len;
    size_t per = s->enc == P4J_ENC_UTF16 ? 3 : s->enc == P4J_ENC_UCS4 ? 4 : 2;
    if (n > (SIZE_MAX / 4) - 8) {
        b->oom = true;
        return 0;
    }
    char *d = p4j_wbuf_reserve(b, n * per + 1);
    if (!d)
        return 0;
    char *start = d;
    switch (s->enc) {
    case P4J_ENC_UTF8:
        d += escape_utf8(d, s->data, n);
        break;
    case P4J_ENC_LATIN1: {
        const unsigned char *p = s->data;
        for (size_t i = 0; i < n; i++)
            d += put_utf8(d, p[i]);
        break;
    }
    case P4J_ENC_UTF16: {
        const uint16_t *p = s->data;
        for (size_t i = 0; i < n; i++) {
            uint32_t cp = p[i];
            if (cp >= 0xD800 && cp <= 0xDFFF) {
                if (cp <= 0xDBFF && i + 1 < n && p[i + 1] >= 0xDC00 && p[i + 1] <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (p[i + 1] - 0xDC00);
                    i++;
                } else {
                    p4j_error_set(err, P4J_ERR_BRIDGE,
                                  "string contains a lone surrogate U+%04X at index %zu; "
                                  "Java strings cannot carry it over py4j",
                                  (unsigned)cp, i);
                    return -1;
                }
            }
            d += put_utf8(d, cp);
        }
        break;
    }
    case P4J_ENC_UCS4: {
        const uint32_t *p = s->data;
        for (size_t i = 0; i < n; i++) {
            uint32_t cp = p[i];
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                p4j_error_set(err, P4J_ERR_BRIDGE,
                              cp > 0x10FFFF
                                  ? "string contains an invalid code point 0x%X at index %zu"
                                  : "string contains a lone surrogate U+%04X at index %zu; "
                                    "Java strings cannot carry it over py4j",
                              (unsigned)cp, i);
                return -1;
            }
            d += put_utf8(d, cp);
        }
        break;
    }
    default:
        p4j_error_set(err, P4J_ERR_BRIDGE, "string has an unknown encoding %d", (int)s->enc);
        return -1;
    }
    *d++ = '\n';
    b->len += (size_t)(d - start);
    return 0;
}

void p4j_wire_escaped_part(p4j_wbuf *b, const char *utf8, size_t len)
{
    tables();
    if (len > SIZE_MAX / 4) {
        b->oom = true;
        return;
    }
    char *d = p4j_wbuf_reserve(b, 2 * len + 1);
    if (!d)
        return;
    size_t n = escape_utf8(d, (const unsigned char *)utf8, len);
    d[n] = '\n';
    b->len += n + 1;
}

/* Writes the decimal text of `v` into d (room for 21); returns its length. */
static size_t format_i64(char *d, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t k = 0;
    if (v < 0)
        d[k++] = '-';
    while (n)
        d[k++] = tmp[--n];
    return k;
}

static double parse_double_c(const char *text, char **end)
{
    if (c_locale)
        return strtod_l(text, end, c_locale);
    return strtod(text, end);
}

size_t p4j_wire_format_double(double d, char out[32])
{
    tables();
    if (isnan(d))
        return (size_t)snprintf(out, 32, "NaN");
    if (isinf(d))
        return (size_t)snprintf(out, 32, d > 0 ? "Infinity" : "-Infinity");
    /* %g with precision <= 17 writes at most 24 chars; the big buffer only keeps
     * the compiler's worst-case estimate (any precision) quiet. */
    char tmp[320];
    locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
    /* Round-tripping is monotonic in the precision: binary-search the shortest. */
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(tmp, sizeof tmp, "%.*g", mid, d);
        if (parse_double_c(tmp, NULL) == d)
            hi = mid;
        else
            lo = mid + 1;
    }
    int n = snprintf(tmp, sizeof tmp, "%.*g", lo, d);
    if (c_locale)
        uselocale(old);
    if (n < 0 || n > 28)
        n = 0; /* cannot happen for a finite double */
    memcpy(out, tmp, (size_t)n);
    out[n] = 0;
    if (!strpbrk(out, ".e")) {
        memcpy(out + n, ".0", 3); /* look like a float, as repr() does */
        n += 2;
    }
    return (size_t)n;
}

/* ---- base64 ---------------------------------------------------------------------- */

size_t p4j_base64_encoded_len(size_t n)
{
    return (n / 3 + (n % 3 != 0)) * 4;
}

size_t p4j_base64_encode(const uint8_t *src, size_t n, char *dst)
{
    tables();
    char *d = dst;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t x = ((uint32_t)src[i] << 16) | ((uint32_t)src[i + 1] << 8) | src[i + 2];
        memcpy(d, &b64_pair[x >> 12], 2);
        memcpy(d + 2, &b64_pair[x & 0xFFF], 2);
        d += 4;
    }
    if (n - i == 1) {
        uint32_t x = (uint32_t)src[i] << 16;
        memcpy(d, &b64_pair[x >> 12], 2);
        d[2] = d[3] = '=';
        d += 4;
    } else if (n - i == 2) {
        uint32_t x = ((uint32_t)src[i] << 16) | ((uint32_t)src[i + 1] << 8);
        memcpy(d, &b64_pair[x >> 12], 2);
        d[2] = b64_alphabet[(x >> 6) & 63];
        d[3] = '=';
        d += 4;
    }
    return (size_t)(d - dst);
}

int p4j_base64_decoded_len(const char *text, size_t len, size_t *out)
{
    if (len % 4)
        return -1;
    size_t pad = 0;
    if (len && text[len - 1] == '=')
        pad = (len >= 2 && text[len - 2] == '=') ? 2 : 1;
    *out = len / 4 * 3 - pad;
    return 0;
}

long long p4j_base64_decode(const char *text, size_t len, uint8_t *dst)
{
    tables();
    size_t n;
    if (p4j_base64_decoded_len(text, len, &n) < 0)
        return -1;
    if (len == 0)
        return 0;
    const unsigned char *s = (const unsigned char *)text;
    uint8_t *d = dst;
    size_t full = len - 4; /* every quantum but the last, which may hold padding */
    size_t i = 0;
    for (; i < full; i += 4) {
        uint32_t x = b64_dec[0][s[i]] | b64_dec[1][s[i + 1]] | b64_dec[2][s[i + 2]] |
                     b64_dec[3][s[i + 3]];
        if (x & B64_BAD)
            return -1;
        d[0] = (uint8_t)(x >> 16);
        d[1] = (uint8_t)(x >> 8);
        d[2] = (uint8_t)x;
        d += 3;
    }
    unsigned char q[4] = {s[i], s[i + 1], s[i + 2], s[i + 3]};
    size_t tail = 3;
    if (q[3] == '=') {
        tail = 2;
        q[3] = 'A';
        if (q[2] == '=') {
            tail = 1;
            q[2] = 'A';
        }
    }
    uint32_t x = b64_dec[0][q[0]] | b64_dec[1][q[1]] | b64_dec[2][q[2]] | b64_dec[3][q[3]];
    if (x & B64_BAD)
        return -1;
    d[0] = (uint8_t)(x >> 16);
    if (tail > 1)
        d[1] = (uint8_t)(x >> 8);
    if (tail > 2)
        d[2] = (uint8_t)x;
    d += tail;
    return (long long)(d - dst);
}

/* ---- argument encoding ------------------------------------------------------------ */

p4j_status p4j_wire_arg(p4j_wbuf *b, const p4j_value *v, p4j_wire_proxy_fn proxy_fn,
                        void *proxy_ctx, p4j_error *err)
{
    tables();
    char num[40];
    size_t n;
    switch (v->kind) {
    case P4J_NULL:
        p4j_wbuf_put(b, "n\n", 2);
        return P4J_OK;
    case P4J_BOOL:
        if (v->u.b)
            p4j_wbuf_put(b, "btrue\n", 6);
        else
            p4j_wbuf_put(b, "bfalse\n", 7);
        return P4J_OK;
    case P4J_INT:
    case P4J_LONG:
        num[0] = v->kind == P4J_INT ? 'i' : 'L';
        n = 1 + format_i64(num + 1, v->kind == P4J_INT ? v->u.i : v->u.l);
        num[n++] = '\n';
        p4j_wbuf_put(b, num, n);
        return P4J_OK;
    case P4J_DOUBLE:
        num[0] = 'd';
        n = 1 + p4j_wire_format_double(v->u.d, num + 1);
        num[n++] = '\n';
        p4j_wbuf_put(b, num, n);
        return P4J_OK;
    case P4J_DECIMAL:
    case P4J_STRING:
        put_byte(b, v->kind == P4J_STRING ? 's' : 'D');
        if (put_escaped_string(b, &v->u.s, err) < 0)
            return P4J_ERROR;
        return P4J_OK;
    case P4J_BYTES: {
        size_t len = v->u.bytes.len;
        if (len > SIZE_MAX / 2) {
            b->oom = true;
            return P4J_OK;
        }
        size_t enc = p4j_base64_encoded_len(len);
        char *d = p4j_wbuf_reserve(b, enc + 2);
        if (!d)
            return P4J_OK;
        d[0] = 'j';
        if (len)
            p4j_base64_encode(v->u.bytes.data, len, d + 1);
        d[1 + enc] = '\n';
        b->len += enc + 2;
        return P4J_OK;
    }
    case P4J_REF:
    case P4J_LIST:
    case P4J_SET:
    case P4J_MAP:
    case P4J_ARRAY:
    case P4J_ITERATOR: {
        const char *id = v->ref.handle;
        if (!id || !*id || v->ref.cls == p4j_wire_class_tag)
            return p4j_error_set(err, P4J_ERR_BRIDGE,
                                 "argument is not a live Java object reference");
        put_byte(b, 'r');
        p4j_wire_cpart(b, id);
        return P4J_OK;
    }
    case P4J_PROXY:
        put_byte(b, 'f');
        if (proxy_fn) {
            if (proxy_fn(proxy_ctx, v->u.proxy, b) < 0) {
                if (err->kind != P4J_ERR_NONE && err->message)
                    return P4J_ERROR; /* the callback explained itself */
                return p4j_error_set(err, P4J_ERR_BRIDGE,
                                     "cannot pass this Python object to Java");
            }
        } else if (v->u.proxy) {
            const char *t = v->u.proxy;
            p4j_wbuf_put(b, t, strlen(t));
        } else {
            return p4j_error_set(err, P4J_ERR_BRIDGE, "proxy argument has no id");
        }
        put_byte(b, '\n');
        return P4J_OK;
    case P4J_CLASS:
        return p4j_error_set(err, P4J_ERR_BRIDGE,
                             "a Java class cannot be passed as an argument; pass its "
                             "java.lang.Class object instead");
    default:
        return p4j_error_set(err, P4J_ERR_BRIDGE, "a %s value cannot be passed to Java",
                             p4j_kind_name(v->kind));
    }
}

/* ---- answer decoding ---------------------------------------------------------------- */

static void value_init(p4j_value *v)
{
    v->kind = P4J_NULL;
    memset(&v->u, 0, sizeof v->u);
    v->ref.handle = NULL;
    v->ref.cls = NULL;
    v->owned = NULL;
}

/* Replaces err's message with a copy of `len` bytes of text. */
static void err_text(p4j_error *err, p4j_error_kind kind, const char *prefix,
                     const char *text, size_t len)
{
    size_t plen = strlen(prefix);
    char *m = malloc(plen + len + 1);
    free(err->message);
    err->kind = m ? kind : P4J_ERR_MEMORY;
    err->message = m;
    if (m) {
        memcpy(m, prefix, plen);
        if (len)
            memcpy(m + plen, text, len);
        m[plen + len] = 0;
    }
}

/* Unescapes py4j string text from src into dst (may alias src: dst <= src).
 * Returns the output length, or -1 for a dangling or unknown escape. */
static long long unescape(char *dst, const char *src, size_t n)
{
    size_t o = 0, i = 0;
    while (i < n) {
        const char *bs = memchr(src + i, '\\', n - i);
        size_t run = bs ? (size_t)(bs - (src + i)) : n - i;
        if (run) {
            memmove(dst + o, src + i, run);
            o += run;
            i += run;
        }
        if (!bs)
            break;
        if (i + 1 >= n)
            return -1;
        char c = src[i + 1];
        dst[o++] = c == 'n' ? '\n' : c == 'r' ? '\r' : c == '\\' ? '\\' : 0;
        if (c != 'n' && c != 'r' && c != '\\')
            return -1;
        i += 2;
    }
    return (long long)o;
}

static p4j_answer malformed(p4j_value *out, p4j_error *err, const char *why,
                            const char *line, size_t len)
{
    char shown[64];
    size_t k = 0;
    for (size_t i = 0; i < len && k < 40; i++) {
        unsigned char c = (unsigned char)line[i];
        shown[k++] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
    }
    shown[k] = 0;
    p4j_value_clear(out);
    free(out->ref.handle);
    value_init(out);
    p4j_error_set(err, P4J_ERR_BRIDGE, "malformed answer from the py4j server (%s): \"%s%s\"",
                  why, shown, len > k ? "..." : "");
    return P4J_ANSWER_MALFORMED;
}

/* Parses a whole decimal integer in [lo, hi]. */
static int parse_int(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (n && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i >= n || n - i > 19)
        return -1;
    uint64_t u = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        u = u * 10 + (uint64_t)(s[i] - '0');
    }
    /* 19 digits fit in uint64_t; compare against the bounds as magnitudes. */
    if (neg) {
        if (u > (uint64_t)0 - (uint64_t)lo)
            return -1;
        *out = u ? (int64_t)(0 - u) : 0;
    } else {
        if (u > (uint64_t)hi)
            return -1;
        *out = (int64_t)u;
    }
    return 0;
}

/* Python's float() spellings of the special values, which py4j's client reads: an
 * optional sign, then inf, infinity or nan in any case. 0, or -1 for anything else. */
static int parse_double_special(const char *s, size_t n, double *out)
{
    bool neg = n > 0 && s[0] == '-';
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        s++;
        n--;
    }
    if ((n == 3 || n == 8) && !strncasecmp(s, "infinity", n)) {
        *out = neg ? -INFINITY : INFINITY;
        return 0;
    }
    if (n == 3 && !strncasecmp(s, "nan", 3)) {
        *out = NAN;
        return 0;
    }
    return -1;
}

static int parse_double(const char *s, size_t n, double *out)
{
    if (n == 3 && !memcmp(s, "NaN", 3)) {
        *out = NAN;
        return 0;
    }
    if (n == 8 && !memcmp(s, "Infinity", 8)) {
        *out = INFINITY;
        return 0;
    }
    if (n == 9 && !memcmp(s, "-Infinity", 9)) {
        *out = -INFINITY;
        return 0;
    }
    char tmp[64];
    if (n == 0 || n >= sizeof tmp)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' ||
              c == '+'))
            return parse_double_special(s, n, out);
        tmp[i] = c;
    }
    tmp[n] = 0;
    char *end;
    *out = parse_double_c(tmp, &end);
    return end == tmp + n ? 0 : -1;
}

/* Sets out to a ref kind with a malloc'd copy of id. */
static int set_ref(p4j_value *out, p4j_kind kind, const char *id, size_t n)
{
    char *h = malloc(n + 1);
    if (!h)
        return -1;
    memcpy(h, id, n);
    h[n] = 0;
    out->kind = kind;
    out->ref.handle = h;
    return 0;
}

static p4j_answer oom_answer(p4j_value *out, p4j_error *err)
{
    p4j_value_clear(out);
    free(out->ref.handle);
    value_init(out);
    p4j_error_set(err, P4J_ERR_MEMORY, "out of memory decoding a py4j answer");
    return P4J_ANSWER_MALFORMED;
}

static p4j_answer decode_string(char *line, size_t len, char *p, size_t n, void **block,
                                p4j_value *out, p4j_error *err)
{
    long long m;
    if (block && *block && n >= ADOPT_MIN) {
        m = unescape(p, p, n);
        if (m < 0)
            return malformed(out, err, "bad escape in string", line, len);
        out->owned = *block;
        *block = NULL;
        out->u.s.data = p;
    } else {
        char *dst = n <= sizeof out->inl ? (char *)out->inl : malloc(n ? n : 1);
        if (!dst)
            return oom_answer(out, err);
        if (dst != (char *)out->inl)
            out->owned = dst;
        m = unescape(dst, p, n);
        if (m < 0)
            return malformed(out, err, "bad escape in string", line, len);
        out->u.s.data = dst;
    }
    out->kind = P4J_STRING;
    out->u.s.len = (size_t)m;
    out->u.s.enc = P4J_ENC_UTF8;
    return P4J_ANSWER_VALUE;
}

static p4j_answer decode_bytes(char *line, size_t len, char *p, size_t n, void **block,
                               p4j_value *out, p4j_error *err)
{
    size_t dlen;
    if (p4j_base64_decoded_len(p, n, &dlen) < 0)
        return malformed(out, err, "bad base64 length", line, len);
    out->kind = P4J_BYTES;
    out->u.bytes.len = dlen;
    if (n == 0) {
        out->u.bytes.data = NULL;
        return P4J_ANSWER_VALUE;
    }
    if (block && *block && n >= ADOPT_MIN) {
        out->owned = *block;
        *block = NULL;
        out->u.bytes.data = (const uint8_t *)p;
    } else {
        /* Always on the heap: a BYTES value is read later and must survive a move. */
        char *copy = malloc(n);
        if (!copy)
            return oom_answer(out, err);
        memcpy(copy, p, n);
        out->owned = copy;
        out->u.bytes.data = (const uint8_t *)copy;
    }
    return P4J_ANSWER_VALUE;
}

static p4j_answer decode_value(char *line, size_t len, char *p, size_t n, void **block,
                               p4j_value *out, p4j_error *err)
{
    char type = p[0];
    p++;
    n--;
    int64_t iv;
    switch (type) {
    case 'n':
    case 'v':
        if (n)
            return malformed(out, err, "text after null/void", line, len);
        out->kind = type == 'n' ? P4J_NULL : P4J_VOID;
        return P4J_ANSWER_VALUE;
    case 'b': /* any case, as py4j's client reads it (value.lower() == "true") */
        if (n == 4 && !strncasecmp(p, "true", 4))
            out->u.b = true;
        else if (n == 5 && !strncasecmp(p, "false", 5))
            out->u.b = false;
        else
            return malformed(out, err, "bad boolean", line, len);
        out->kind = P4J_BOOL;
        return P4J_ANSWER_VALUE;
    case 'i':
        if (parse_int(p, n, INT32_MIN, INT32_MAX, &iv) < 0)
            return malformed(out, err, "bad int", line, len);
        out->kind = P4J_INT;
        out->u.i = (int32_t)iv;
        return P4J_ANSWER_VALUE;
    case 'L':
        if (parse_int(p, n, INT64_MIN, INT64_MAX, &iv) < 0)
            return malformed(out, err, "bad long", line, len);
        out->kind = P4J_LONG;
        out->u.l = iv;
        return P4J_ANSWER_VALUE;
    case 'd':
        if (parse_double(p, n, &out->u.d) < 0)
            return malformed(out, err, "bad double", line, len);
        out->kind = P4J_DOUBLE;
        return P4J_ANSWER_VALUE;
    case 'D':
        if (n == 0)
            return malformed(out, err, "empty decimal", line, len);
        if (p4j_value_set_string(out, P4J_DECIMAL, p, n, P4J_ENC_UTF8) < 0)
            return oom_answer(out, err);
        return P4J_ANSWER_VALUE;
    case 's':
        return decode_string(line, len, p, n, block, out, err);
    case 'j':
        return decode_bytes(line, len, p, n, block, out, err);
    case 'r':
    case 'l':
    case 'h':
    case 'a':
    case 't':
    case 'g':
        if (n == 0)
            return malformed(out, err, "empty object id", line, len);
        if (memchr(p, 0, n))
            return malformed(out, err, "NUL in object id", line, len);
        if (set_ref(out, ref_kind[(unsigned char)type], p, n) < 0)
            return oom_answer(out, err);
        return P4J_ANSWER_VALUE;
    case 'f':
        if (n == 0 || memchr(p, 0, n))
            return malformed(out, err, "bad proxy id", line, len);
        /* NUL-terminated copy of the proxy text, reachable through u.proxy. */
        out->owned = malloc(n + 1);
        if (!out->owned)
            return oom_answer(out, err);
        memcpy(out->owned, p, n);
        ((char *)out->owned)[n] = 0;
        out->kind = P4J_PROXY;
        out->u.proxy = out->owned;
        return P4J_ANSWER_VALUE;
    case 'c':
        if (memchr(p, 0, n))
            return malformed(out, err, "NUL in class name", line, len);
        if (p4j_value_set_string(out, P4J_CLASS, p, n, P4J_ENC_UTF8) < 0)
            return oom_answer(out, err);
        if (set_ref(out, P4J_CLASS, p, n) < 0)
            return oom_answer(out, err);
        out->ref.cls = (void *)p4j_wire_class_tag;
        return P4J_ANSWER_VALUE;
    case 'p':
    case 'm':
        if (n)
            return malformed(out, err, "text after package/method", line, len);
        out->kind = type == 'p' ? P4J_PACKAGE : P4J_METHOD;
        return P4J_ANSWER_VALUE;
    case 'o':
        if (n)
            return malformed(out, err, "text after no-member", line, len);
        return P4J_ANSWER_NO_MEMBER;
    default:
        return malformed(out, err, "unknown type prefix", line, len);
    }
}

/* Fills err from a "!x"/"!z" payload; the text after an 's' prefix is unescaped. */
static void error_payload(p4j_error *err, p4j_error_kind kind, const char *what,
                          const char *p, size_t n)
{
    if (n >= 1 && p[0] == 's') {
        char *m = malloc(n);
        long long k = m ? unescape(m, p + 1, n - 1) : -1;
        if (k >= 0) {
            m[k] = 0;
            free(err->message);
            err->kind = kind;
            err->message = m;
            return;
        }
        free(m);
        err_text(err, kind, "", p + 1, n - 1);
        return;
    }
    p4j_error_set(err, kind, "%s", what);
}

p4j_answer p4j_wire_decode(char *line, size_t len, void **block, p4j_value *out,
                           p4j_error *err)
{
    tables();
    value_init(out);
    if (len < 2 || line[0] != '!')
        return malformed(out, err, len ? "no '!'" : "empty line", line, len);
    char *p = line + 2;
    size_t n = len - 2;
    switch (line[1]) {
    case 'y':
        if (n == 0)
            return malformed(out, err, "no value", line, len);
        return decode_value(line, len, p, n, block, out, err);
    case 'x':
        if (n >= 1 && p[0] == 'r') {
            if (n == 1 || memchr(p + 1, 0, n - 1))
                return malformed(out, err, "bad exception id", line, len);
            if (set_ref(out, P4J_REF, p + 1, n - 1) < 0)
                return oom_answer(out, err);
            return P4J_ANSWER_JAVA_ERROR;
        }
        if (n == 0) { /* a bare "!x": the caller knows what was missing */
            free(err->message);
            err->message = NULL;
            err->kind = P4J_ERR_BRIDGE;
            return P4J_ANSWER_ERROR;
        }
        error_payload(err, P4J_ERR_BRIDGE, "the py4j server reported an error", p, n);
        return P4J_ANSWER_ERROR;
    case 'z':
        /* The server failed while executing the command and closed the connection;
         * with a trace it is the command's fault (py4j raises Py4JError). */
        error_payload(err, n ? P4J_ERR_BRIDGE : P4J_ERR_NETWORK,
                      "the py4j server dropped the connection", p, n);
        return P4J_ANSWER_FATAL;
    default:
        return malformed(out, err, "unknown status", line, len);
    }
}

p4j_status p4j_wire_read_bytes(const p4j_value *v, uint8_t *dst, p4j_error *err)
{
    if (v->kind != P4J_BYTES)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "value is %s, not P4J_BYTES",
                             p4j_kind_name(v->kind));
    size_t n = v->u.bytes.len;
    if (n == 0)
        return P4J_OK;
    long long got = p4j_base64_decode((const char *)v->u.bytes.data,
                                      p4j_base64_encoded_len(n), dst);
    if (got < 0 || (size_t)got != n)
        return p4j_error_set(err, P4J_ERR_BRIDGE,
                             "malformed answer from the py4j server: invalid base64 in byte[]");
    return P4J_OK;
}
