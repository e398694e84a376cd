/* bridge/socket/socket_pinned.c - the pinned-thread regime of the socket client
 * (p4j_socket_client_new_pinned, a py4j ClientServer).
 *
 * Each thread has a connection of its own (a `pin` in the thread's key below), kept
 * across calls and closed when the thread exits, as py4j's ThreadLocalConnectionFinalizer
 * does. While a thread waits for an answer the peer may send a command on that
 * connection (a Java callback); it runs through the command handler on the waiting
 * thread, which may send commands of its own on the same connection: each nested use of
 * a connection gets a write buffer of its own (conn.levels). A pinned connection is
 * released by the thread (give back at depth 0) or by the thread's exit; `pins_mu`
 * orders thread exit against the client's destruction. Connections Java opens to
 * Python are served here too (sock_serve): they become the serving thread's own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "socket_internal.h"

#include <unistd.h>

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
            sock_unlink_locked(sc, p->cn);
            pthread_mutex_unlock(&sc->mu);
            p->cn->next_idle = drop;
            drop = p->cn;
        }
        free(p);
    }
    pthread_mutex_unlock(&pins_mu);
    while (drop) {
        conn *next = drop->next_idle;
        sock_conn_free(drop);
        drop = next;
    }
}

static void pins_make_key(void)
{
    pins_key_err = pthread_key_create(&pins_key, pins_thread_exit);
}

p4j_status sock_pins_init(p4j_error *err)
{
    pthread_once(&pins_once, pins_make_key);
    if (pins_key_err)
        return p4j_error_set(err, P4J_ERR_MEMORY, "py4jni: no thread-specific key left for "
                             "pinned-thread connections");
    return P4J_OK;
}

void sock_pins_forget_client(socket_client *sc)
{
    /* threads' pins outlive the client: their exit must not touch its connections */
    pthread_mutex_lock(&pins_mu);
    for (pin *p = sc->pins; p; p = p->next_of_client) {
        p->sc = NULL;
        p->cn = NULL;
    }
    sc->pins = NULL;
    pthread_mutex_unlock(&pins_mu);
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
conn *sock_thread_conn(socket_client *sc)
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
        sock_conn_free(cn);
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    cn->pinned = true;
    cn->depth = 1;
    cn->out = &cn->out0;
    p->sc = sc;
    p->cn = cn;
    pthread_mutex_lock(&pins_mu);
    pthread_mutex_lock(&sc->mu);
    bool closed = !sock_link_unless_closed_locked(sc, cn);
    pthread_mutex_unlock(&sc->mu);
    if (!closed) {
        p->next = pthread_getspecific(pins_key);
        if (pthread_setspecific(pins_key, p) != 0) {
            pthread_mutex_lock(&sc->mu);
            sock_unlink_locked(sc, cn);
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
        sock_conn_free(cn);
        return sc->base.closed ? sock_closed_error(err)
                               : p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    return P4J_OK;
}

/* Ends the calling thread's pinned connection `cn` to `sc` (not in use) and frees it. */
void sock_unpin_free(socket_client *sc, conn *cn)
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
    sock_unlink_locked(sc, cn);
    pthread_mutex_unlock(&sc->mu);
    pthread_mutex_unlock(&pins_mu);
    sock_conn_free(cn);
}

/* One more use of a pinned connection by its thread: a write buffer of its own, so
 * that a command built by an outer use (e.g. while converting its arguments) stays
 * intact. Returns 0 or -1 (out of memory). */
int sock_push_level(conn *cn)
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

/* Ends one use of a pinned connection (see sock_push_level). */
static void pop_level(conn *cn)
{
    if (cn->depth > 0)
        cn->depth--;
    cn->out = cn->depth <= 1 ? &cn->out0 : cn->levels[cn->depth - 2];
}

/* Ends one use of a pinned connection: it stays with its thread, closed once unused when
 * it failed or the client shut down. */
void sock_give_back_pinned(socket_client *sc, conn *cn)
{
    pop_level(cn);
    if (cn->depth == 0 && (cn->broken || sc->base.closed))
        sock_unpin_free(sc, cn);
}

/* The calling thread's connection (pinned-thread mode), opened on first use. */
p4j_status sock_acquire_pinned(socket_client *sc, conn **out, p4j_error *err)
{
    if (sc->base.closed)
        return sock_closed_error(err);
    conn *cn = sock_thread_conn(sc);
    if (cn && cn->depth == 0 && cn->broken) { /* failed earlier: a new one */
        sock_unpin_free(sc, cn);
        cn = NULL;
    }
    if (cn) {
        if (sock_push_level(cn) < 0)
            return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        *out = cn;
        return P4J_OK;
    }
    if (sock_conn_open(sc, &cn, err) != P4J_OK || pin_conn(sc, cn, err) != P4J_OK)
        return P4J_ERROR;
    *out = cn;
    return P4J_OK;
}

/* Runs the peer's command whose first line (`first` bytes) starts the read buffer: py4j's
 * "c" (call a Python proxy) or "g" (a proxy was released) through the command handler,
 * on this thread, and sends the answer. Fails, marking cn broken, on an I/O error, a
 * command that is not py4j's, or a connection that broke while the handler ran. */
p4j_status sock_run_peer_command(socket_client *sc, conn *cn, size_t first, double timeout,
                                 p4j_error *err)
{
    if (first != 1 || (cn->rbuf[0] != 'c' && cn->rbuf[0] != 'g')) {
        p4j_error ignored = {0};
        sock_send_all(sc, cn, ERROR_NULL_ANSWER, sizeof ERROR_NULL_ANSWER - 1, &ignored);
        p4j_error_clear(NULL, &ignored);
        cn->broken = true;
        return p4j_error_set(err, P4J_ERR_NETWORK,
                             "the py4j peer at %s sent an unknown command \"%.*s\"",
                             sc->label, (int)(first < 40 ? first : 40), cn->rbuf);
    }
    size_t len;
    if (sock_read_command(sc, cn, timeout, &len, err) != P4J_OK)
        return P4J_ERROR;
    char *text = malloc(len + 1);
    if (!text) {
        cn->broken = true;
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory reading a command");
    }
    memcpy(text, cn->rbuf, len);
    text[len] = 0;
    sock_consume_bytes(cn, len);
    char *answer = NULL;
    size_t alen = 0;
    int rc = sc->cmd_fn ? sc->cmd_fn(sc->cmd_ctx, text, len, &answer, &alen) : -1;
    free(text);
    if (rc == P4J_COMMAND_ABANDON) { /* not answered: the waits below it end too */
        free(answer);
        cn->broken = cn->interrupted = true;
        return p4j_error_set(err, P4J_ERR_INTERRUPTED, "a callback from the py4j peer at %s "
                             "ended the calls waiting below it", sc->label);
    }
    if (cn->broken) { /* a command the handler sent on this connection failed */
        free(answer);
        if (sc->base.closed)
            return sock_closed_error(err);
        if (cn->interrupted) /* its wait was abandoned: so is the wait below it */
            return p4j_error_set(err, P4J_ERR_INTERRUPTED, "interrupted while waiting for "
                                 "the py4j peer at %s during a callback", sc->label);
        return p4j_error_set(err, P4J_ERR_NETWORK,
                             "the connection to the py4j peer at %s failed during a callback",
                             sc->label);
    }
    p4j_status st = rc == 0 && answer
                        ? sock_send_all(sc, cn, answer, alen, err)
                        : sock_send_all(sc, cn, ERROR_NULL_ANSWER, sizeof ERROR_NULL_ANSWER - 1, err);
    free(answer);
    return st;
}

void sock_set_command_handler(p4j_client *c, p4j_command_fn fn, void *ctx)
{
    SC(c)->cmd_fn = fn;
    SC(c)->cmd_ctx = ctx;
}

/* The first command of a served connection: py4j's "A", token, "e". */
static p4j_status serve_auth(socket_client *sc, conn *cn, const char *token, double timeout,
                             p4j_error *err)
{
    size_t n, len;
    if (sock_read_line(sc, cn, timeout, &n, err) != P4J_OK)
        return p4j_error_set(err, P4J_ERR_AUTH, "the py4j peer at %s closed the connection "
                             "before authenticating", sc->label);
    size_t tlen = strlen(token);
    bool ok = false;
    if (n == 1 && cn->rbuf[0] == 'A') {
        if (sock_read_command(sc, cn, timeout, &len, err) != P4J_OK)
            return p4j_error_set(err, P4J_ERR_AUTH, "authentication of the py4j peer at %s "
                                 "failed: %s", sc->label, err->message ? err->message : "");
        /* "A\n<token>\ne\n" */
        ok = len == tlen + 5 && !memcmp(cn->rbuf + 2, token, tlen) && cn->rbuf[2 + tlen] == '\n';
        sock_consume_bytes(cn, len);
    }
    p4j_error ignored = {0};
    if (ok && sock_send_all(sc, cn, "!yv\n", 4, &ignored) == P4J_OK)
        return P4J_OK;
    if (!ok)
        sock_send_all(sc, cn, ERROR_NULL_ANSWER, sizeof ERROR_NULL_ANSWER - 1, &ignored);
    p4j_error_clear(NULL, &ignored);
    cn->broken = true;
    return p4j_error_set(err, P4J_ERR_AUTH, "the py4j peer at %s did not authenticate with "
                         "the Python side's auth token", sc->label);
}

p4j_status sock_serve(p4j_client *c, int fd, const char *auth_token, double read_timeout_s,
                      p4j_error *err)
{
    socket_client *sc = SC(c);
    if (sc->base.closed) {
        close(fd);
        return sock_closed_error(err);
    }
    conn *old = sock_thread_conn(sc);
    if (old && old->depth > 0) {
        close(fd);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: this thread is inside a call on "
                             "its own connection and cannot serve another");
    }
    if (old) /* the served connection becomes the thread's (py4j's set_thread_connection) */
        sock_unpin_free(sc, old);
    conn *cn;
    if (sock_conn_adopt(sc, fd, read_timeout_s, &cn, err) != P4J_OK)
        return P4J_ERROR;
    cn->served = true;
    if (pin_conn(sc, cn, err) != P4J_OK)
        return P4J_ERROR;
    p4j_status st = auth_token ? serve_auth(sc, cn, auth_token, read_timeout_s, err) : P4J_OK;
    while (st == P4J_OK) {
        size_t n;
        if (sock_read_line(sc, cn, read_timeout_s, &n, err) != P4J_OK) {
            if ((cn->eof && cn->rlen == 0) || sc->base.closed) { /* the end of the peer's use */
                p4j_error_clear(NULL, err);
                st = P4J_OK;
            } else {
                st = P4J_ERROR;
            }
            break;
        }
        st = sock_run_peer_command(sc, cn, n, read_timeout_s, err);
    }
    cn->broken = true; /* closed by the give back */
    sock_give_back_pinned(sc, cn);
    return st;
}

/* The ids of sc's pinned connections that their threads opened (not served ones) and no
 * call is using (`depth` read as a snapshot: its thread changes it without a lock), the
 * oldest first; returns how many there are (ids written when that is <= cap). */
size_t sock_pinned_idle_list(socket_client *sc, uint64_t *ids, size_t cap)
{
    size_t n = 0;
    pthread_mutex_lock(&pins_mu);
    pthread_mutex_lock(&sc->mu);
    for (pin *p = sc->pins; p; p = p->next_of_client) {
        conn *cn = p->cn;
        if (cn && !cn->served && __atomic_load_n(&cn->depth, __ATOMIC_RELAXED) == 0)
            n++;
    }
    if (n <= cap) {
        size_t i = n;
        for (pin *p = sc->pins; p; p = p->next_of_client) { /* newest first */
            conn *cn = p->cn;
            if (cn && !cn->served && __atomic_load_n(&cn->depth, __ATOMIC_RELAXED) == 0 &&
                i > 0)
                ids[--i] = cn->id;
        }
    }
    pthread_mutex_unlock(&sc->mu);
    pthread_mutex_unlock(&pins_mu);
    return n;
}
