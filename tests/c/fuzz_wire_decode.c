/* tests/c/fuzz_wire_decode.c - libFuzzer target for the py4j answer decoder.
 *
 * Input: one byte choosing a mode, then data.
 *   mode & 3 == 0: data is an answer line, decoded without a block (copying);
 *   mode & 3 == 1: the same, with the line in a malloc'd block it may adopt;
 *   mode & 3 == 2: data is a UTF-8 string: encode it as an argument, decode the
 *                  answer "!y" + encoding, and require the same bytes back;
 *   mode & 3 == 3: data is UTF-16 (or UCS-4 when mode & 4) text to encode; invalid
 *                  code points must be refused, never crash.
 * A BYTES result is always read out with p4j_wire_read_bytes. ASan/UBSan catch
 * out-of-bounds reads, leaks and undefined behaviour.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

static void drop(p4j_value *v)
{
    if (v->kind == P4J_BYTES) {
        uint8_t *dst = malloc(v->u.bytes.len ? v->u.bytes.len : 1);
        p4j_error err = {0};
        if (dst && p4j_wire_read_bytes(v, dst, &err) != P4J_OK)
            p4j_error_clear(NULL, &err);
        free(dst);
    }
    p4j_value_clear(v);
    free(v->ref.handle);
}

static void decode_line(const uint8_t *data, size_t size, int adopt)
{
    char *line = malloc(size ? size : 1);
    if (!line)
        return;
    memcpy(line, data, size);
    void *block = line;
    p4j_value v;
    p4j_error err = {0};
    p4j_wire_decode(line, size, adopt ? &block : NULL, &v, &err);
    drop(&v);
    p4j_error_clear(NULL, &err);
    free(block); /* NULL when the value adopted it (and freed it in drop) */
}

static void string_round_trip(const uint8_t *data, size_t size)
{
    p4j_wbuf b;
    p4j_error err = {0};
    p4j_value s, v;
    memset(&s, 0, sizeof s);
    s.kind = P4J_STRING;
    s.u.s.data = data;
    s.u.s.len = size;
    s.u.s.enc = P4J_ENC_UTF8;
    p4j_wbuf_init(&b);
    p4j_wbuf_put(&b, "!y", 2);
    if (p4j_wire_arg(&b, &s, NULL, NULL, &err) != P4J_OK || b.oom)
        abort();
    if (memchr(b.data + 2, '\n', b.len - 3) || memchr(b.data + 2, '\r', b.len - 3))
        abort(); /* escaping must leave no line break inside the part */
    if (p4j_wire_decode(b.data, b.len - 1, NULL, &v, &err) != P4J_ANSWER_VALUE)
        abort();
    if (v.kind != P4J_STRING || v.u.s.len != size || (size && memcmp(v.u.s.data, data, size)))
        abort();
    drop(&v);
    p4j_wbuf_free(&b);
}

static void encode_wide(const uint8_t *data, size_t size, int ucs4)
{
    size_t unit = ucs4 ? 4 : 2;
    size_t n = size / unit;
    void *copy = malloc(n * unit + 1); /* aligned copy of the code units */
    if (!copy)
        return;
    memcpy(copy, data, n * unit);
    p4j_value s;
    memset(&s, 0, sizeof s);
    s.kind = P4J_STRING;
    s.u.s.data = copy;
    s.u.s.len = n;
    s.u.s.enc = ucs4 ? P4J_ENC_UCS4 : P4J_ENC_UTF16;
    p4j_wbuf b;
    p4j_error err = {0};
    p4j_wbuf_init(&b);
    if (p4j_wire_arg(&b, &s, NULL, NULL, &err) != P4J_OK)
        p4j_error_clear(NULL, &err);
    p4j_wbuf_free(&b);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    switch (mode & 3) {
    case 0:
    case 1:
        decode_line(data, size, mode & 1);
        break;
    case 2:
        string_round_trip(data, size);
        break;
    default:
        encode_wide(data, size, mode & 4);
        break;
    }
    return 0;
}
