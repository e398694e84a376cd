/* bridge/socket/socket_internal.h - what the files of the socket client share: the
 * client and connection structs and the functions each layer offers the others.
 *
 *   socket_conn.c    the connection layer: open (TCP, TLS, py4j's auth), send, read a
 *                    line, close; the list of a client's open connections and its counts
 *   socket_pool.c    the pooled regime (a py4j GatewayServer): idle connections shared
 *                    by every thread
 *   socket_pinned.c  the pinned-thread regime (a py4j ClientServer): a connection per
 *                    thread, Java's commands run on the waiting thread, served
 *                    connections Java opens to Python
 *   socket_client.c  the py4j command set on top of either regime (the ops table) and
 *                    the constructors
 *
 * Thread rules: the client is shared; a connection belongs to one thread between
 * acquire and give back. `mu` guards the open list, the idle pool, the connections a
 * program took out of it (`held`), the ids, the counts and the dup table; `pins_mu`
 * (socket_pinned.c) guards every pin and is taken before `mu`.
 */
#ifndef P4J_SOCKET_INTERNAL_H
#define P4J_SOCKET_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "socket_client.h"

#define RBUF_INITIAL (64u * 1024u)   /* read buffer of a fresh connection          */
#define RBUF_KEEP (1024u * 1024u)    /* larger buffers are dropped after an answer */
#define CONNECT_TIMEOUT_S 30.0       /* when no read timeout is configured          */
#define AUTH_TIMEOUT_S 10.0          /* a server without auth never answers "A"     */
#define ERROR_NULL_ANSWER "!xn\n"    /* py4j's answer to an unknown command         */

typedef struct ssl_st SSL;           /* OpenSSL's, opaque here (socket_conn.c) */
typedef struct ssl_ctx_st SSL_CTX;

typedef struct conn {
    int fd;
    SSL *ssl;               /* TLS session over fd, or NULL                 */
    bool broken;            /* failed mid-command: close instead of pooling */
    char *rbuf;             /* received bytes; an answer line starts at 0   */
    size_t rcap, rlen;
    p4j_wbuf *out;          /* the command being built (levels[depth - 1])  */
    p4j_wbuf out0;          /* level 0's buffer                             */
    p4j_wbuf **levels;      /* pinned: one buffer per nested use (1.. own)  */
    unsigned nlevels, depth;
    bool pinned;            /* belongs to a thread (pinned-thread mode)     */
    bool eof;               /* the peer closed the connection               */
    bool served;            /* opened by the peer (ops->serve), not by us   */
    bool held;              /* pooled: taken out of the pool by the caller
                               (P4J_CONN_TAKE), not in use by a call        */
    uint64_t id;            /* names its socket (idle_list), under sc->mu    */
    bool interrupted;       /* a wait on it was abandoned (sc->intr_fn)     */
    struct conn *next_idle;
    struct conn *prev, *next; /* every open connection (for shutdown)       */
} conn;

struct socket_client;

/* A thread's connection to one pinned-mode client (pinned-thread mode). */
typedef struct pin {
    struct socket_client *sc; /* NULL once the client is destroyed (under pins_mu) */
    conn *cn;
    struct pin *next;         /* the thread's other pins                           */
    struct pin *next_of_client; /* the client's other pins                        */
} pin;

typedef struct dup_entry {
    char *id;
    size_t extra; /* refs to this id beyond the first */
} dup_entry;

typedef struct socket_client {
    struct p4j_client base;
    char *address;
    int port;
    char label[300]; /* "address:port" for messages */
    char *token;     /* NULL: no auth */
    double timeout;  /* seconds, 0: none */
    struct sockaddr_storage sa;
    socklen_t salen;
    p4j_wire_proxy_fn proxy_fn;
    void *proxy_ctx;
    bool pinned;          /* pinned-thread mode                              */
    p4j_command_fn cmd_fn; /* pinned: runs commands the peer sends           */
    void *cmd_ctx;
    pin *pins;             /* pinned: threads' connections (under pins_mu)   */
    SSL_CTX *tls;          /* TLS for connections it opens (a reference), or NULL */
    char *tls_host;        /* the server's name (SNI) or address, or NULL          */
    bool tls_check_host;   /* its certificate must match tls_host                  */
    SSL_CTX *tls_serve;    /* TLS for connections served (ops->serve), or NULL     */
    p4j_socket_interrupt_fn intr_fn; /* asked when a signal interrupts a wait, or NULL */
    void *intr_ctx;

    pthread_mutex_t mu;
    conn *idle;
    conn *all;
    size_t nopen, nidle;
    uint64_t last_id;      /* the last connection id given (never reused)    */
    p4j_socket_counts counts;
    dup_entry *dups;
    size_t ndups, capdups;
} socket_client;

#define SC(c) ((socket_client *)(c))

/* Sets v to P4J_NULL without freeing anything. */
static inline void value_null(p4j_value *v)
{
    if (!v)
        return;
    v->kind = P4J_NULL;
    memset(&v->u, 0, sizeof v->u);
    v->ref.handle = NULL;
    v->ref.cls = NULL;
    v->owned = NULL;
}

/* Frees a value's storage and its ref id (for results we do not hand out). */
static inline void value_drop(p4j_value *v)
{
    p4j_value_clear(v);
    free(v->ref.handle);
    value_null(v);
}

/* ---- socket_conn.c: the connection layer ---------------------------------------- */

/* Fills err with P4J_ERR_CLOSED ("the gateway was shut down"); returns P4J_ERROR. */
p4j_status sock_closed_error(p4j_error *err);
/* Whether a wait that a signal interrupted goes on (false) or is abandoned (true: the
 * client's interrupt check asked); abandoning marks cn broken and interrupted (cn may
 * be NULL: a connection not made yet) and fills err with P4J_ERR_INTERRUPTED. */
bool sock_abandon_wait(socket_client *sc, conn *cn, p4j_error *err);
/* Sends n bytes on cn (TLS when cn->ssl); marks cn broken on failure. */
p4j_status sock_send_all(socket_client *sc, conn *cn, const char *p, size_t n, p4j_error *err);
/* Reads until the buffer holds a whole line starting at offset `start`; *linelen excludes
 * the '\n'. The peer closing sets cn->eof; failures mark cn broken. */
p4j_status sock_read_line_at(socket_client *sc, conn *cn, size_t start, double timeout_shown,
                             size_t *linelen, p4j_error *err);
/* sock_read_line_at from offset 0. */
p4j_status sock_read_line(socket_client *sc, conn *cn, double timeout_shown, size_t *linelen,
                          p4j_error *err);
/* Reads the rest of a command whose first line starts the read buffer, up to its "e"
 * line; *len is the length of the whole command in the buffer. */
p4j_status sock_read_command(socket_client *sc, conn *cn, double timeout, size_t *len,
                             p4j_error *err);
/* Drops the first `used` bytes of the read buffer. */
void sock_consume_bytes(conn *cn, size_t used);
/* Drops the line just decoded (and the buffer if it was adopted or grew large). */
void sock_consume_line(conn *cn, size_t linelen, bool adopted);
/* Opens a connection to the server (connect, TLS handshake, py4j's "A" command), not yet
 * linked into the client. */
p4j_status sock_conn_open(socket_client *sc, conn **out, p4j_error *err);
/* Makes a connection of accepted socket fd (owned from now on; closed on failure):
 * blocking, timeouts, the TLS handshake as server when sc->tls_serve is set. */
p4j_status sock_conn_adopt(socket_client *sc, int fd, double read_timeout_s, conn **out,
                           p4j_error *err);
/* Replaces cn's socket (linked, in use by the caller) with a new connection to the
 * server, keeping its write buffers: py4j's resend after a failed exchange. The old
 * socket is closed; counts one made, one closed, one retried. P4J_ERR_CLOSED when the
 * client shut down meanwhile. */
p4j_status sock_conn_reopen(socket_client *sc, conn *cn, p4j_error *err);
/* Closes and frees cn (already unlinked, or never linked). */
void sock_conn_free(conn *cn);
/* True when an idle connection still looks usable (not closed by the peer, nothing
 * unexpected waiting). */
bool sock_conn_alive(conn *cn);
/* Adds cn to the client's open connections (counted as made) unless the client is shut
 * down (false then). Called with sc->mu held. */
bool sock_link_unless_closed_locked(socket_client *sc, conn *cn);
/* Removes cn from the client's open connections (counted as closed). Called with sc->mu
 * held. */
void sock_unlink_locked(socket_client *sc, conn *cn);
/* Releases what p4j_socket_client_set_tls installed. */
void sock_tls_clear(socket_client *sc);

/* ---- socket_pool.c: the pooled regime --------------------------------------------- */

/* Takes an idle connection (a live one) or opens one. */
p4j_status sock_acquire_pooled(socket_client *sc, conn **out, p4j_error *err);
/* Ends an operation's use of pooled cn: back to the pool, or closed when it failed or
 * the client shut down. */
void sock_give_back_pooled(socket_client *sc, conn *cn);
/* Closes every idle pooled connection. */
void sock_pool_close_idle(socket_client *sc);
/* Takes the idle pooled connections out of the client as a chain (next_idle) for
 * sock_free_chain. Called with sc->mu held. */
conn *sock_take_idle_locked(socket_client *sc);
/* Closes and frees a chain taken by sock_take_idle_locked. */
void sock_free_chain(conn *chain);
/* ops->idle_list and ops->conn_ctl of both regimes (py4j's GatewayClient.deque). */
size_t sock_idle_list(p4j_client *c, uint64_t *ids, size_t cap);
int sock_conn_ctl(p4j_client *c, uint64_t id, p4j_conn_op op);

/* ---- socket_pinned.c: the pinned-thread regime ------------------------------------ */

/* Creates the thread key of pinned connections once; fails when none is left. */
p4j_status sock_pins_init(p4j_error *err);
/* The calling thread's connection to sc, or NULL. */
conn *sock_thread_conn(socket_client *sc);
/* One more use of a pinned connection by its thread (a write buffer of its own).
 * Returns 0 or -1 (out of memory). */
int sock_push_level(conn *cn);
/* The calling thread's connection, opened and pinned on first use. */
p4j_status sock_acquire_pinned(socket_client *sc, conn **out, p4j_error *err);
/* Ends one use of a pinned connection; closes it once unused when it failed or the
 * client shut down. */
void sock_give_back_pinned(socket_client *sc, conn *cn);
/* Ends the calling thread's pinned connection cn (not in use) and frees it. */
void sock_unpin_free(socket_client *sc, conn *cn);
/* Writes the ids of sc's idle pinned connections (see ops->idle_list); returns how
 * many there are. */
size_t sock_pinned_idle_list(socket_client *sc, uint64_t *ids, size_t cap);
/* Detaches every thread's pin from sc (the client is being destroyed). */
void sock_pins_forget_client(socket_client *sc);
/* Runs the peer's command whose first line (`first` bytes) starts the read buffer
 * through the command handler, on this thread, and sends the answer. */
p4j_status sock_run_peer_command(socket_client *sc, conn *cn, size_t first, double timeout,
                                 p4j_error *err);
/* ops->serve and ops->set_command_handler of the pinned ops table. */
p4j_status sock_serve(p4j_client *c, int fd, const char *auth_token, double read_timeout_s,
                      p4j_error *err);
void sock_set_command_handler(p4j_client *c, p4j_command_fn fn, void *ctx);

#endif /* P4J_SOCKET_INTERNAL_H */
