/* bridge/inproc/inproc_bulk.h - the in-process transport's bulk operations (the optional ops at
 * the end of p4j_client_ops): batched walks over collections and collection building
 * (inproc_collections.c, Java side org.py4jni.Cursor and org.py4jni.Bulk), primitive
 * array regions (inproc_arrays.c).
 *
 * The classes and IDs they use are resolved on first use (not at JVM start, so the
 * core's start-up table stays the core's) by p4j_bulk_ids(); a missing row fails that
 * call with its name. Once resolved the table is read-only: any thread may read it.
 */
#ifndef P4J_INPROC_BULK_H
#define P4J_INPROC_BULK_H

#include <jni.h>

#include "client.h"

/* X(field, "binary/name") */
#define P4J_BULK_CLASS_TABLE(X)       \
    X(Cursor, "org/py4jni/Cursor")    \
    X(Bulk, "org/py4jni/Bulk")        \
    X(ArrZ, "[Z")                     \
    X(ArrB, "[B")                     \
    X(ArrC, "[C")                     \
    X(ArrS, "[S")                     \
    X(ArrI, "[I")                     \
    X(ArrJ, "[J")                     \
    X(ArrF, "[F")                     \
    X(ArrD, "[D")

/* X(field, class, is_static, "name", "signature") */
#define P4J_BULK_METHOD_TABLE(X)                                                        \
    X(Cursor_open, Cursor, 1, "open", "(Ljava/lang/Object;C)Lorg/py4jni/Cursor;")       \
    X(Cursor_fill, Cursor, 0, "fill", "(I)I")                                           \
    X(Bulk_build, Bulk, 1, "build", "(C[B[J[C[Ljava/lang/Object;)Ljava/lang/Object;")

/* X(field, class, "name", "signature") */
#define P4J_BULK_FIELD_TABLE(X)                         \
    X(Cursor_kinds, Cursor, "kinds", "[B")              \
    X(Cursor_bits, Cursor, "bits", "[J")                \
    X(Cursor_refs, Cursor, "refs", "[Ljava/lang/Object;") \
    X(Cursor_chars, Cursor, "chars", "[C")              \
    X(Cursor_nchars, Cursor, "nchars", "I")

typedef struct p4j_bulk_ids {
#define P4J_BULK_CLASS_FIELD(field, name) jclass field;
    P4J_BULK_CLASS_TABLE(P4J_BULK_CLASS_FIELD)
#undef P4J_BULK_CLASS_FIELD
#define P4J_BULK_METHOD_FIELD(field, cls, is_static, name, sig) jmethodID field;
    P4J_BULK_METHOD_TABLE(P4J_BULK_METHOD_FIELD)
#undef P4J_BULK_METHOD_FIELD
#define P4J_BULK_FIELD_FIELD(field, cls, name, sig) jfieldID field;
    P4J_BULK_FIELD_TABLE(P4J_BULK_FIELD_FIELD)
#undef P4J_BULK_FIELD_FIELD
} p4j_bulk_ids;

/* Returns the resolved table, resolving it on first use; NULL with `err` set when a
 * row is missing (the helper jar is out of date). Thread-safe. */
const p4j_bulk_ids *p4j_bulk_ids_get(JNIEnv *env, p4j_error *err);

/* The ops, with the contracts written in client.h. */
p4j_status p4j_inproc_cursor_open(p4j_client *c, const p4j_ref *source, char mode,
                                  p4j_value *out, p4j_error *err);
p4j_status p4j_inproc_cursor_next(p4j_client *c, const p4j_ref *cursor, p4j_value *vals,
                                  size_t max, size_t *n, p4j_error *err);
p4j_status p4j_inproc_collection_new(p4j_client *c, char kind, const p4j_value *vals,
                                     size_t n, p4j_value *out, p4j_error *err);
p4j_status p4j_inproc_array_info(p4j_client *c, const p4j_ref *arr, char *elem, size_t *len,
                                 p4j_error *err);
p4j_status p4j_inproc_array_read(p4j_client *c, const p4j_ref *arr, char elem, size_t start,
                                 size_t count, void *dst, p4j_error *err);
p4j_status p4j_inproc_array_write(p4j_client *c, const p4j_ref *arr, char elem, size_t start,
                                  size_t count, const void *src, p4j_error *err);
p4j_status p4j_inproc_array_new(p4j_client *c, char elem, size_t count, const void *src,
                                p4j_value *out, p4j_error *err);

#endif /* P4J_INPROC_BULK_H */
