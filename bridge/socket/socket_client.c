/* bridge/socket/socket_client.c - p4j_client over TCP to a py4j GatewayServer (see
 * socket_client.h). Commands are built with the wire codec (wire.h) into the
 * connection's buffer, sent in one write, and answered by one line.
 *
 * Thread rules: the client is shared; a connection belongs to one thread between
 * acquire() and give_back(). `mu` guards the pool lists, counts and dup table.
 *
 * Pinned-thread mode (p4j_socket_client_new_pinned, a py4j ClientServer): each thread
 * has a connection of its own (a `pin` in the thread's key below), kept across calls
 * and closed when the thread exits, as py4j's ThreadLocalConnectionFinalizer does.
 * While a thread waits for an answer the peer may send a command on that connection
 * (a Java callback); it runs through the command handler on the waiting thread, which
 * may send commands of its own on the same connection: each nested use of a
 * connection gets a write buffer of its own (conn.levels). A pinned connection is
 * released by the thread (give_back at depth 0) or by the thread's exit; `pins_mu`
 * orders thread exit against the client's destruction.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "socket_client.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define RBUF_INITIAL (64u * 1024u)   /* read buffer of a fresh connection          */
#define RBUF_KEEP (1024u * 1024u)    /* larger buffers are dropped after an answer */
#define CONNECT_TIMEOUT_S 30.0       /* when no read timeout is configured          */
#define AUTH_TIMEOUT_S 10.0          /* a server without auth never answers "A"     */

typedef struct conn {
    int fd;
    bool broken;            /* failed mid-command: close instead of pooling */
    char *rbuf;             /* received bytes; an answer line starts at 0   */
    size_t rcap, rlen;
    p4j_wbuf *out;          /* the command being built (levels[depth - 1])  */
    p4j_wbuf out0;          /* level 0's buffer                             */
    p4j_wbuf **levels;      /* pinned: one buffer per nested use (1.. own)  */
    unsigned nlevels, depth;
    bool pinned;            /* belongs to a thread (pinned-thread mode)     */
    bool eof;               /* the peer closed the connection               */
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

    pthread_mutex_t mu;
    conn *idle;
    conn *all;
    size_t nopen, nidle;
    dup_entry *dups;
    size_t ndups, capdups;
} socket_client;

#define SC(c) ((socket_client *)(c))

static const p4j_client_ops socket_ops, pinned_ops;

/* ---- small helpers --------------------------------------------------------------- */

static void value_null(p4j_value *v)
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
static void value_drop(p4j_value *v)
{
    p4j_value_clear(v);
    free(v->ref.handle);
    value_null(v);
}

static bool is_class_ref(const p4j_ref *r)
{
    return r && r->cls == (void *)p4j_wire_class_tag;
}

static bool is_wellknown_id(const char *id)
{
    return !strcmp(id, P4J_SOCKET_ENTRY_POINT_ID) || !strcmp(id, P4J_SOCKET_DEFAULT_VIEW_ID) ||
           !strcmp(id, P4J_SOCKET_GATEWAY_SERVER_ID);
}

static const char *errtext(int e, char *buf, size_t n)
{
    return strerror_r(e, buf, n); /* GNU variant: returns the text */
}

static p4j_status closed_error(p4j_error *err)
{
    return p4j_error_set(err, P4J_ERR_CLOSED, "the gateway was shut down");
}

static void set_timeout(int fd, int opt, double seconds)
{
    struct timeval tv;
    tv.tv_sec = (time_t)seconds;
    tv.tv_usec = (suseconds_t)((seconds - (double)tv.tv_sec) * 1e6);
    setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv);
}

static inline void quickack(int fd)
{
#ifdef TCP_QUICKACK
    /* Linux leaves quick-ACK mode on its own: re-arm it around every read so a
     * server that writes an answer in two segments never waits on our delayed ACK. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
#else
    (void)fd;
#endif
}

/* Marks `cn` broken after a failed send/recv with errno `e` and fills `err`:
 * closed client, time-out ("timed out after N s <waiting>"), or the system error. */
static p4j_status io_failed(socket_client *sc, conn *cn, int e, const char *waiting,
                            const char *doing, double timeout_shown, p4j_error *err)
{
    char eb[128];
    cn->broken = true;
    if (sc->base.closed)
        return closed_error(err);
    if (e == EAGAIN || e == EWOULDBLOCK)
        return p4j_error_set(err, P4J_ERR_NETWORK, "timed out after %g s %s the py4j server at %s",
                             timeout_shown, waiting, sc->label);
    return p4j_error_set(err, P4J_ERR_NETWORK, "error while %s the py4j server at %s: %s", doing,
                         sc->label, errtext(e, eb, sizeof eb));
}

/* ---- connection I/O ------------------------------------------------------------- */

static p4j_status send_all(socket_client *sc, conn *cn, const char *p, size_t n,
                           p4j_error *err)
{
    size_t off = 0;
    while (off < n) {
        ssize_t w = send(cn->fd, p + off, n - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        return io_failed(sc, cn, w < 0 ? errno : EPIPE, "sending to", "sending to",
                         sc->timeout, err);
    }
    quickack(cn->fd);
    return P4J_OK;
}

/* Reads until the buffer holds a whole line starting at offset `start`; *linelen
 * excludes the '\n'. The peer closing the connection sets cn->eof. */
static p4j_status read_line_at(socket_client *sc, conn *cn, size_t start,
                               double timeout_shown, size_t *linelen, p4j_error *err)
{
    size_t scanned = start;
    for (;;) {
        if (cn->rlen > scanned) {
            char *nl = memchr(cn->rbuf + scanned, '\n', cn->rlen - scanned);
            if (nl) {
                *linelen = (size_t)(nl - cn->rbuf) - start;
                return P4J_OK;
            }
            scanned = cn->rlen;
        }
        if (cn->rlen == cn->rcap) {
            size_t cap = cn->rcap ? cn->rcap * 2 : RBUF_INITIAL;
            char *p = cap > cn->rcap ? realloc(cn->rbuf, cap) : NULL;
            if (!p) {
                cn->broken = true;
                return p4j_error_set(err, P4J_ERR_MEMORY,
                                     "out of memory reading an answer from the py4j server");
            }
            cn->rbuf = p;
            cn->rcap = cap;
        }
        ssize_t r = recv(cn->fd, cn->rbuf + cn->rlen, cn->rcap - cn->rlen, 0);
        if (r > 0) {
            cn->rlen += (size_t)r;
            quickack(cn->fd);
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            cn->eof = true;
        if (r == 0 && !sc->base.closed) {
            cn->broken = true;
            return p4j_error_set(err, P4J_ERR_NETWORK,
                                 "the py4j server at %s closed the connection "
                                 "(server stopped or crashed?)",
                                 sc->label);
        }
        return io_failed(sc, cn, errno, "waiting for", "receiving from", timeout_shown, err);
    }
}

/* Reads until the buffer holds a whole line; *linelen excludes the '\n'. */
static p4j_status read_line(socket_client *sc, conn *cn, double timeout_shown,
                            size_t *linelen, p4j_error *err)
{
    return read_line_at(sc, cn, 0, timeout_shown, linelen, err);
}

/* Drops the first `used` bytes of the read buffer. */
static void consume_bytes(conn *cn, size_t used)
{
    if (cn->rlen > used)
        memmove(cn->rbuf, cn->rbuf + used, cn->rlen - used);
    cn->rlen -= used;
}

/* Drops the line just decoded (and the buffer if it was adopted or grew large). */
static void consume_line(conn *cn, size_t linelen, bool adopted)
{
    size_t used = linelen + 1;
    if (adopted) {
        /* decode only adopts when nothing follows the line */
        cn->rbuf = NULL;
        cn->rcap = cn->rlen = 0;
        return;
    }
    if (cn->rlen > used)
        memmove(cn->rbuf, cn->rbuf + used, cn->rlen - used);
    cn->rlen -= used;
    if (cn->rcap > RBUF_KEEP && cn->rlen == 0) {
        free(cn->rbuf);
        cn->rbuf = NULL;
        cn->rcap = 0;
    }
}

static void conn_free(conn *cn)
{
    if (cn->fd >= 0)
        close(cn->fd);
    free(cn->rbuf);
    p4j_wbuf_free(&cn->out0);
    for (unsigned i = 0; i < cn->nlevels; i++) {
        p4j_wbuf_free(cn->levels[i]);
        free(cn->levels[i]);
    }
    free(cn->levels);
    free(cn);
}

/* A connection struct for socket `fd` (-1: not yet open); NULL when out of memory. */
static conn *conn_new(int fd)
{
    conn *cn = calloc(1, sizeof *cn);
    if (!cn)
        return NULL;
    cn->fd = fd;
    p4j_wbuf_init(&cn->out0);
    cn->out = &cn->out0;
    return cn;
}

static p4j_status conn_open(socket_client *sc, conn **out, p4j_error *err)
{
    char eb[128];
    conn *cn = conn_new(-1);
    if (!cn)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory opening a connection");
    cn->fd = socket(sc->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (cn->fd < 0) {
        int e = errno;
        conn_free(cn);
        return p4j_error_set(err, P4J_ERR_NETWORK, "cannot create a socket for %s: %s",
                             sc->label, errtext(e, eb, sizeof eb));
    }
    int rc = connect(cn->fd, (struct sockaddr *)&sc->sa, sc->salen);
    if (rc < 0 && errno == EINPROGRESS) {
        double limit = sc->timeout > 0 ? sc->timeout : CONNECT_TIMEOUT_S;
        struct pollfd pf = {.fd = cn->fd, .events = POLLOUT};
        int pr;
        do
            pr = poll(&pf, 1, (int)(limit * 1000.0));
        while (pr < 0 && errno == EINTR);
        if (pr == 0) {
            conn_free(cn);
            return p4j_error_set(err, P4J_ERR_NETWORK,
                                 "timed out after %g s connecting to the py4j server at %s",
                                 limit, sc->label);
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (pr < 0)
            soerr = errno;
        else
            getsockopt(cn->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        rc = soerr ? -1 : 0;
        errno = soerr;
    }
    if (rc < 0) {
        int e = errno;
        conn_free(cn);
        return p4j_error_set(err, P4J_ERR_NETWORK,
                             "cannot connect to the py4j server at %s: %s", sc->label,
                             errtext(e, eb, sizeof eb));
    }
    int fl = fcntl(cn->fd, F_GETFL);
    fcntl(cn->fd, F_SETFL, fl & ~O_NONBLOCK);
    int one = 1;
    setsockopt(cn->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sc->timeout > 0) {
        set_timeout(cn->fd, SO_RCVTIMEO, sc->timeout);
        set_timeout(cn->fd, SO_SNDTIMEO, sc->timeout);
    }

    if (sc->token) {
        /* py4j's "A" command: the token on its own line, no "e" line. */
        double t = sc->timeout > 0 && sc->timeout < AUTH_TIMEOUT_S ? sc->timeout
                                                                   : AUTH_TIMEOUT_S;
        set_timeout(cn->fd, SO_RCVTIMEO, t);
        p4j_wbuf *b = cn->out;
        p4j_wbuf_reset(b);
        p4j_wbuf_put(b, "A\n", 2);
        p4j_wbuf_put(b, sc->token, strlen(sc->token));
        p4j_wbuf_put(b, "\n", 1);
        size_t n = 0;
        if (b->oom) {
            conn_free(cn);
            return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        }
        if (send_all(sc, cn, b->data, b->len, err) != P4J_OK ||
            read_line(sc, cn, t, &n, err) != P4J_OK) {
            conn_free(cn);
            return p4j_error_set(err, P4J_ERR_AUTH,
                                 "authentication with the py4j server at %s failed: %s",
                                 sc->label, err->message ? err->message : "no answer");
        }
        if (!(n == 3 && !memcmp(cn->rbuf, "!yv", 3))) {
            p4j_value v;
            p4j_error e2 = {0};
            p4j_wire_decode(cn->rbuf, n, NULL, &v, &e2);
            value_drop(&v);
            p4j_error_set(err, P4J_ERR_AUTH,
                          "authentication with the py4j server at %s failed: %s", sc->label,
                          e2.message ? e2.message : "token refused");
            p4j_error_clear(NULL, &e2);
            conn_free(cn);
            return P4J_ERROR;
        }
        consume_line(cn, n, false);
        set_timeout(cn->fd, SO_RCVTIMEO, sc->timeout > 0 ? sc->timeout : 0);
    }
    *out = cn;
    return P4J_OK;
}

/* True when an idle pooled connection still looks usable (not closed by the peer,
 * nothing unexpected waiting). */
static bool conn_alive(conn *cn)
{
    char c;
    ssize_t r = recv(cn->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static void unlink_locked(socket_client *sc, conn *cn)
{
    if (cn->prev)
        cn->prev->next = cn->next;
    else
        sc->all = cn->next;
    if (cn->next)
        cn->next->prev = cn->prev;
    cn->prev = cn->next = NULL;
    sc->nopen--;
}

/* Adds `cn` to the client's open connections unless the client is shut down; false
 * then. Called with sc->mu held. */
static bool link_unless_closed_locked(socket_client *sc, conn *cn)
{
    if (sc->base.closed)
        return false;
    cn->next = sc->all;
    if (sc->all)
        sc->all->prev = cn;
    sc->all = cn;
    sc->nopen++;
    return true;
}

static p4j_status acquire_pinned(socket_client *sc, conn **out, p4j_error *err);

/* Takes an idle connection or opens one. */
static p4j_status acquire_pooled(socket_client *sc, conn **out, p4j_error *err)
{
    for (;;) {
        if (sc->base.closed)
            return closed_error(err);
        pthread_mutex_lock(&sc->mu);
        conn *cn = sc->idle;
        if (cn) {
            sc->idle = cn->next_idle;
            cn->next_idle = NULL;
            sc->nidle--;
        }
        pthread_mutex_unlock(&sc->mu);
        if (!cn)
            break;
        if (conn_alive(cn)) {
            *out = cn;
            return P4J_OK;
        }
        pthread_mutex_lock(&sc->mu);
        unlink_locked(sc, cn);
        pthread_mutex_unlock(&sc->mu);
        conn_free(cn);
    }
    conn *cn;
    if (conn_open(sc, &cn, err) != P4J_OK)
        return P4J_ERROR;
    pthread_mutex_lock(&sc->mu);
    bool closed = !link_unless_closed_locked(sc, cn);
    pthread_mutex_unlock(&sc->mu);
    if (closed) {
        conn_free(cn);
        return closed_error(err);
    }
    *out = cn;
    return P4J_OK;
}

/* The connection for one operation: the calling thread's own in pinned-thread mode,
 * else one from the pool. */
static p4j_status acquire(socket_client *sc, conn **out, p4j_error *err)
{
    return sc->pinned ? acquire_pinned(sc, out, err) : acquire_pooled(sc, out, err);
}

static void pop_level(conn *cn);
static void unpin_free(socket_client *sc, conn *cn);

/* Ends an operation's use of `cn`: a pinned connection stays with its thread (closed
 * once unused when it failed or the client shut down); a pooled one goes back to the
 * pool, or is closed when it failed or the client shut down. */
static void give_back(socket_client *sc, conn *cn)
{
    if (cn->pinned) {
        pop_level(cn);
        if (cn->depth == 0 && (cn->broken || sc->base.closed))
            unpin_free(sc, cn);
        return;
    }
    pthread_mutex_lock(&sc->mu);
    bool drop = cn->broken || sc->base.closed;
    if (drop) {
        unlink_locked(sc, cn);
    } else {
        cn->next_idle = sc->idle;
        sc->idle = cn;
        sc->nidle++;
    }
    pthread_mutex_unlock(&sc->mu);
    if (drop)
        conn_free(cn);
}

/* ---- pinned-thread mode: a connection per thread ------------------------------- */

static pthread_mutex_t pins_mu = PTHREAD_MUTEX_INITIALIZER; /* every pin's fields */
static pthread_key_t pins_key;  /* value: the thread's list of pins */
static pthread_once_t pins_once = PTHREAD_ONCE_INIT;
static int pins_key_err;

/* The key's destructor: a thread exits; its connections close (Java's side of each then
 * ends its thread, as when py4j's ThreadLocalConnectionFinalizer runs). */
static void pins_thread_exit(void *head)
{
    conn *drop = NULL;
    pthread_mutex_lock(&pins_mu);
    for (pin *p = head, *next; p; p = next) {
        next = p->next;
        socket_client *sc = p->sc;
        if (sc) {
            pin **pp = &sc->pins;
            while (*pp && *pp != p)
                pp = &(*pp)->next_of_client;
            if (*pp)
                *pp = p->next_of_client;
            pthread_mutex_lock(&sc->mu);
            unlink_locked(sc, p->cn);
            pthread_mutex_unlock(&sc->mu);
            p->cn->next_idle = drop;
            drop = p->cn;
        }
        free(p);
    }
    pthread_mutex_unlock(&pins_mu);
    while (drop) {
        conn *next = drop->next_idle;
        conn_free(drop);
        drop = next;
    }
}

static void pins_make_key(void)
{
    pins_key_err = pthread_key_create(&pins_key, pins_thread_exit);
}

/* The calling thread's pin for `sc`, or NULL; drops pins of destroyed clients on the
 * way. Called with pins_mu held. */
static pin *thread_pin_locked(socket_client *sc)
{
    pin *head = pthread_getspecific(pins_key);
    pin **pp = &head, *found = NULL;
    bool changed = false;
    while (*pp) {
        pin *p = *pp;
        if (!p->sc) { /* its client is gone */
            *pp = p->next;
            free(p);
            changed = true;
            continue;
        }
        if (p->sc == sc)
            found = p;
        pp = &p->next;
    }
    if (changed)
        pthread_setspecific(pins_key, head);
    return found;
}

/* The calling thread's connection to `sc`, or NULL. */
static conn *thread_conn(socket_client *sc)
{
    pthread_mutex_lock(&pins_mu);
    pin *p = thread_pin_locked(sc);
    conn *cn = p ? p->cn : NULL;
    pthread_mutex_unlock(&pins_mu);
    return cn;
}

/* Makes `cn` the calling thread's connection to `sc` (in use once: depth 1) and an
 * open connection of the client. P4J_ERR_CLOSED (cn freed) after shutdown. */
static p4j_status pin_conn(socket_client *sc, conn *cn, p4j_error *err)
{
    pin *p = calloc(1, sizeof *p);
    if (!p) {
        conn_free(cn);
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    cn->pinned = true;
    cn->depth = 1;
    cn->out = &cn->out0;
    p->sc = sc;
    p->cn = cn;
    pthread_mutex_lock(&pins_mu);
    pthread_mutex_lock(&sc->mu);
    bool closed = !link_unless_closed_locked(sc, cn);
    pthread_mutex_unlock(&sc->mu);
    if (!closed) {
        p->next = pthread_getspecific(pins_key);
        if (pthread_setspecific(pins_key, p) != 0) {
            pthread_mutex_lock(&sc->mu);
            unlink_locked(sc, cn);
            pthread_mutex_unlock(&sc->mu);
            closed = true;
        } else {
            p->next_of_client = sc->pins;
            sc->pins = p;
        }
    }
    pthread_mutex_unlock(&pins_mu);
    if (closed) {
        free(p);
        conn_free(cn);
        return sc->base.closed ? closed_error(err)
                               : p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    return P4J_OK;
}

/* Ends the calling thread's pinned connection `cn` to `sc` (not in use) and frees it. */
static void unpin_free(socket_client *sc, conn *cn)
{
    pthread_mutex_lock(&pins_mu);
    pin *head = pthread_getspecific(pins_key);
    for (pin **pp = &head; *pp; pp = &(*pp)->next) {
        if ((*pp)->cn == cn && (*pp)->sc == sc) {
            pin *p = *pp;
            *pp = p->next;
            pthread_setspecific(pins_key, head);
            for (pin **cp = &sc->pins; *cp; cp = &(*cp)->next_of_client) {
                if (*cp == p) {
                    *cp = p->next_of_client;
                    break;
                }
            }
            free(p);
            break;
        }
    }
    pthread_mutex_lock(&sc->mu);
    unlink_locked(sc, cn);
    pthread_mutex_unlock(&sc->mu);
    pthread_mutex_unlock(&pins_mu);
    conn_free(cn);
}

/* One more use of a pinned connection by its thread: a write buffer of its own, so
 * that a command built by an outer use (e.g. while converting its arguments) stays
 * intact. Returns 0 or -1 (out of memory). */
static int push_level(conn *cn)
{
    if (cn->depth == 0) {
        cn->out = &cn->out0;
        cn->depth = 1;
        return 0;
    }
    unsigned i = cn->depth - 1;
    if (i >= cn->nlevels) {
        p4j_wbuf **lv = realloc(cn->levels, (cn->nlevels + 1) * sizeof *lv);
        if (!lv)
            return -1;
        cn->levels = lv;
        if (!(lv[cn->nlevels] = malloc(sizeof **lv)))
            return -1;
        p4j_wbuf_init(lv[cn->nlevels]);
        cn->nlevels++;
    }
    cn->out = cn->levels[i];
    cn->depth++;
    return 0;
}

/* Ends one use of a pinned connection (see push_level). */
static void pop_level(conn *cn)
{
    if (cn->depth > 0)
        cn->depth--;
    cn->out = cn->depth <= 1 ? &cn->out0 : cn->levels[cn->depth - 2];
}

/* The calling thread's connection (pinned-thread mode), opened on first use. */
static p4j_status acquire_pinned(socket_client *sc, conn **out, p4j_error *err)
{
    if (sc->base.closed)
        return closed_error(err);
    conn *cn = thread_conn(sc);
    if (cn && cn->depth == 0 && cn->broken) { /* failed earlier: a new one */
        unpin_free(sc, cn);
        cn = NULL;
    }
    if (cn) {
        if (push_level(cn) < 0)
            return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        *out = cn;
        return P4J_OK;
    }
    if (conn_open(sc, &cn, err) != P4J_OK || pin_conn(sc, cn, err) != P4J_OK)
        return P4J_ERROR;
    *out = cn;
    return P4J_OK;
}

/* ---- one command ---------------------------------------------------------------- */

static p4j_wbuf *begin(conn *cn, const char *cmd)
{
    p4j_wbuf_reset(cn->out);
    p4j_wire_cpart(cn->out, cmd);
    return cn->out;
}

static const char ERROR_NULL_ANSWER[] = "!xn\n"; /* py4j's answer to an unknown command */

/* Reads the rest of a command the peer sent, whose first line starts the read buffer,
 * up to its "e" line; *len is the length of the whole command in the buffer. */
static p4j_status read_command(socket_client *sc, conn *cn, double timeout, size_t *len,
                               p4j_error *err)
{
    size_t pos = 0, n;
    for (;;) {
        if (read_line_at(sc, cn, pos, timeout, &n, err) != P4J_OK)
            return P4J_ERROR;
        bool end = n == 1 && cn->rbuf[pos] == 'e';
        pos += n + 1;
        if (end) {
            *len = pos;
            return P4J_OK;
        }
    }
}

/* Runs the peer's command whose first line (`first` bytes) starts the read buffer: py4j's
 * "c" (call a Python proxy) or "g" (a proxy was released) through the command handler,
 * on this thread, and sends the answer. Fails, marking cn broken, on an I/O error, a
 * command that is not py4j's, or a connection that broke while the handler ran. */
static p4j_status run_peer_command(socket_client *sc, conn *cn, size_t first, double timeout,
                                   p4j_error *err)
{
    if (first != 1 || (cn->rbuf[0] != 'c' && cn->rbuf[0] != 'g')) {
        p4j_error ignored = {0};
        send_all(sc, cn, ERROR_NULL_ANSWER, sizeof ERROR_NULL_ANSWER - 1, &ignored);
        p4j_error_clear(NULL, &ignored);
        cn->broken = true;
        return p4j_error_set(err, P4J_ERR_NETWORK,
                             "the py4j peer at %s sent an unknown command \"%.*s\"",
                             sc->label, (int)(first < 40 ? first : 40), cn->rbuf);
    }
    size_t len;
    if (read_command(sc, cn, timeout, &len, err) != P4J_OK)
        return P4J_ERROR;
    char *text = malloc(len + 1);
    if (!text) {
        cn->broken = true;
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory reading a command");
    }
    memcpy(text, cn->rbuf, len);
    text[len] = 0;
    consume_bytes(cn, len);
    char *answer = NULL;
    size_t alen = 0;
    int rc = sc->cmd_fn ? sc->cmd_fn(sc->cmd_ctx, text, len, &answer, &alen) : -1;
    free(text);
    if (cn->broken) { /* a command the handler sent on this connection failed */
        free(answer);
        if (sc->base.closed)
            return closed_error(err);
        return p4j_error_set(err, P4J_ERR_NETWORK,
                             "the connection to the py4j peer at %s failed during a callback",
                             sc->label);
    }
    p4j_status st = rc == 0 && answer
                        ? send_all(sc, cn, answer, alen, err)
                        : send_all(sc, cn, ERROR_NULL_ANSWER, sizeof ERROR_NULL_ANSWER - 1, err);
    free(answer);
    return st;
}

/* Reads the answer line to the command just sent (*n: its length). In pinned-thread
 * mode the peer may first send commands of its own (callbacks): each runs here, on
 * the waiting thread, before the wait goes on. */
static p4j_status await_answer(socket_client *sc, conn *cn, size_t *n, p4j_error *err)
{
    for (;;) {
        if (read_line(sc, cn, sc->timeout, n, err) != P4J_OK)
            return P4J_ERROR;
        if (!sc->pinned || *n == 0 || cn->rbuf[0] == '!')
            return P4J_OK;
        if (run_peer_command(sc, cn, *n, sc->timeout, err) != P4J_OK)
            return P4J_ERROR;
    }
}

/* Sends the command in cn->out and decodes its answer into `out`. A Java exception
 * leaves its throwable ref in `out` (P4J_ANSWER_JAVA_ERROR). Transport failures
 * and unusable answers return P4J_ANSWER_FATAL/MALFORMED with the connection
 * marked broken. */
static p4j_answer exchange(socket_client *sc, conn *cn, p4j_value *out, p4j_error *err)
{
    p4j_wbuf *b = cn->out;
    value_null(out);
    if (b->oom) {
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory building a py4j command");
        return P4J_ANSWER_ERROR;
    }
    if (b->invalid) {
        p4j_error_set(err, P4J_ERR_BRIDGE, "a name or id contains a line break");
        return P4J_ANSWER_ERROR;
    }
    size_t n;
    if (cn->broken) { /* pinned: an inner use of the connection failed */
        if (sc->base.closed)
            closed_error(err);
        else
            p4j_error_set(err, P4J_ERR_NETWORK, "the connection to the py4j server at %s "
                          "failed earlier", sc->label);
        return P4J_ANSWER_FATAL;
    }
    if (send_all(sc, cn, b->data, b->len, err) != P4J_OK ||
        await_answer(sc, cn, &n, err) != P4J_OK)
        return P4J_ANSWER_FATAL;
    /* Adopt the buffer for big payloads only when the line is all it holds. */
    void *block = cn->rbuf;
    bool may_adopt = cn->rlen == n + 1;
    p4j_answer a = p4j_wire_decode(cn->rbuf, n, may_adopt ? &block : NULL, out, err);
    consume_line(cn, n, may_adopt && block == NULL);
    if (a == P4J_ANSWER_FATAL || a == P4J_ANSWER_MALFORMED) {
        cn->broken = true;
        if (a == P4J_ANSWER_FATAL && err->kind == P4J_ERR_NETWORK)
            p4j_error_set(err, P4J_ERR_NETWORK,
                          "the py4j server at %s dropped the connection", sc->label);
    }
    if (a == P4J_ANSWER_ERROR && !err->message)
        p4j_error_set(err, P4J_ERR_BRIDGE, "the py4j server reported an error");
    if (a == P4J_ANSWER_ERROR && !sc->token && err->message &&
        !strncmp(err->message, "Authentication error", 20)) {
        /* the server wants a token and closes the connection after saying so */
        cn->broken = true;
        p4j_error_set(err, P4J_ERR_AUTH, "the py4j server at %s requires an auth token: %s",
                      sc->label, err->message);
    }
    return a;
}

/* Deletes a server-side object id on cn, ignoring every outcome. */
static void quiet_delete(socket_client *sc, conn *cn, const char *id)
{
    if (cn->broken)
        return;
    p4j_wbuf *b = begin(cn, "m");
    p4j_wire_cpart(b, "d");
    p4j_wire_cpart(b, id);
    p4j_wire_end(b);
    p4j_value v;
    p4j_error e = {0};
    if (exchange(sc, cn, &v, &e) == P4J_ANSWER_JAVA_ERROR)
        free(v.ref.handle);
    value_drop(&v);
    p4j_error_clear(NULL, &e);
}

/* Calls a no-argument method on object `id`; on success *res is its result. */
static p4j_answer call0(socket_client *sc, conn *cn, const char *id, const char *method,
                        p4j_value *res, p4j_error *err)
{
    p4j_wbuf *b = begin(cn, "c");
    p4j_wire_cpart(b, id);
    p4j_wire_cpart(b, method);
    p4j_wire_end(b);
    p4j_answer a = exchange(sc, cn, res, err);
    if (a == P4J_ANSWER_JAVA_ERROR) {
        quiet_delete(sc, cn, res->ref.handle);
        value_drop(res);
    }
    return a;
}

static bool looks_like_class_name(const char *s, size_t n)
{
    bool dot = false;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.')
            dot = true;
        else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                   (c >= '0' && c <= '9') || c == '_' || c == '$'))
            return false;
    }
    return dot;
}

static char *dup_text(const void *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

/* Fills err->message and err->java_class for the throwable in err: one toString()
 * call ("cls: message"), plus getClass().getName() only when toString() was
 * overridden beyond recognition. Failures leave the fields empty. */
static void describe_throwable(socket_client *sc, conn *cn, p4j_error *err)
{
    const char *id = err->throwable.handle;
    p4j_value v;
    p4j_error e = {0};
    char *text = NULL;
    size_t tlen = 0;
    if (call0(sc, cn, id, "toString", &v, &e) == P4J_ANSWER_VALUE && v.kind == P4J_STRING) {
        text = dup_text(v.u.s.data, v.u.s.len);
        tlen = v.u.s.len;
    }
    value_drop(&v);
    p4j_error_clear(NULL, &e);
    if (!text) {
        err->message = dup_text("", 0);
        return;
    }
    const char *sep = strstr(text, ": ");
    size_t clen = sep ? (size_t)(sep - text) : tlen;
    if (looks_like_class_name(text, clen)) {
        err->java_class = dup_text(text, clen);
        err->message = dup_text(sep ? sep + 2 : "", sep ? tlen - clen - 2 : 0);
        free(text);
        return;
    }
    /* toString() is custom: ask for the class name, keep toString() as the message. */
    if (call0(sc, cn, id, "getClass", &v, &e) == P4J_ANSWER_VALUE && v.ref.handle) {
        p4j_value name;
        p4j_error e2 = {0};
        if (call0(sc, cn, v.ref.handle, "getName", &name, &e2) == P4J_ANSWER_VALUE &&
            name.kind == P4J_STRING)
            err->java_class = dup_text(name.u.s.data, name.u.s.len);
        value_drop(&name);
        p4j_error_clear(NULL, &e2);
        quiet_delete(sc, cn, v.ref.handle);
    }
    value_drop(&v);
    p4j_error_clear(NULL, &e);
    err->message = text;
}

/* exchange() plus Java exceptions turned into P4J_ERR_JAVA errors. */
static p4j_answer transact(socket_client *sc, conn *cn, p4j_value *out, p4j_error *err)
{
    p4j_answer a = exchange(sc, cn, out, err);
    if (a == P4J_ANSWER_JAVA_ERROR) {
        free(err->message);
        free(err->java_class);
        err->message = err->java_class = NULL;
        err->kind = P4J_ERR_JAVA;
        err->throwable.handle = out->ref.handle;
        err->throwable.cls = NULL;
        value_null(out);
        describe_throwable(sc, cn, err);
    }
    return a;
}

/* Maps an answer to the op's status: values pass, everything else is an error. */
static p4j_status value_status(p4j_answer a, p4j_value *out, p4j_error *err)
{
    switch (a) {
    case P4J_ANSWER_VALUE:
        return P4J_OK;
    case P4J_ANSWER_NO_MEMBER:
        value_null(out);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "no such member");
    default:
        return P4J_ERROR;
    }
}

/* Fails when a ref argument is missing. */
static p4j_status need_ref(const p4j_ref *r, const char *what, p4j_error *err)
{
    if (!r || !r->handle)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "%s is NULL or already released", what);
    return P4J_OK;
}

static p4j_status put_args(socket_client *sc, p4j_wbuf *b, const p4j_value *args,
                           size_t nargs, p4j_error *err)
{
    for (size_t i = 0; i < nargs; i++)
        if (p4j_wire_arg(b, &args[i], sc->proxy_fn, sc->proxy_ctx, err) != P4J_OK)
            return P4J_ERROR;
    return P4J_OK;
}

/* Ends command `b` (begun on `cn`) with the argument parts, sends it and reads the
 * answer into `out`; gives `cn` back. The tail of call and construct. */
static p4j_status send_with_args(socket_client *sc, conn *cn, p4j_wbuf *b,
                                 const p4j_value *args, size_t nargs, p4j_value *out,
                                 p4j_error *err)
{
    p4j_answer a = P4J_ANSWER_ERROR;
    if (put_args(sc, b, args, nargs, err) == P4J_OK) {
        p4j_wire_end(b);
        a = transact(sc, cn, out, err);
    }
    give_back(sc, cn);
    return value_status(a, out, err);
}

/* Appends "r<view id>" (the default view when view is NULL). */
static void put_view(p4j_wbuf *b, const p4j_ref *view)
{
    p4j_wbuf_put(b, "r", 1);
    p4j_wire_cpart(b, view && view->handle ? (const char *)view->handle
                                           : P4J_SOCKET_DEFAULT_VIEW_ID);
}

/* Starts an op: checks the client and takes a connection (each op has already set
 * `out` to null with value_null, before its argument checks). */
#define OP_BEGIN(sc, cn, err)                                                              \
    do {                                                                                   \
        if (acquire((sc), &(cn), (err)) != P4J_OK)                                         \
            return P4J_ERROR;                                                              \
    } while (0)

/* ---- operations --------------------------------------------------------------------- */

static p4j_status op_call(p4j_client *c, const p4j_ref *target, unsigned flags,
                          const char *name, size_t name_len, const p4j_value *args,
                          size_t nargs, p4j_value *out, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    value_null(out);
    if (need_ref(target, "call target", err) != P4J_OK)
        return P4J_ERROR;
    OP_BEGIN(sc, cn, err);
    p4j_wbuf *b = begin(cn, "c");
    if ((flags & P4J_CALL_STATIC) || is_class_ref(target))
        p4j_wbuf_put(b, "z:", 2);
    p4j_wire_cpart(b, target->handle);
    p4j_wire_part(b, name, name_len);
    return send_with_args(sc, cn, b, args, nargs, out, err);
}

static p4j_status op_construct(p4j_client *c, const p4j_ref *cls, const p4j_value *args,
                               size_t nargs, p4j_value *out, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    value_null(out);
    if (need_ref(cls, "class", err) != P4J_OK)
        return P4J_ERROR;
    OP_BEGIN(sc, cn, err);
    p4j_wbuf *b = begin(cn, "i");
    p4j_wire_cpart(b, cls->handle);
    return send_with_args(sc, cn, b, args, nargs, out, err);
}

static p4j_status op_field_get(p4j_client *c, const p4j_ref *target, unsigned flags,
                               const char *name, p4j_value *out, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    value_null(out);
    if (need_ref(target, "field owner", err) != P4J_OK)
        return P4J_ERROR;
    bool is_static = (flags & P4J_CALL_STATIC) || is_class_ref(target);
    OP_BEGIN(sc, cn, err);
    p4j_wbuf *b;
    if (is_static) {
        /* py4j reads static fields through "r m" (its "f g" needs an instance). */
        b = begin(cn, "r");
        p4j_wire_cpart(b, "m");
    } else {
        b = begin(cn, "f");
        p4j_wire_cpart(b, "g");
    }
    p4j_wire_cpart(b, target->handle);
    p4j_wire_cpart(b, name);
    p4j_wire_end(b);
    p4j_answer a = transact(sc, cn, out, err);
    give_back(sc, cn);
    if (a == P4J_ANSWER_VALUE && is_static &&
        (out->kind == P4J_METHOD || out->kind == P4J_CLASS || out->kind == P4J_PACKAGE)) {
        value_drop(out);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "%s.%s is not a field",
                             (const char *)target->handle, name);
    }
    if (a == P4J_ANSWER_NO_MEMBER || (is_static && a == P4J_ANSWER_ERROR &&
                                      err->kind == P4J_ERR_BRIDGE)) {
        value_null(out);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "no field %s in %s %s", name,
                             is_static ? "class" : "object", (const char *)target->handle);
    }
    return value_status(a, out, err);
}

/* Static field write: py4j has no command for it, so go through reflection:
 * Class (r c) -> getField(name) -> Field.set(null, value). */
static p4j_status static_field_set(socket_client *sc, conn *cn, const char *fqn,
                                   const char *name, const p4j_value *value, p4j_error *err)
{
    p4j_value cls, field, res;
    p4j_status st = P4J_ERROR;
    value_null(&field);
    p4j_wbuf *b = begin(cn, "r");
    p4j_wire_cpart(b, "c");
    p4j_wire_cpart(b, fqn);
    p4j_wire_end(b);
    if (transact(sc, cn, &cls, err) != P4J_ANSWER_VALUE || !cls.ref.handle) {
        value_drop(&cls);
        return P4J_ERROR;
    }
    b = begin(cn, "c");
    p4j_wire_cpart(b, cls.ref.handle);
    p4j_wire_cpart(b, "getField");
    p4j_value nv;
    value_null(&nv);
    nv.kind = P4J_STRING;
    nv.u.s.data = name;
    nv.u.s.len = strlen(name);
    nv.u.s.enc = P4J_ENC_UTF8;
    p4j_wire_arg(b, &nv, NULL, NULL, err);
    p4j_wire_end(b);
    p4j_answer a = exchange(sc, cn, &field, err);
    if (a == P4J_ANSWER_JAVA_ERROR) {
        quiet_delete(sc, cn, field.ref.handle);
        value_drop(&field);
        p4j_error_set(err, P4J_ERR_BRIDGE, "no field %s in class %s", name, fqn);
        goto done;
    }
    if (a != P4J_ANSWER_VALUE || !field.ref.handle)
        goto done;
    b = begin(cn, "c");
    p4j_wire_cpart(b, field.ref.handle);
    p4j_wire_cpart(b, "set");
    p4j_wbuf_put(b, "n\n", 2);
    if (p4j_wire_arg(b, value, sc->proxy_fn, sc->proxy_ctx, err) != P4J_OK)
        goto done;
    p4j_wire_end(b);
    a = transact(sc, cn, &res, err);
    value_drop(&res);
    st = a == P4J_ANSWER_VALUE ? P4J_OK : P4J_ERROR;
done:
    if (field.ref.handle)
        quiet_delete(sc, cn, field.ref.handle);
    quiet_delete(sc, cn, cls.ref.handle);
    value_drop(&field);
    value_drop(&cls);
    return st;
}

static p4j_status op_field_set(p4j_client *c, const p4j_ref *target, unsigned flags,
                               const char *name, const p4j_value *value, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    if (need_ref(target, "field owner", err) != P4J_OK)
        return P4J_ERROR;
    if (acquire(sc, &cn, err) != P4J_OK)
        return P4J_ERROR;
    p4j_status st;
    if ((flags & P4J_CALL_STATIC) || is_class_ref(target)) {
        st = static_field_set(sc, cn, target->handle, name, value, err);
    } else {
        p4j_wbuf *b = begin(cn, "f");
        p4j_wire_cpart(b, "s");
        p4j_wire_cpart(b, target->handle);
        p4j_wire_cpart(b, name);
        p4j_value res;
        p4j_answer a = P4J_ANSWER_ERROR;
        value_null(&res);
        if (p4j_wire_arg(b, value, sc->proxy_fn, sc->proxy_ctx, err) == P4J_OK) {
            p4j_wire_end(b);
            a = transact(sc, cn, &res, err);
        }
        value_drop(&res);
        if (a == P4J_ANSWER_NO_MEMBER)
            p4j_error_set(err, P4J_ERR_BRIDGE, "no field %s in object %s", name,
                          (const char *)target->handle);
        st = a == P4J_ANSWER_VALUE ? P4J_OK : P4J_ERROR;
    }
    give_back(sc, cn);
    return st;
}

static p4j_status op_resolve(p4j_client *c, const p4j_ref *view, const char *name,
                             p4j_value *out, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    value_null(out);
    OP_BEGIN(sc, cn, err);
    p4j_wbuf *b = begin(cn, "r");
    p4j_wire_cpart(b, "u");
    p4j_wire_cpart(b, name);
    put_view(b, view);
    p4j_wire_end(b);
    p4j_answer a = transact(sc, cn, out, err);
    give_back(sc, cn);
    if (a == P4J_ANSWER_VALUE && out->kind != P4J_CLASS && out->kind != P4J_PACKAGE) {
        value_drop(out);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "unexpected answer resolving %s", name);
    }
    if (a == P4J_ANSWER_ERROR && err->kind == P4J_ERR_BRIDGE) {
        char *why = err->message;
        err->message = NULL;
        p4j_error_set(err, P4J_ERR_BRIDGE, "%s does not exist in the JVM -- %s", name,
                      why ? why : "");
        free(why);
    }
    return value_status(a, out, err);
}

static p4j_status op_static_member(p4j_client *c, const p4j_ref *cls, const char *name,
                                   p4j_value *out, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    value_null(out);
    if (need_ref(cls, "class", err) != P4J_OK)
        return P4J_ERROR;
    OP_BEGIN(sc, cn, err);
    p4j_wbuf *b = begin(cn, "r");
    p4j_wire_cpart(b, "m");
    p4j_wire_cpart(b, cls->handle);
    p4j_wire_cpart(b, name);
    p4j_wire_end(b);
    p4j_answer a = transact(sc, cn, out, err);
    give_back(sc, cn);
    const char *fqn = cls->handle;
    if (a == P4J_ANSWER_VALUE && out->kind == P4J_CLASS && out->u.s.len == 0) {
        /* "!yc" names no class: the nested class is fqn$name. */
        value_drop(out);
        size_t n = strlen(fqn) + 1 + strlen(name);
        char *nested = malloc(n + 1);
        if (!nested)
            return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        snprintf(nested, n + 1, "%s$%s", fqn, name);
        if (p4j_value_set_string(out, P4J_CLASS, nested, n, P4J_ENC_UTF8) < 0) {
            free(nested);
            value_null(out);
            return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        }
        out->ref.handle = nested;
        out->ref.cls = (void *)p4j_wire_class_tag;
    }
    if ((a == P4J_ANSWER_ERROR && err->kind == P4J_ERR_BRIDGE) || a == P4J_ANSWER_NO_MEMBER) {
        value_null(out);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "%s.%s does not exist in the JVM", fqn,
                             name);
    }
    return value_status(a, out, err);
}

static p4j_status op_view_new(p4j_client *c, const char *name, p4j_value *out,
                              p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    value_null(out);
    OP_BEGIN(sc, cn, err);
    p4j_wbuf *b = begin(cn, "j");
    p4j_wire_cpart(b, "c");
    p4j_wbuf_put(b, "s", 1);
    p4j_wire_escaped_part(b, name ? name : "", name ? strlen(name) : 0);
    p4j_wire_end(b);
    p4j_answer a = transact(sc, cn, out, err);
    give_back(sc, cn);
    return value_status(a, out, err);
}

static p4j_status op_view_import(p4j_client *c, const p4j_ref *view, const char *pattern,
                                 bool remove, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    if (acquire(sc, &cn, err) != P4J_OK)
        return P4J_ERROR;
    p4j_wbuf *b = begin(cn, "j");
    p4j_wire_cpart(b, remove ? "r" : "i");
    put_view(b, view);
    p4j_wire_escaped_part(b, pattern, strlen(pattern));
    p4j_wire_end(b);
    p4j_value res;
    p4j_answer a = transact(sc, cn, &res, err);
    value_drop(&res);
    give_back(sc, cn);
    return value_status(a, NULL, err);
}

typedef struct line_ref {
    const char *p;
    size_t n;
} line_ref;

static int line_cmp(const void *a, const void *b)
{
    const line_ref *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int r = memcmp(x->p, y->p, n);
    return r ? r : (x->n > y->n) - (x->n < y->n);
}

/* Replaces the UTF-8 string in *v with its lines sorted and de-duplicated,
 * skipping the first `skip` lines. Returns 0 or -1 (out of memory). */
static int sort_lines(p4j_value *v, size_t skip)
{
    const char *s = v->u.s.data;
    size_t len = v->u.s.len, count = 0;
    for (size_t i = 0; i < len; i++)
        count += s[i] == '\n';
    line_ref *lines = malloc((count + 1) * sizeof *lines);
    char *joined = malloc(len + 1);
    if (!lines || !joined) {
        free(lines);
        free(joined);
        return -1;
    }
    size_t nl = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '\n') {
            if (skip)
                skip--;
            else if (i > start)
                lines[nl++] = (line_ref){s + start, i - start};
            start = i + 1;
        }
    }
    qsort(lines, nl, sizeof *lines, line_cmp);
    size_t o = 0;
    for (size_t i = 0; i < nl; i++) {
        if (i && !line_cmp(&lines[i], &lines[i - 1]))
            continue;
        if (o)
            joined[o++] = '\n';
        memcpy(joined + o, lines[i].p, lines[i].n);
        o += lines[i].n;
    }
    free(lines);
    p4j_value_clear(v);
    int r = p4j_value_set_string(v, P4J_STRING, joined, o, P4J_ENC_UTF8);
    free(joined);
    return r;
}

static p4j_status op_dir(p4j_client *c, const p4j_ref *target, p4j_dir_kind kind,
                         p4j_value *out, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    value_null(out);
    if (kind != P4J_DIR_VIEW && need_ref(target, "dir target", err) != P4J_OK)
        return P4J_ERROR;
    if (kind != P4J_DIR_FIELDS && kind != P4J_DIR_METHODS && kind != P4J_DIR_STATIC &&
        kind != P4J_DIR_VIEW)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "unknown dir kind %d", (int)kind);
    OP_BEGIN(sc, cn, err);
    char sub[2] = {(char)kind, 0};
    p4j_wbuf *b = begin(cn, "d");
    p4j_wire_cpart(b, sub);
    if (kind == P4J_DIR_VIEW) {
        put_view(b, target);
        p4j_wbuf_put(b, "n\n", 2); /* no cached sequence: always get the names */
    } else {
        p4j_wire_cpart(b, target->handle);
    }
    p4j_wire_end(b);
    p4j_answer a = transact(sc, cn, out, err);
    give_back(sc, cn);
    if (a != P4J_ANSWER_VALUE)
        return value_status(a, out, err);
    if (out->kind == P4J_NULL || out->kind == P4J_VOID) {
        p4j_value_set_string(out, P4J_STRING, "", 0, P4J_ENC_UTF8);
        return P4J_OK;
    }
    if (out->kind != P4J_STRING) {
        value_drop(out);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "unexpected answer to dir");
    }
    /* a view's listing starts with its import sequence number */
    if (sort_lines(out, kind == P4J_DIR_VIEW ? 1 : 0) < 0) {
        value_null(out);
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    return P4J_OK;
}

static p4j_status op_help(p4j_client *c, const p4j_ref *target, bool is_class,
                          const char *pattern, bool short_name, p4j_value *out,
                          p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    value_null(out);
    if (need_ref(target, "help target", err) != P4J_OK)
        return P4J_ERROR;
    OP_BEGIN(sc, cn, err);
    p4j_wbuf *b = begin(cn, "h");
    p4j_wire_cpart(b, is_class || is_class_ref(target) ? "c" : "o");
    p4j_wire_cpart(b, target->handle);
    if (pattern) {
        p4j_wbuf_put(b, "s", 1);
        p4j_wire_escaped_part(b, pattern, strlen(pattern));
    } else {
        p4j_wbuf_put(b, "n\n", 2);
    }
    p4j_wire_cpart(b, short_name ? "btrue" : "bfalse");
    p4j_wire_end(b);
    p4j_answer a = transact(sc, cn, out, err);
    give_back(sc, cn);
    return value_status(a, out, err);
}

static p4j_status op_read_bytes(p4j_client *c, const p4j_value *v, uint8_t *dst,
                                p4j_error *err)
{
    (void)c;
    return p4j_wire_read_bytes(v, dst, err);
}

static p4j_status op_stack_trace(p4j_client *c, const p4j_ref *throwable, p4j_value *out,
                                 p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    value_null(out);
    if (need_ref(throwable, "throwable", err) != P4J_OK)
        return P4J_ERROR;
    OP_BEGIN(sc, cn, err);
    p4j_wbuf *b = begin(cn, "p");
    p4j_wbuf_put(b, "r", 1);
    p4j_wire_cpart(b, throwable->handle);
    p4j_wire_end(b);
    p4j_answer a = transact(sc, cn, out, err);
    give_back(sc, cn);
    return value_status(a, out, err);
}

/* Records one more owner of `id`. */
static int dup_add(socket_client *sc, const char *id)
{
    int rc = 0;
    pthread_mutex_lock(&sc->mu);
    for (size_t i = 0; i < sc->ndups; i++) {
        if (!strcmp(sc->dups[i].id, id)) {
            sc->dups[i].extra++;
            goto out;
        }
    }
    if (sc->ndups == sc->capdups) {
        size_t cap = sc->capdups ? sc->capdups * 2 : 8;
        dup_entry *d = realloc(sc->dups, cap * sizeof *d);
        if (!d) {
            rc = -1;
            goto out;
        }
        sc->dups = d;
        sc->capdups = cap;
    }
    char *copy = strdup(id);
    if (!copy) {
        rc = -1;
        goto out;
    }
    sc->dups[sc->ndups++] = (dup_entry){copy, 1};
out:
    pthread_mutex_unlock(&sc->mu);
    return rc;
}

/* Drops one owner of `id`; returns true when other owners remain. */
static bool dup_drop(socket_client *sc, const char *id)
{
    bool shared = false;
    pthread_mutex_lock(&sc->mu);
    for (size_t i = 0; i < sc->ndups; i++) {
        if (!strcmp(sc->dups[i].id, id)) {
            shared = true;
            if (--sc->dups[i].extra == 0) {
                free(sc->dups[i].id);
                sc->dups[i] = sc->dups[--sc->ndups];
            }
            break;
        }
    }
    pthread_mutex_unlock(&sc->mu);
    return shared;
}

static void op_release(p4j_client *c, p4j_ref *ref)
{
    socket_client *sc = SC(c);
    if (!ref || !ref->handle)
        return;
    char *id = ref->handle;
    bool is_class = is_class_ref(ref);
    ref->handle = NULL;
    ref->cls = NULL;
    if (!is_class && !is_wellknown_id(id) && !dup_drop(sc, id) && !sc->base.closed) {
        conn *cn = sc->pinned ? thread_conn(sc) : NULL;
        p4j_error e = {0};
        /* pinned-thread mode: the thread's own connection when it has a usable one,
         * else a pooled one (a thread that never called Java opens none for this) */
        if (cn && (cn->broken || push_level(cn) < 0))
            cn = NULL;
        if (cn || acquire_pooled(sc, &cn, &e) == P4J_OK) {
            quiet_delete(sc, cn, id);
            give_back(sc, cn);
        }
        p4j_error_clear(NULL, &e);
    }
    free(id);
}

static p4j_status op_dup(p4j_client *c, const p4j_ref *ref, p4j_ref *out, p4j_error *err)
{
    socket_client *sc = SC(c);
    out->handle = NULL;
    out->cls = NULL;
    if (need_ref(ref, "ref", err) != P4J_OK)
        return P4J_ERROR;
    char *copy = strdup(ref->handle);
    if (!copy)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    /* py4j ids have one owner on the server: count extra owners here, so the
     * delete is sent when the last copy is released. */
    if (!is_class_ref(ref) && !is_wellknown_id(copy) && dup_add(sc, copy) < 0) {
        free(copy);
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    out->handle = copy;
    out->cls = ref->cls;
    return P4J_OK;
}

/* Takes the idle pooled connections out of the client; returns them as a chain
 * (next_idle) for free_chain. Called with sc->mu held. */
static conn *take_idle_locked(socket_client *sc)
{
    conn *idle = sc->idle;
    sc->idle = NULL;
    sc->nidle = 0;
    for (conn *cn = idle; cn; cn = cn->next_idle)
        unlink_locked(sc, cn);
    return idle;
}

/* Closes and frees a chain of connections taken by take_idle_locked. */
static void free_chain(conn *chain)
{
    while (chain) {
        conn *next = chain->next_idle;
        conn_free(chain);
        chain = next;
    }
}

static void op_shutdown(p4j_client *c)
{
    socket_client *sc = SC(c);
    pthread_mutex_lock(&sc->mu);
    sc->base.closed = 1;
    conn *idle = take_idle_locked(sc);
    /* wake threads blocked on connections in use; they close them on give_back */
    for (conn *cn = sc->all; cn; cn = cn->next)
        shutdown(cn->fd, SHUT_RDWR);
    pthread_mutex_unlock(&sc->mu);
    free_chain(idle);
}

static void op_close_idle(p4j_client *c)
{
    socket_client *sc = SC(c);
    pthread_mutex_lock(&sc->mu);
    conn *idle = take_idle_locked(sc);
    pthread_mutex_unlock(&sc->mu);
    free_chain(idle);
    if (sc->pinned) {
        conn *cn = thread_conn(sc); /* only its own thread uses or frees it */
        if (cn && cn->depth == 0)
            unpin_free(sc, cn);
    }
}

static p4j_status op_raw_command(p4j_client *c, const char *text, size_t len, char **answer,
                                 size_t *answer_len, int *stage, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    size_t n = 0;
    *answer = NULL;
    *answer_len = 0;
    *stage = 0;
    if (acquire(sc, &cn, err) != P4J_OK)
        return P4J_ERROR;
    *stage = 1;
    p4j_status st;
    bool empty = false; /* the peer closed the connection: py4j reads an empty answer */
    if (cn->broken) /* pinned: an inner use of the connection failed */
        st = sc->base.closed ? closed_error(err)
                             : p4j_error_set(err, P4J_ERR_NETWORK, "the connection to the "
                                             "py4j server at %s failed earlier", sc->label);
    else
        st = send_all(sc, cn, text, len, err);
    if (st == P4J_OK)
        *stage = 2;
    if (st == P4J_OK && await_answer(sc, cn, &n, err) != P4J_OK) {
        empty = cn->eof && !sc->base.closed;
        st = empty ? P4J_OK : P4J_ERROR;
        if (empty)
            p4j_error_clear(NULL, err);
    }
    if (st == P4J_OK) {
        *answer = dup_text(empty ? "" : cn->rbuf, empty ? 0 : n);
        if (!*answer) {
            cn->broken = true;
            st = p4j_error_set(err, P4J_ERR_MEMORY, "out of memory reading an answer");
        } else {
            *answer_len = empty ? 0 : n;
            if (!empty)
                consume_line(cn, n, false);
            if (*answer_len >= 2 && (*answer)[1] == 'z') /* py4j closes it after "!z..." */
                cn->broken = true;
        }
    }
    give_back(sc, cn);
    return st;
}

static void op_destroy(p4j_client *c)
{
    socket_client *sc = SC(c);
    if (!sc)
        return;
    if (!sc->base.closed)
        op_shutdown(c);
    /* threads' pins outlive the client: their exit must not touch its connections */
    pthread_mutex_lock(&pins_mu);
    for (pin *p = sc->pins; p; p = p->next_of_client) {
        p->sc = NULL;
        p->cn = NULL;
    }
    sc->pins = NULL;
    pthread_mutex_unlock(&pins_mu);
    while (sc->all) {
        conn *cn = sc->all;
        unlink_locked(sc, cn);
        conn_free(cn);
    }
    for (size_t i = 0; i < sc->ndups; i++)
        free(sc->dups[i].id);
    free(sc->dups);
    pthread_mutex_destroy(&sc->mu);
    free(sc->address);
    free(sc->token);
    free(sc);
}

static void op_ref_id(p4j_client *c, const p4j_ref *ref, char *buf, size_t cap)
{
    (void)c;
    snprintf(buf, cap, "%s", ref->handle ? (const char *)ref->handle : "null");
}

static p4j_status op_ref_from_id(p4j_client *c, const char *id, p4j_ref *out, p4j_error *err)
{
    (void)c;
    return p4j_socket_ref_new(id, false, out, err);
}

static p4j_status op_decode_arg(p4j_client *c, char *buf, size_t len, p4j_value *out,
                                p4j_error *err)
{
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    memmove(buf + 2, buf, len); /* an answer line: "!y" + the part */
    buf[0] = '!';
    buf[1] = 'y';
    buf[len + 2] = 0;
    p4j_answer a = p4j_wire_decode(buf, len + 2, NULL, out, err);
    if (a == P4J_ANSWER_VALUE)
        return P4J_OK;
    if (a == P4J_ANSWER_JAVA_ERROR || a == P4J_ANSWER_NO_MEMBER) {
        if (p4j_kind_has_ref(out->kind))
            op_release(c, &out->ref);
        value_drop(out);
    }
    if (err->kind == P4J_ERR_NONE)
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: unexpected callback argument %.200s",
                      buf + 2);
    return P4J_ERROR;
}

static p4j_status op_encode_answer(p4j_client *c, const p4j_value *v, bool error, char **out,
                                   size_t *len, p4j_error *err)
{
    (void)c;
    p4j_wbuf b;
    p4j_wbuf_init(&b);
    p4j_wbuf_put(&b, error ? "!x" : "!y", 2);
    p4j_status st = p4j_wire_arg(&b, v, NULL, NULL, err);
    if (st == P4J_OK && b.oom)
        st = p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    if (st != P4J_OK) {
        p4j_wbuf_free(&b);
        return st;
    }
    *out = b.data;
    *len = b.len;
    return P4J_OK;
}

static void op_set_command_handler(p4j_client *c, p4j_command_fn fn, void *ctx)
{
    SC(c)->cmd_fn = fn;
    SC(c)->cmd_ctx = ctx;
}

/* The first command of a served connection: py4j's "A", token, "e". */
static p4j_status serve_auth(socket_client *sc, conn *cn, const char *token, double timeout,
                             p4j_error *err)
{
    size_t n, len;
    if (read_line(sc, cn, timeout, &n, err) != P4J_OK)
        return p4j_error_set(err, P4J_ERR_AUTH, "the py4j peer at %s closed the connection "
                             "before authenticating", sc->label);
    size_t tlen = strlen(token);
    bool ok = false;
    if (n == 1 && cn->rbuf[0] == 'A') {
        if (read_command(sc, cn, timeout, &len, err) != P4J_OK)
            return p4j_error_set(err, P4J_ERR_AUTH, "authentication of the py4j peer at %s "
                                 "failed: %s", sc->label, err->message ? err->message : "");
        /* "A\n<token>\ne\n" */
        ok = len == tlen + 5 && !memcmp(cn->rbuf + 2, token, tlen) && cn->rbuf[2 + tlen] == '\n';
        consume_bytes(cn, len);
    }
    p4j_error ignored = {0};
    if (ok && send_all(sc, cn, "!yv\n", 4, &ignored) == P4J_OK)
        return P4J_OK;
    if (!ok)
        send_all(sc, cn, ERROR_NULL_ANSWER, sizeof ERROR_NULL_ANSWER - 1, &ignored);
    p4j_error_clear(NULL, &ignored);
    cn->broken = true;
    return p4j_error_set(err, P4J_ERR_AUTH, "the py4j peer at %s did not authenticate with "
                         "the Python side's auth token", sc->label);
}

static p4j_status op_serve(p4j_client *c, int fd, const char *auth_token,
                           double read_timeout_s, p4j_error *err)
{
    socket_client *sc = SC(c);
    if (sc->base.closed) {
        close(fd);
        return closed_error(err);
    }
    conn *old = thread_conn(sc);
    if (old && old->depth > 0) {
        close(fd);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: this thread is inside a call on "
                             "its own connection and cannot serve another");
    }
    if (old) /* the served connection becomes the thread's (py4j's set_thread_connection) */
        unpin_free(sc, old);
    conn *cn = conn_new(fd);
    if (!cn) {
        close(fd);
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    set_timeout(fd, SO_RCVTIMEO, read_timeout_s > 0 ? read_timeout_s : 0);
    if (sc->timeout > 0)
        set_timeout(fd, SO_SNDTIMEO, sc->timeout);
    if (pin_conn(sc, cn, err) != P4J_OK)
        return P4J_ERROR;
    p4j_status st = auth_token ? serve_auth(sc, cn, auth_token, read_timeout_s, err) : P4J_OK;
    while (st == P4J_OK) {
        size_t n;
        if (read_line(sc, cn, read_timeout_s, &n, err) != P4J_OK) {
            if ((cn->eof && cn->rlen == 0) || sc->base.closed) { /* the end of the peer's use */
                p4j_error_clear(NULL, err);
                st = P4J_OK;
            } else {
                st = P4J_ERROR;
            }
            break;
        }
        st = run_peer_command(sc, cn, n, read_timeout_s, err);
    }
    cn->broken = true; /* closed by give_back */
    give_back(sc, cn);
    return st;
}

/* The operations both socket ops tables share. */
#define SOCKET_OPS_COMMON \
    .call = op_call, \
    .construct = op_construct, \
    .field_get = op_field_get, \
    .field_set = op_field_set, \
    .resolve = op_resolve, \
    .static_member = op_static_member, \
    .view_new = op_view_new, \
    .view_import = op_view_import, \
    .dir = op_dir, \
    .help = op_help, \
    .read_bytes = op_read_bytes, \
    .stack_trace = op_stack_trace, \
    .release = op_release, \
    .dup = op_dup, \
    .shutdown = op_shutdown, \
    .destroy = op_destroy, \
    .ref_id = op_ref_id, \
    .ref_from_id = op_ref_from_id, \
    .shutdown_server = p4j_socket_client_shutdown_server, \
    .decode_arg = op_decode_arg, \
    .encode_answer = op_encode_answer, \
    .raw_command = op_raw_command, \
    .close_idle = op_close_idle,

static const p4j_client_ops socket_ops = {
    .name = "socket",
    .caps = P4J_CAP_TEXT_PROXIES,
    SOCKET_OPS_COMMON
};

/* py4j's pinned-thread mode: the socket ops plus commands from the peer. */
static const p4j_client_ops pinned_ops = {
    .name = "socket",
    .caps = P4J_CAP_TEXT_PROXIES | P4J_CAP_PINNED,
    SOCKET_OPS_COMMON
    .set_command_handler = op_set_command_handler,
    .serve = op_serve,
};

/* ---- public entry points ------------------------------------------------------------ */

p4j_status p4j_socket_client_new(const char *address, int port, const char *auth_token,
                                 double read_timeout_s, p4j_client **out, p4j_error *err)
{
    *out = NULL;
    if (!address || !*address)
        address = "127.0.0.1";
    if (port <= 0 || port > 65535)
        return p4j_error_set(err, P4J_ERR_NETWORK, "invalid port %d for the py4j server at %s",
                             port, address);
    if (auth_token && strpbrk(auth_token, "\r\n"))
        return p4j_error_set(err, P4J_ERR_AUTH, "the auth token contains a line break");
    if (read_timeout_s < 0)
        read_timeout_s = 0;

    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    int gai = getaddrinfo(address, portstr, &hints, &res);
    if (gai != 0 || !res)
        return p4j_error_set(err, P4J_ERR_NETWORK,
                             "cannot resolve the py4j server address %s:%d: %s", address, port,
                             gai_strerror(gai));
    struct addrinfo *pick = res;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
        if (ai->ai_family == AF_INET) { /* py4j servers listen on IPv4 by default */
            pick = ai;
            break;
        }

    socket_client *sc = calloc(1, sizeof *sc);
    if (!sc) {
        freeaddrinfo(res);
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    memcpy(&sc->sa, pick->ai_addr, pick->ai_addrlen);
    sc->salen = pick->ai_addrlen;
    freeaddrinfo(res);
    sc->base.ops = &socket_ops;
    sc->base.closed = 0;
    sc->address = strdup(address);
    sc->token = auth_token ? strdup(auth_token) : NULL;
    if (!sc->address || (auth_token && !sc->token)) {
        free(sc->address);
        free(sc->token);
        free(sc);
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    sc->port = port;
    snprintf(sc->label, sizeof sc->label, "%s:%d", address, port);
    sc->timeout = read_timeout_s;
    pthread_mutex_init(&sc->mu, NULL);
    *out = &sc->base;
    return P4J_OK;
}

p4j_status p4j_socket_client_new_pinned(const char *address, int port, const char *auth_token,
                                        double read_timeout_s, p4j_client **out,
                                        p4j_error *err)
{
    pthread_once(&pins_once, pins_make_key);
    if (pins_key_err)
        return p4j_error_set(err, P4J_ERR_MEMORY, "py4jni: no thread-specific key left for "
                             "pinned-thread connections");
    if (p4j_socket_client_new(address, port, auth_token, read_timeout_s, out, err) != P4J_OK)
        return P4J_ERROR;
    socket_client *sc = SC(*out);
    sc->base.ops = &pinned_ops;
    sc->pinned = true;
    return P4J_OK;
}

p4j_status p4j_socket_client_shutdown_server(p4j_client *c, p4j_error *err)
{
    socket_client *sc = SC(c);
    conn *cn;
    p4j_status st = acquire(sc, &cn, err);
    if (st == P4J_OK) {
        /* "s" takes no parts and gets no answer: the server closes every connection. */
        st = send_all(sc, cn, "s\n", 2, err);
        cn->broken = true;
        give_back(sc, cn);
    }
    op_shutdown(c);
    return st;
}

p4j_status p4j_socket_ref_new(const char *id, bool is_class, p4j_ref *out, p4j_error *err)
{
    out->handle = strdup(id);
    out->cls = is_class ? (void *)p4j_wire_class_tag : NULL;
    if (!out->handle)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    return P4J_OK;
}

void p4j_socket_client_set_proxy_encoder(p4j_client *c, p4j_wire_proxy_fn fn, void *ctx)
{
    SC(c)->proxy_fn = fn;
    SC(c)->proxy_ctx = ctx;
}

void p4j_socket_client_connections(p4j_client *c, size_t *open, size_t *idle)
{
    socket_client *sc = SC(c);
    pthread_mutex_lock(&sc->mu);
    if (open)
        *open = sc->nopen;
    if (idle)
        *idle = sc->nidle;
    pthread_mutex_unlock(&sc->mu);
}
