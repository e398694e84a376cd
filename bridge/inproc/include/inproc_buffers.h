/* bridge/inproc/include/inproc_buffers.h - zero-copy buffers between Python and Java
 * (in-process only).
 *
 * p4j_inproc_direct_buffer wraps memory the caller owns as a java.nio direct ByteBuffer
 * (NewDirectByteBuffer, no copy) and has org.py4jni.DirectBuffers register it with a
 * java.lang.ref.Cleaner: once Java has collected the buffer (and every slice, duplicate
 * or view of it, which keep it reachable), the Cleaner's thread calls `release(ctx)`
 * exactly once. p4j_inproc_buffer_address reads where a direct ByteBuffer's memory is.
 * Nothing here knows of Python.
 */
#ifndef P4J_INPROC_BUFFERS_H
#define P4J_INPROC_BUFFERS_H

#include <stdbool.h>
#include <stddef.h>

#include "client.h"

/* Called once, on a Java thread (the Cleaner's), when Java no longer holds a buffer. */
typedef void (*p4j_buffer_release_fn)(void *ctx);

/* Sets `out` to a new direct ByteBuffer over [addr, addr + len) (len <= 2^31 - 1).
 * On P4J_OK Java owns `ctx` and calls release(ctx) after collecting the buffer; on
 * P4J_ERROR nothing was registered and `ctx` is still the caller's. Any thread. */
p4j_status p4j_inproc_direct_buffer(p4j_client *c, void *addr, size_t len,
                                    p4j_buffer_release_fn release, void *ctx,
                                    p4j_value *out, p4j_error *err);

/* Address and size in bytes of the memory of direct ByteBuffer `buf` (its whole
 * capacity, whatever its position and limit), and whether it is read-only. Fails with
 * P4J_ERR_BRIDGE for anything but a direct java.nio.ByteBuffer. Any thread. */
p4j_status p4j_inproc_buffer_address(p4j_client *c, const p4j_ref *buf, void **addr,
                                     size_t *len, bool *readonly, p4j_error *err);

#endif /* P4J_INPROC_BUFFERS_H */
