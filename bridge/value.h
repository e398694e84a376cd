/* bridge/value.h - the tagged value that crosses the bridge in both transports.
 *
 * A p4j_value is what Python hands the bridge (arguments) and what the bridge hands
 * back (results). Kinds mirror py4j's wire type prefixes where one exists, so the
 * socket codec and the in-process JNI transport read and write the same struct.
 * Nothing here knows of Python or of the JVM.
 */
#ifndef P4J_VALUE_H
#define P4J_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One row per kind: enum name, py4j wire prefix (0 when the kind never travels). */
#define P4J_KIND_TABLE(X)                                                       \
    X(P4J_NULL, 'n')     /* null                                             */ \
    X(P4J_VOID, 'v')     /* void result                                      */ \
    X(P4J_BOOL, 'b')     /* boolean                                          */ \
    X(P4J_INT, 'i')      /* int that fits 32 bits                            */ \
    X(P4J_LONG, 'L')     /* int that fits 64 bits                            */ \
    X(P4J_DOUBLE, 'd')   /* double (float results already widened)          */ \
    X(P4J_DECIMAL, 'D')  /* java.math.BigDecimal, as its text                */ \
    X(P4J_STRING, 's')   /* java.lang.String (and char results)              */ \
    X(P4J_BYTES, 'j')    /* byte[]                                           */ \
    X(P4J_REF, 'r')      /* any other object                                 */ \
    X(P4J_LIST, 'l')     /* object implementing java.util.List               */ \
    X(P4J_SET, 'h')      /* object implementing java.util.Set                */ \
    X(P4J_MAP, 'a')      /* object implementing java.util.Map                */ \
    X(P4J_ARRAY, 't')    /* Java array other than byte[]                     */ \
    X(P4J_ITERATOR, 'g') /* object implementing java.util.Iterator           */ \
    X(P4J_PROXY, 'f')    /* a Python object Java should see (callbacks)     */ \
    X(P4J_CLASS, 0)      /* resolved class: ref to java.lang.Class + fqn     */ \
    X(P4J_PACKAGE, 0)    /* resolved name is a package                       */ \
    X(P4J_METHOD, 0)     /* resolved static member is a method               */ \
    X(P4J_SELF, 0)       /* result is the instance call's target itself:     */ \
                         /* no new ref (fluent APIs: sb.append(x) returns sb) */

typedef enum p4j_kind {
#define P4J_KIND_ENUM(name, letter) name,
    P4J_KIND_TABLE(P4J_KIND_ENUM)
#undef P4J_KIND_ENUM
        P4J_KIND_COUNT
} p4j_kind;

/* Text encodings a string value may carry. Arguments arrive in the form Python holds
 * them (no copy); each transport converts to what it sends. */
typedef enum p4j_enc {
    P4J_ENC_LATIN1 = 1, /* one byte per code point                   */
    P4J_ENC_UTF16 = 2,  /* UTF-16 code units (valid pairs only)       */
    P4J_ENC_UCS4 = 4,   /* one 32-bit unit per code point             */
    P4J_ENC_UTF8 = 8,   /* UTF-8 bytes                                */
} p4j_enc;

/* A reference to a Java object, owned by the transport that made it.
 * In-process `handle` is a JNI global reference; in socket mode it is the
 * NUL-terminated object id (malloc'd). `cls` is a transport cache slot
 * (in-process: the p4jj_class of the object, filled on first call). */
typedef struct p4j_ref {
    void *handle;
    void *cls;
} p4j_ref;

typedef struct p4j_str {
    const void *data; /* len units of enc; not NUL-terminated */
    size_t len;       /* in units (bytes for LATIN1/UTF8, 16-bit units, 32-bit units) */
    p4j_enc enc;
} p4j_str;

/* Bytes: as an argument, `data`/`len` borrow the caller's buffer. As a result,
 * `len` is known and the content is copied out with p4j_client_read_bytes() into a
 * buffer the caller allocated (one copy), while `ref`/`data` hold the source. */
typedef struct p4j_bytes {
    const uint8_t *data;
    size_t len;
} p4j_bytes;

/* Small results are stored inline; longer ones in `owned` (freed by p4j_value_clear). */
#define P4J_VALUE_INLINE 48

typedef struct p4j_value {
    p4j_kind kind;
    union {
        bool b;
        int32_t i;
        int64_t l;
        double d;
        p4j_str s;     /* STRING, DECIMAL; CLASS uses s for its fqn */
        p4j_bytes bytes;
        void *proxy;   /* PROXY argument: the binding's opaque handle */
    } u;
    p4j_ref ref;       /* REF, LIST, SET, MAP, ARRAY, ITERATOR, CLASS, BYTES (result source) */
    void *owned;       /* heap storage owned by this value, or NULL */
    unsigned char inl[P4J_VALUE_INLINE]; /* inline storage for short results */
} p4j_value;

/* Returns the py4j wire prefix of `kind`, or 0 for kinds that never travel. */
char p4j_kind_letter(p4j_kind kind);

/* Returns the enum name of `kind` ("P4J_INT"), for messages and tests. */
const char *p4j_kind_name(p4j_kind kind);

/* Returns true when `kind` carries a p4j_ref the caller must release. */
bool p4j_kind_has_ref(p4j_kind kind);

/* Frees storage owned by `v` (not its ref: refs pass to the caller) and sets it NULL. */
void p4j_value_clear(p4j_value *v);

/* Sets `v` to a string copied from `data` (len units of `enc`), inline when it fits.
 * Returns 0, or -1 when out of memory. */
int p4j_value_set_string(p4j_value *v, p4j_kind kind, const void *data, size_t len,
                         p4j_enc enc);

/* How py4j's client reads a Java float: its server sends Float.toString's text, which
 * Python reads as a double. The JVM's own Float.toString decides (its digits differ
 * between JDKs: 1.17549435E-38 before JDK 19, 1.1754944E-38 since): the in-process
 * transport (bridge/inproc/) installs a printer that asks it, n floats per call (false: it
 * could not, and the shortest text is used); without one, the shortest text that reads
 * back as each float. Floats every JDK prints exactly (zero, integers below 2^24,
 * infinities, NaN) never reach the printer. */
typedef bool (*p4j_float_printer)(const float *src, double *dst, size_t n);

/* Installs `fn` (NULL: none) as the printer of p4j_floats_as_printed. Any thread. */
void p4j_set_float_printer(p4j_float_printer fn);

/* dst[i] = the double py4j's client reads for Java float src[i], i < n. */
void p4j_floats_as_printed(const float *src, double *dst, size_t n);

/* p4j_floats_as_printed of one float. */
double p4j_float_as_printed(float f);

#endif /* P4J_VALUE_H */
