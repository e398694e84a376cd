/* python-binding/src/transport.h - the one factory that picks a transport for the
 * binding (transport.c). Everything else in python-binding/src/ sees a p4j_client and
 * its ops (bridge/client.h), never which transport is behind it.
 */
#ifndef P4JPY_TRANSPORT_H
#define P4JPY_TRANSPORT_H

#include "client.h"
#include "jvm.h"

typedef enum p4jpy_transport_kind {
    P4JPY_TRANSPORT_INPROC, /* the JVM embedded in this process (bridge/inproc/include/inproc.h) */
    P4JPY_TRANSPORT_SOCKET, /* a py4j GatewayServer (bridge/socket/include/socket_transport.h) */
} p4jpy_transport_kind;

/* What a new client connects to. */
typedef struct p4jpy_transport_spec {
    p4jpy_transport_kind kind;
    p4j_jvm_options jvm;  /* INPROC: the JVM to start or join                  */
    const char *address;  /* SOCKET: the server's address (NULL: 127.0.0.1)    */
    int port;             /* SOCKET */
    const char *auth_token; /* SOCKET: may be NULL                             */
    double read_timeout_s;  /* SOCKET: 0 for none                              */
    bool pinned;            /* SOCKET: py4j's pinned-thread mode (a ClientServer) */
} p4jpy_transport_spec;

/* Creates the client `spec` asks for. Call without the GIL (a JVM may start). */
p4j_status p4jpy_transport_new(const p4jpy_transport_spec *spec, p4j_client **out,
                               p4j_error *err);

/* Makes the in-process client `c` run its calls for `context` (a handle of an
 * org.py4jni.CallContext, NULL: none): bridge/inproc/include/inproc.h p4j_inproc_set_context. */
p4j_status p4jpy_transport_inproc_context(p4j_client *c, const void *context, p4j_error *err);

#endif /* P4JPY_TRANSPORT_H */
