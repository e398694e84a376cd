/* bridge/socket/socket_pool.c - the pooled regime of the socket client (a py4j
 * GatewayServer): a thread takes an idle connection for one operation, or opens one,
 * and gives it back when done, so concurrent threads use separate connections, as
 * py4j's GatewayClient does. The pool lives in the client (socket_internal.h), under
 * sc->mu. The idle connections are also py4j's GatewayClient.deque (sock_idle_list,
 * sock_conn_ctl): a program may take one out of the pool (held: open, used by no
 * operation) and give it back or close it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "socket_internal.h"

#include <fcntl.h>

/* Takes an idle connection or opens one. */
p4j_status sock_acquire_pooled(socket_client *sc, conn **out, p4j_error *err)
{
    for (;;) {
        if (sc->base.closed)
            return sock_closed_error(err);
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
        if (sock_conn_alive(cn)) {
            *out = cn;
            return P4J_OK;
        }
        pthread_mutex_lock(&sc->mu);
        sock_unlink_locked(sc, cn);
        pthread_mutex_unlock(&sc->mu);
        sock_conn_free(cn);
    }
    conn *cn;
    if (sock_conn_open(sc, &cn, err) != P4J_OK)
        return P4J_ERROR;
    pthread_mutex_lock(&sc->mu);
    bool closed = !sock_link_unless_closed_locked(sc, cn);
    pthread_mutex_unlock(&sc->mu);
    if (closed) {
        sock_conn_free(cn);
        return sock_closed_error(err);
    }
    *out = cn;
    return P4J_OK;
}

/* Ends an operation's use of pooled `cn`: back to the pool, or closed when it failed or
 * the client shut down. */
void sock_give_back_pooled(socket_client *sc, conn *cn)
{
    pthread_mutex_lock(&sc->mu);
    bool drop = cn->broken || sc->base.closed;
    if (drop) {
        sock_unlink_locked(sc, cn);
    } else {
        cn->next_idle = sc->idle;
        sc->idle = cn;
        sc->nidle++;
    }
    pthread_mutex_unlock(&sc->mu);
    if (drop)
        sock_conn_free(cn);
}

/* Takes the idle pooled connections out of the client; returns them as a chain
 * (next_idle) for sock_free_chain. Called with sc->mu held. */
conn *sock_take_idle_locked(socket_client *sc)
{
    conn *idle = sc->idle;
    sc->idle = NULL;
    sc->nidle = 0;
    for (conn *cn = idle; cn; cn = cn->next_idle)
        sock_unlink_locked(sc, cn);
    return idle;
}

/* Closes and frees a chain of connections taken by sock_take_idle_locked. */
void sock_free_chain(conn *chain)
{
    while (chain) {
        conn *next = chain->next_idle;
        sock_conn_free(chain);
        chain = next;
    }
}

/* Closes every idle pooled connection. */
void sock_pool_close_idle(socket_client *sc)
{
    pthread_mutex_lock(&sc->mu);
    conn *idle = sock_take_idle_locked(sc);
    pthread_mutex_unlock(&sc->mu);
    sock_free_chain(idle);
}

/* ---- the idle connections as py4j's GatewayClient.deque (ops->idle_list, conn_ctl) -- */

size_t sock_idle_list(p4j_client *c, uint64_t *ids, size_t cap)
{
    socket_client *sc = SC(c);
    /* pinned: the threads' own first, then pooled ones (releases from threads without
     * a connection of their own use the pool) */
    size_t first = sc->pinned ? sock_pinned_idle_list(sc, ids, cap) : 0;
    pthread_mutex_lock(&sc->mu);
    size_t n = first + sc->nidle;
    if (n <= cap) { /* the chain's head is used next: py4j's deque[-1] */
        size_t i = n;
        for (conn *cn = sc->idle; cn && i > first; cn = cn->next_idle)
            ids[--i] = cn->id;
    }
    pthread_mutex_unlock(&sc->mu);
    return n;
}

/* The open connection named `id`, or NULL. Called with sc->mu held. */
static conn *find_locked(socket_client *sc, uint64_t id)
{
    for (conn *cn = sc->all; cn; cn = cn->next)
        if (cn->id == id)
            return cn;
    return NULL;
}

/* Unlinks `cn` from the idle chain; false when it is not there. Called with sc->mu held. */
static bool unpool_locked(socket_client *sc, conn *cn)
{
    for (conn **pp = &sc->idle; *pp; pp = &(*pp)->next_idle) {
        if (*pp == cn) {
            *pp = cn->next_idle;
            cn->next_idle = NULL;
            sc->nidle--;
            return true;
        }
    }
    return false;
}

/* conn_ctl for a pinned connection (its thread's own; only that thread frees it, so it
 * is never taken: closing shuts its socket down). `depth` is read as a snapshot. */
static int pinned_ctl_locked(conn *cn, p4j_conn_op op)
{
    bool idle = !cn->served && __atomic_load_n(&cn->depth, __ATOMIC_RELAXED) == 0;
    switch (op) {
    case P4J_CONN_STATE:
        return idle ? 1 : 3;
    case P4J_CONN_CLOSE:
    case P4J_CONN_RESET:
        if (!idle)
            return -1;
        shutdown(cn->fd, SHUT_RDWR);
        return 0;
    default:
        return -1;
    }
}

/* True when `cn` is in the idle chain. Called with sc->mu held. */
static bool pooled_locked(socket_client *sc, conn *cn)
{
    for (conn *i = sc->idle; i; i = i->next_idle)
        if (i == cn)
            return true;
    return false;
}

/* Gives held `cn` back to the pool: used next (head of the chain) or last (its tail). */
static void put_locked(socket_client *sc, conn *cn, bool last)
{
    conn **pp = &sc->idle;
    if (last)
        while (*pp)
            pp = &(*pp)->next_idle;
    cn->next_idle = *pp;
    *pp = cn;
    sc->nidle++;
    cn->held = false;
}

int sock_conn_ctl(p4j_client *c, uint64_t id, p4j_conn_op op)
{
    socket_client *sc = SC(c);
    conn *drop = NULL;
    int rc = -1;
    pthread_mutex_lock(&sc->mu);
    conn *cn = find_locked(sc, id);
    if (!cn) {
        rc = op == P4J_CONN_STATE ? 0 : -1;
    } else if (op == P4J_CONN_DUP_FD) {
        rc = fcntl(cn->fd, F_DUPFD_CLOEXEC, 0);
    } else if (cn->pinned) {
        rc = pinned_ctl_locked(cn, op);
    } else {
        switch (op) {
        case P4J_CONN_STATE:
            rc = cn->held ? 2 : pooled_locked(sc, cn) ? 1 : 3;
            break;
        case P4J_CONN_TAKE:
            if (unpool_locked(sc, cn)) {
                cn->held = true;
                rc = 0;
            }
            break;
        case P4J_CONN_PUT:
        case P4J_CONN_PUT_LAST:
            if (!cn->held)
                break;
            rc = 0;
            if (!sc->base.closed && !cn->broken) {
                put_locked(sc, cn, op == P4J_CONN_PUT_LAST);
                break;
            }
            sock_unlink_locked(sc, cn); /* shut down meanwhile: closed, as a give back */
            drop = cn;
            break;
        case P4J_CONN_CLOSE:
        case P4J_CONN_RESET:
            if (cn->held || unpool_locked(sc, cn)) {
                sock_unlink_locked(sc, cn);
                drop = cn;
                rc = 0;
            }
            break;
        default:
            break;
        }
    }
    pthread_mutex_unlock(&sc->mu);
    if (drop) {
        if (op == P4J_CONN_RESET) {
            struct linger lg = {.l_onoff = 1, .l_linger = 0};
            setsockopt(drop->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        sock_conn_free(drop);
    }
    return rc;
}
