/* bridge/socket/include/socket_transport.h - the socket transport's constructor: a
 * p4j_client that talks py4j's wire protocol over TCP to a py4j GatewayServer (py4j's
 * own Java server, unmodified). Everything else the binding needs goes through the
 * client's ops (bridge/client.h); the codec stays private to bridge/socket/.
 */
#ifndef P4J_SOCKET_TRANSPORT_H
#define P4J_SOCKET_TRANSPORT_H

#include <stdint.h>

#include "client.h"

struct ssl_ctx_st; /* OpenSSL's SSL_CTX */

/* Locks: ops->release (and p4j_error_clear, which releases) may be called holding the
 * caller's lock (the Python GIL); when the caller set c->unlock/c->relock, release calls
 * them around its exchange with the server, and unlock must then tell whether the calling
 * thread holds that lock (it returns NULL when not; relock(NULL) does nothing). Every
 * other operation waits with no lock the transport knows of: call them without it. */

/* Creates a client for the py4j GatewayServer at address:port (address NULL:
 * "127.0.0.1"). `auth_token` (may be NULL) is sent on each new connection;
 * `read_timeout_s` bounds each wait for an answer (0: none). Connects lazily, as
 * py4j does: a dead server shows as P4J_ERR_NETWORK on the first call. Fails only
 * for an unresolvable address, a bad port or token, or out of memory. */
p4j_status p4j_socket_client_new(const char *address, int port, const char *auth_token,
                                 double read_timeout_s, p4j_client **out, p4j_error *err);

/* Creates a client for the JavaServer of a py4j ClientServer (py4j's pinned-thread mode,
 * caps P4J_CAP_PINNED), arguments as p4j_socket_client_new: each thread uses a
 * connection of its own, closed when the thread exits; commands Java sends on it while
 * the thread waits for an answer run through the client's command handler
 * (ops->set_command_handler), and ops->serve serves connections Java opens to Python. */
p4j_status p4j_socket_client_new_pinned(const char *address, int port, const char *auth_token,
                                        double read_timeout_s, p4j_client **out,
                                        p4j_error *err);

/* Makes TLS usable: resolves the OpenSSL functions the transport calls from the one
 * libssl already loaded in this process (OpenSSL 1.1.1 or 3.x; py4jni never links or
 * loads one itself: Python's ssl module, or a C program's own link, brings it). Thread-
 * safe; once it succeeded it returns P4J_OK at once. P4J_ERR_BRIDGE naming the problem
 * when no libssl, or more than one, is loaded, or a function is missing. */
p4j_status p4j_socket_tls_load(p4j_error *err);

/* The address of OpenSSL function `name` as the transport calls it (after
 * p4j_socket_tls_load succeeded; NULL before, or for a function it does not call). */
void *p4j_socket_tls_function(const char *name);

/* SSL_CTX_get_options(ctx), called as the transport calls OpenSSL (after
 * p4j_socket_tls_load succeeded). */
uint64_t p4j_socket_tls_ctx_options(const struct ssl_ctx_st *ctx);

/* TLS for `c`'s connections (c made by a constructor of this file; call before its first
 * operation). `ctx` (or NULL: plain TCP) configures the connections it opens: its
 * verification mode, trusted certificates, client certificate, versions and ciphers
 * apply as OpenSSL applies them; `host` is sent as the server name (SNI, unless it is
 * an IP address) and, when check_host, the server's certificate must match it (name or
 * IP address). `serve_ctx` (or NULL) is the server side of connections ops->serve
 * adopts (pinned-thread mode: Java's connections to Python). The client keeps a
 * reference to each context until destroyed. Loads OpenSSL when a context is given
 * (p4j_socket_tls_load, whose errors it returns); otherwise fails only when out of
 * memory. */
p4j_status p4j_socket_client_set_tls(p4j_client *c, struct ssl_ctx_st *ctx, const char *host,
                                     bool check_host, struct ssl_ctx_st *serve_ctx,
                                     p4j_error *err);

/* Asked on the waiting thread, with no lock held, when a signal interrupts one of the
 * client's waits for its peer (a read, a send, a connect, a TLS handshake): nonzero
 * abandons the exchange (see p4j_socket_client_set_interrupt), 0 resumes the wait. */
typedef int (*p4j_socket_interrupt_fn)(void *ctx);

/* Installs `fn` (NULL: signals never end a wait) for `c` (made by a constructor of this
 * file; call before its first operation). An abandoned exchange fails with
 * P4J_ERR_INTERRUPTED and its connection is closed, never reused: an answer that comes
 * later is never read as another command's. Not resent (py4j's retry is for broken
 * connections); in pinned-thread mode every use of that thread's connection fails, the
 * ones waiting below a callback with P4J_ERR_INTERRUPTED too. */
void p4j_socket_client_set_interrupt(p4j_client *c, p4j_socket_interrupt_fn fn, void *ctx);

/* What a socket client's connections did since it was made (py4j's counts of the same
 * events): connections opened to the server or served for it, connections closed, and
 * commands resent once on a fresh connection after a pooled one turned out broken. */
typedef struct p4j_socket_counts {
    uint64_t made, closed, retried;
} p4j_socket_counts;

/* Reads `c`'s counts (c made by a constructor of this file). */
void p4j_socket_client_counts(p4j_client *c, p4j_socket_counts *out);

#endif /* P4J_SOCKET_TRANSPORT_H */
