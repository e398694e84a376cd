/* bridge/socket/socket_pool.c - the pooled regime of the socket client (a py4j
 * GatewayServer): a thread takes an idle connection for one operation, or opens one,
 * and gives it back when done, so concurrent threads use separate connections, as
 * py4j's GatewayClient does. The pool lives in the client (socket_internal.h), under
 * sc->mu.
 */
#include "socket_internal.h"

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
