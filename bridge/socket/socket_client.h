/* bridge/socket/socket_client.h - the socket transport's own API beyond its constructor
 * (include/socket_transport.h), for bridge/socket/ and its tests: the ops table reaches
 * the rest.
 *
 * Refs: p4j_ref.handle is the malloc'd NUL-terminated py4j object id ("o12");
 * a class ref (P4J_CLASS results, p4j_socket_ref_new(..., true)) holds the class's
 * fqn and carries p4j_wire_class_tag in ref.cls. Connections come from a
 * thread-safe pool: each call takes an idle connection (or opens one) and gives it
 * back when done, so concurrent threads use separate connections, as py4j does.
 */
#ifndef P4J_SOCKET_CLIENT_H
#define P4J_SOCKET_CLIENT_H

#include "socket_transport.h"
#include "wire.h"

/* Well-known py4j object ids. */
#define P4J_SOCKET_DEFAULT_VIEW_ID "j"      /* the default JVM view (sent as "rj") */
#define P4J_SOCKET_ENTRY_POINT_ID "t"       /* the server's entry point            */
#define P4J_SOCKET_GATEWAY_SERVER_ID "GATEWAY_SERVER"

/* Asks the server to stop (py4j's "s" command) and then shuts the client down as
 * ops->shutdown does. For a server py4jni launched itself; best effort. */
p4j_status p4j_socket_client_shutdown_server(p4j_client *c, p4j_error *err);

/* Makes a ref (owned by the caller) for a known object id ("t", "j",
 * "GATEWAY_SERVER", an id from elsewhere) or, with is_class, for a class fqn.
 * Returns P4J_OK or P4J_ERROR (out of memory). */
p4j_status p4j_socket_ref_new(const char *id, bool is_class, p4j_ref *out, p4j_error *err);

/* Installs how PROXY arguments are written (see p4j_wire_proxy_fn); NULL restores
 * the default (u.proxy is the NUL-terminated "<id>;<iface>;..." text). Call before
 * other threads use the client. */
void p4j_socket_client_set_proxy_encoder(p4j_client *c, p4j_wire_proxy_fn fn, void *ctx);

/* Reports how many connections are open and how many of them are idle in the pool. */
void p4j_socket_client_connections(p4j_client *c, size_t *open, size_t *idle);

#endif /* P4J_SOCKET_CLIENT_H */
