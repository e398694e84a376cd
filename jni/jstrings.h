/* jni/jstrings.h - exact conversion between p4j_str and java.lang.String.
 *
 * Strings cross as UTF-16 (NewString / GetStringRegion), never as modified UTF-8, so
 * NUL and supplementary characters survive.
 */
#ifndef P4J_JSTRINGS_H
#define P4J_JSTRINGS_H

#include <jni.h>

#include "client.h"

/* Returns a new local jstring holding `s`, or NULL with `err` set (bad UTF-8, OOM,
 * or a pending Java exception captured). */
jstring p4j_jstring_new(JNIEnv *env, const p4j_str *s, p4j_error *err);

/* Writes `len` Latin-1 bytes at `p` as UTF-16 units at `dst`: 16 at a time with SSE2
 * (every x86-64 has it), the rest as one overlapping block (one by one without SSE2). */
void p4j_widen_latin1(const unsigned char *p, size_t len, jchar *dst);

/* Sets `out` to the content of `str` as a P4J_STRING (or `kind`) in UTF-16.
 * Returns P4J_OK, or P4J_ERROR with `err` set. `str` must be non-NULL. */
p4j_status p4j_jstring_read(JNIEnv *env, jstring str, p4j_kind kind, p4j_value *out,
                            p4j_error *err);

/* Returns a malloc'd UTF-8 copy of `str` (NULL for NULL or out of memory). */
char *p4j_jstring_utf8(JNIEnv *env, jstring str);

/* Returns a new local jstring from NUL-terminated UTF-8 `s`, or NULL with err set. */
jstring p4j_jstring_from_utf8(JNIEnv *env, const char *s, p4j_error *err);

#endif /* P4J_JSTRINGS_H */
