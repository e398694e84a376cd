/* bridge/socket/wire.h - py4j's text wire protocol: command encoding, answer decoding.
 *
 * A command is lines ending in '\n' (command letter, sub-command, parts, arguments,
 * "e"); an answer is one line "!" + status + payload. This codec builds commands
 * into a growable buffer and turns one answer line into a p4j_value or an error.
 * It does no I/O and keeps no state: any thread may call any function.
 * Nothing here knows of Python, the JVM or sockets.
 */
#ifndef P4J_WIRE_H
#define P4J_WIRE_H

#include "client.h"
#include "value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- output buffer ------------------------------------------------------------ */

/* A growable byte buffer. Allocation failure and rejected raw parts are sticky
 * flags, so a command is built without checks and verified once at the end. */
typedef struct p4j_wbuf {
    char *data;
    size_t len;
    size_t cap;
    bool oom;     /* an allocation failed: the content is incomplete   */
    bool invalid; /* a raw part contained '\n' or '\r' (see p4j_wire_part) */
} p4j_wbuf;

/* Initialises an empty buffer (no allocation). */
void p4j_wbuf_init(p4j_wbuf *b);

/* Frees the buffer's storage and leaves it empty. */
void p4j_wbuf_free(p4j_wbuf *b);

/* Empties the buffer and clears its flags, keeping the storage. */
void p4j_wbuf_reset(p4j_wbuf *b);

/* Makes room for `extra` more bytes; returns where they go (data + len), or NULL
 * with `oom` set. The caller advances `len` by what it wrote. */
char *p4j_wbuf_reserve(p4j_wbuf *b, size_t extra);

/* Appends `n` bytes. */
void p4j_wbuf_put(p4j_wbuf *b, const void *p, size_t n);

/* ---- command encoding --------------------------------------------------------- */

/* Turns a PROXY argument's opaque handle into its wire text "<id>;<iface>;..."
 * appended to `out`; returns 0, or -1 to refuse the argument. */
typedef int (*p4j_wire_proxy_fn)(void *ctx, void *proxy, p4j_wbuf *out);

/* Appends a raw part (command letter, object id, method or class name) and '\n'.
 * A part containing '\n' or '\r' is not written and sets `invalid`. */
void p4j_wire_part(p4j_wbuf *b, const char *text, size_t len);

/* p4j_wire_part for a NUL-terminated string. */
void p4j_wire_cpart(p4j_wbuf *b, const char *text);

/* Appends `len` bytes of UTF-8 text escaped as py4j strings are (no type prefix)
 * and '\n'. */
void p4j_wire_escaped_part(p4j_wbuf *b, const char *utf8, size_t len);

/* Appends argument `v` with its type prefix and '\n'. PROXY values go through
 * `proxy_fn` (NULL: u.proxy is the NUL-terminated wire text). Returns P4J_OK, or
 * P4J_ERROR with a P4J_ERR_BRIDGE error for a value that cannot travel (lone
 * surrogate, void, class, package, method). Out of memory only sets b->oom. */
p4j_status p4j_wire_arg(p4j_wbuf *b, const p4j_value *v, p4j_wire_proxy_fn proxy_fn,
                        void *proxy_ctx, p4j_error *err);

/* Appends the end-of-command line "e\n". */
void p4j_wire_end(p4j_wbuf *b);

/* Writes the shortest decimal text of `d` that reads back to the same double
 * ("0.1", "1e+300", "Infinity", "-Infinity", "NaN") into out (NUL-terminated);
 * returns its length. Independent of the C locale. */
size_t p4j_wire_format_double(double d, char out[32]);

/* ---- base64 (standard alphabet, padded) ----------------------------------------- */

/* Returns the encoded length of `n` bytes. */
size_t p4j_base64_encoded_len(size_t n);

/* Encodes `n` bytes of `src` into `dst` (p4j_base64_encoded_len(n) bytes, no NUL);
 * returns the length written. */
size_t p4j_base64_encode(const uint8_t *src, size_t n, char *dst);

/* Checks the length and padding of base64 `text` and stores the decoded length in
 * *out; returns 0, or -1 when the text cannot be base64. Does not scan characters. */
int p4j_base64_decoded_len(const char *text, size_t len, size_t *out);

/* Decodes `len` chars of padded base64 into `dst` (room for the decoded length);
 * returns the number of bytes written, or -1 on an invalid character or padding. */
long long p4j_base64_decode(const char *text, size_t len, uint8_t *dst);

/* ---- answer decoding ------------------------------------------------------------ */

/* What an answer line said. */
typedef enum p4j_answer {
    P4J_ANSWER_VALUE,      /* "!y<value>": `out` holds it                         */
    P4J_ANSWER_NO_MEMBER,  /* "!yo": no such field                                */
    P4J_ANSWER_JAVA_ERROR, /* "!xr<id>": `out` is a P4J_REF to the throwable       */
    P4J_ANSWER_ERROR,      /* "!xs<text>" or "!x": `err` holds a P4J_ERR_BRIDGE
                              (message NULL for a bare "!x")                      */
    P4J_ANSWER_FATAL,      /* "!z...": the server dropped the connection; `err` set */
    P4J_ANSWER_MALFORMED,  /* not a py4j answer: `err` set (P4J_ERR_BRIDGE)        */
} p4j_answer;

/* Marks (in p4j_ref.cls) a socket-mode ref whose handle is a class's fqn, not an
 * object id: static calls send "z:<fqn>", and releasing it sends nothing. */
extern const char p4j_wire_class_tag[];

/* Decodes one answer line (`len` bytes, no '\n') into `out` (always initialised;
 * refs get a malloc'd id). "!yc<fqn>"/"!yp"/"!ym" give P4J_CLASS (fqn in u.s and
 * handle, tag in ref.cls; empty fqn for a bare "!yc"), P4J_PACKAGE, P4J_METHOD;
 * P4J_BYTES keeps its base64 text for p4j_wire_read_bytes. If `block` is given,
 * *block is the malloc'd storage of `line`: a large string or byte[] may adopt it
 * (out->owned = *block, *block = NULL, strings unescaped in place; the line's
 * content is then unspecified). ERROR/FATAL/MALFORMED leave `out` P4J_NULL. */
p4j_answer p4j_wire_decode(char *line, size_t len, void **block, p4j_value *out,
                           p4j_error *err);

/* Decodes the base64 content of a P4J_BYTES result `v` into `dst`
 * (v->u.bytes.len bytes). Returns P4J_ERROR (P4J_ERR_BRIDGE) on invalid base64. */
p4j_status p4j_wire_read_bytes(const p4j_value *v, uint8_t *dst, p4j_error *err);

#endif /* P4J_WIRE_H */
