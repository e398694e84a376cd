/* bridge/socket/socket_conn.c - the connection layer of the socket client (see
 * socket_internal.h): opening a connection (TCP connect, TLS handshake, py4j's "A"
 * command), sending, reading a line, closing, and the client's list of open
 * connections. Both regimes (socket_pool.c, socket_pinned.c) use it; nothing here knows
 * which.
 *
 * TLS is OpenSSL over the connection's blocking socket, its waits bounded by the same
 * SO_RCVTIMEO/SO_SNDTIMEO as plain TCP; the SSL_CTX comes from the caller
 * (p4j_socket_client_set_tls), which decides verification, certificates and versions.
 * OpenSSL is called only through p4j_ossl (socket_openssl.h), loaded by set_tls: plain
 * connections never touch it.
 * OpenSSL writes with write(2): a peer that closed raises SIGPIPE, which Python ignores
 * (a C program using TLS here must ignore it too).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "socket_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <sys/time.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "socket_openssl.h"

/* The text of the last TLS failure of this thread's I/O (errno EPROTO). */
static __thread char tls_why[200];

static const char *errtext(int e, char *buf, size_t n)
{
    return strerror_r(e, buf, n); /* GNU variant: returns the text */
}

p4j_status sock_closed_error(p4j_error *err)
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
 * closed client, time-out ("timed out after N s <waiting>", err->timed_out set), a TLS
 * error (EPROTO, the text in tls_why), or the system error. */
static p4j_status io_failed(socket_client *sc, conn *cn, int e, const char *waiting,
                            const char *doing, double timeout_shown, p4j_error *err)
{
    char eb[128];
    cn->broken = true;
    if (sc->base.closed)
        return sock_closed_error(err);
    if (e == EAGAIN || e == EWOULDBLOCK) {
        p4j_error_set(err, P4J_ERR_NETWORK, "timed out after %g s %s the py4j server at %s",
                      timeout_shown, waiting, sc->label);
        err->timed_out = true;
        return P4J_ERROR;
    }
    if (e == EPROTO && cn->ssl)
        return p4j_error_set(err, P4J_ERR_NETWORK, "TLS error while %s the py4j server at %s: %s",
                             doing, sc->label, tls_why);
    return p4j_error_set(err, P4J_ERR_NETWORK, "error while %s the py4j server at %s: %s", doing,
                         sc->label, errtext(e, eb, sizeof eb));
}

/* Maps a failed SSL_read_ex/SSL_write_ex on cn to recv/send's convention: 0 when the peer
 * closed the connection (close_notify, or TCP's end without it, as Python's ssl reads
 * it), else -1 with errno EAGAIN (time-out), EINTR, the system error, or EPROTO (the
 * text in tls_why). */
static ssize_t tls_failed(conn *cn)
{
    int e = errno;
    unsigned long code = p4j_ossl.ERR_peek_error();
    switch (p4j_ossl.SSL_get_error(cn->ssl, 0)) {
    case P4J_SSL_ERROR_ZERO_RETURN:
        return 0;
    case P4J_SSL_ERROR_WANT_READ:
    case P4J_SSL_ERROR_WANT_WRITE:
        errno = e == EINTR ? EINTR : EAGAIN;
        return -1;
    case P4J_SSL_ERROR_SYSCALL:
        if (code == 0 && e == 0)
            return 0;
        errno = e ? e : EPIPE;
        return -1;
    default:
        if (p4j_ossl_unexpected_eof(code))
            return 0;
        p4j_ossl.ERR_error_string_n(code, tls_why, sizeof tls_why);
        p4j_ossl.ERR_clear_error();
        errno = EPROTO;
        return -1;
    }
}

/* One send on cn, plain or TLS: bytes sent, or -1 with errno (see tls_failed). */
static ssize_t conn_send(conn *cn, const char *p, size_t n)
{
    if (!cn->ssl)
        return send(cn->fd, p, n, MSG_NOSIGNAL);
    size_t w = 0;
    p4j_ossl.ERR_clear_error();
    errno = 0;
    if (p4j_ossl.SSL_write_ex(cn->ssl, p, n, &w) == 1)
        return (ssize_t)w;
    ssize_t r = tls_failed(cn);
    if (r == 0)
        errno = EPIPE;
    return -1;
}

/* One receive on cn, plain or TLS: bytes read, 0 when the peer closed, or -1 with errno
 * (see tls_failed). */
static ssize_t conn_recv(conn *cn, char *p, size_t n)
{
    if (!cn->ssl)
        return recv(cn->fd, p, n, 0);
    size_t r = 0;
    p4j_ossl.ERR_clear_error();
    errno = 0;
    if (p4j_ossl.SSL_read_ex(cn->ssl, p, n, &r) == 1)
        return (ssize_t)r;
    return tls_failed(cn);
}

/* ---- connection I/O ------------------------------------------------------------- */

/* After a send/recv that failed with errno EAGAIN: true when the connection's file
 * description had been made non-blocking from outside (a Python socket over a duplicate
 * of the descriptor, `deque[i].socket.settimeout(t)`, shares it), after making it
 * blocking again, so the caller retries and waits as the transport's own time-outs
 * (SO_RCVTIMEO/SO_SNDTIMEO) say; false for a genuine time-out. Costs nothing until a
 * wait fails. */
static bool blocking_again(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || !(fl & O_NONBLOCK))
        return false;
    return fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0;
}

bool sock_abandon_wait(socket_client *sc, conn *cn, p4j_error *err)
{
    if (!sc->intr_fn || !sc->intr_fn(sc->intr_ctx))
        return false;
    if (cn)
        cn->broken = cn->interrupted = true;
    p4j_error_set(err, P4J_ERR_INTERRUPTED, "interrupted while waiting for the py4j server at %s",
                  sc->label);
    return true;
}

p4j_status sock_send_all(socket_client *sc, conn *cn, const char *p, size_t n,
                           p4j_error *err)
{
    size_t off = 0;
    while (off < n) {
        ssize_t w = conn_send(cn, p + off, n - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) {
            if (sock_abandon_wait(sc, cn, err))
                return P4J_ERROR;
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && blocking_again(cn->fd))
            continue;
        return io_failed(sc, cn, w < 0 ? errno : EPIPE, "sending to", "sending to",
                         sc->timeout, err);
    }
    quickack(cn->fd);
    return P4J_OK;
}

/* Reads until the buffer holds a whole line starting at offset `start`; *linelen
 * excludes the '\n'. The peer closing the connection sets cn->eof. */
p4j_status sock_read_line_at(socket_client *sc, conn *cn, size_t start,
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
        ssize_t r = conn_recv(cn, cn->rbuf + cn->rlen, cn->rcap - cn->rlen);
        if (r > 0) {
            cn->rlen += (size_t)r;
            quickack(cn->fd);
            continue;
        }
        if (r < 0 && errno == EINTR) {
            if (sock_abandon_wait(sc, cn, err))
                return P4J_ERROR;
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && blocking_again(cn->fd))
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
p4j_status sock_read_line(socket_client *sc, conn *cn, double timeout_shown,
                            size_t *linelen, p4j_error *err)
{
    return sock_read_line_at(sc, cn, 0, timeout_shown, linelen, err);
}

/* Drops the first `used` bytes of the read buffer. */
void sock_consume_bytes(conn *cn, size_t used)
{
    if (cn->rlen > used)
        memmove(cn->rbuf, cn->rbuf + used, cn->rlen - used);
    cn->rlen -= used;
}

/* Drops the line just decoded (and the buffer if it was adopted or grew large). */
void sock_consume_line(conn *cn, size_t linelen, bool adopted)
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

void sock_conn_free(conn *cn)
{
    if (cn->ssl)
        p4j_ossl.SSL_free(cn->ssl); /* no close_notify: py4j closes its sockets without one */
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

/* Runs the TLS handshake on cn's connected socket (as server when `server`), its waits
 * bounded by `limit` seconds, then sets the socket's read time-out to `after` (0: none)
 * and its send time-out back to the client's.
 * Fails with P4J_ERR_NETWORK naming the certificate problem when verification failed. */
static p4j_status tls_handshake(socket_client *sc, conn *cn, SSL_CTX *ctx, bool server,
                                double limit, double after, p4j_error *err)
{
    /* The context is the caller's, live: what was checked when the client was made may
     * have changed since. A key-log callback (ssl.SSLContext.keylog_filename) is
     * OpenSSL's call into Python's ssl objects, which an SSL of ours is not: refused
     * here, per connection. A message callback (_msg_callback) is one too, and is
     * taken off each SSL of ours, which OpenSSL allows. */
    if (p4j_ossl.SSL_CTX_get_keylog_callback(ctx)) {
        cn->broken = true;
        return p4j_error_set(err, P4J_ERR_NETWORK,
                             "TLS to %s not started: the ssl_context's keylog_filename was "
                             "set after the gateway was made (OpenSSL would call back into "
                             "Python's ssl objects); unset it, or log keys on the Java side",
                             sc->label);
    }
    cn->ssl = p4j_ossl.SSL_new(ctx);
    if (!cn->ssl || p4j_ossl.SSL_set_fd(cn->ssl, cn->fd) != 1)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory starting TLS");
    p4j_ossl.SSL_set_msg_callback(cn->ssl, NULL);
    if (!server && sc->tls_host) {
        unsigned char ip[16];
        bool is_ip = inet_pton(AF_INET, sc->tls_host, ip) == 1 ||
                     inet_pton(AF_INET6, sc->tls_host, ip) == 1;
        int ok = 1;
        if (!is_ip) /* SNI names hosts, never addresses (RFC 6066), as Python's ssl sends */
            ok = (int)p4j_ossl.SSL_ctrl(cn->ssl, P4J_SSL_CTRL_SET_TLSEXT_HOSTNAME,
                                       P4J_TLSEXT_NAMETYPE_host_name, sc->tls_host);
        if (ok == 1 && sc->tls_check_host)
            ok = is_ip ? p4j_ossl.X509_VERIFY_PARAM_set1_ip_asc(p4j_ossl.SSL_get0_param(cn->ssl),
                                                                sc->tls_host)
                       : p4j_ossl.SSL_set1_host(cn->ssl, sc->tls_host);
        if (ok != 1)
            return p4j_error_set(err, P4J_ERR_NETWORK, "cannot check the TLS certificate of "
                                 "%s against the name %s", sc->label, sc->tls_host);
    }
    set_timeout(cn->fd, SO_RCVTIMEO, limit);
    set_timeout(cn->fd, SO_SNDTIMEO, limit);
    int rc;
    for (;;) { /* a signal interrupts a blocking handshake with WANT_READ/WRITE and EINTR */
        p4j_ossl.ERR_clear_error();
        errno = 0;
        rc = server ? p4j_ossl.SSL_accept(cn->ssl) : p4j_ossl.SSL_connect(cn->ssl);
        if (rc == 1 || errno != EINTR)
            break;
        int why = p4j_ossl.SSL_get_error(cn->ssl, rc);
        if (why != P4J_SSL_ERROR_WANT_READ && why != P4J_SSL_ERROR_WANT_WRITE)
            break;
        if (sock_abandon_wait(sc, cn, err))
            return P4J_ERROR;
    }
    set_timeout(cn->fd, SO_RCVTIMEO, after > 0 ? after : 0);
    set_timeout(cn->fd, SO_SNDTIMEO, sc->timeout > 0 ? sc->timeout : 0);
    if (rc == 1)
        return P4J_OK;
    const char *peer = server ? "the py4j peer at" : "the py4j server at";
    long v = p4j_ossl.SSL_get_verify_result(cn->ssl);
    if (v != P4J_X509_V_OK)
        return p4j_error_set(err, P4J_ERR_NETWORK, "TLS handshake with %s %s failed: "
                             "certificate verify failed: %s", peer, sc->label,
                             p4j_ossl.X509_verify_cert_error_string(v));
    if (tls_failed(cn) == 0)
        snprintf(tls_why, sizeof tls_why, "the peer closed the connection");
    else if (errno == EAGAIN)
        snprintf(tls_why, sizeof tls_why, "timed out after %g s", limit);
    else if (errno != EPROTO) {
        char eb[128];
        snprintf(tls_why, sizeof tls_why, "%s", errtext(errno, eb, sizeof eb));
    }
    return p4j_error_set(err, P4J_ERR_NETWORK, "TLS handshake with %s %s failed: %s", peer,
                         sc->label, tls_why);
}

/* py4j's text when a connection cannot be made (GatewayConnection.start); the reason is
 * the error's os_errno or timed_out, as py4j's is the cause of its Py4JNetworkError. */
#define CONNECT_FAILED "An error occurred while trying to connect to the Java server (%s)"

p4j_status sock_conn_open(socket_client *sc, conn **out, p4j_error *err)
{
    char eb[128];
    conn *cn = conn_new(-1);
    if (!cn)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory opening a connection");
    cn->fd = socket(sc->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (cn->fd < 0) {
        int e = errno;
        sock_conn_free(cn);
        return p4j_error_set(err, P4J_ERR_NETWORK, "cannot create a socket for %s: %s",
                             sc->label, errtext(e, eb, sizeof eb));
    }
    int rc = connect(cn->fd, (struct sockaddr *)&sc->sa, sc->salen);
    if (rc < 0 && errno == EINPROGRESS) {
        double limit = sc->timeout > 0 ? sc->timeout : CONNECT_TIMEOUT_S;
        struct pollfd pf = {.fd = cn->fd, .events = POLLOUT};
        int pr;
        while ((pr = poll(&pf, 1, (int)(limit * 1000.0))) < 0 && errno == EINTR) {
            if (sock_abandon_wait(sc, NULL, err)) {
                sock_conn_free(cn);
                return P4J_ERROR;
            }
        }
        if (pr == 0) {
            sock_conn_free(cn);
            p4j_error_set(err, P4J_ERR_NETWORK, CONNECT_FAILED, sc->label);
            err->timed_out = true; /* py4j's cause: socket.timeout (after `limit` s) */
            return P4J_ERROR;
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
        sock_conn_free(cn);
        p4j_error_set(err, P4J_ERR_NETWORK, CONNECT_FAILED, sc->label);
        err->os_errno = e; /* py4j's cause: the OSError of connect() */
        return P4J_ERROR;
    }
    int fl = fcntl(cn->fd, F_GETFL);
    fcntl(cn->fd, F_SETFL, fl & ~O_NONBLOCK);
    int one = 1;
    setsockopt(cn->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sc->timeout > 0) {
        set_timeout(cn->fd, SO_RCVTIMEO, sc->timeout);
        set_timeout(cn->fd, SO_SNDTIMEO, sc->timeout);
    }
    if (sc->tls && tls_handshake(sc, cn, sc->tls, false,
                                 sc->timeout > 0 ? sc->timeout : CONNECT_TIMEOUT_S,
                                 sc->timeout, err) != P4J_OK) {
        sock_conn_free(cn);
        return P4J_ERROR;
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
            sock_conn_free(cn);
            return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        }
        if (sock_send_all(sc, cn, b->data, b->len, err) != P4J_OK ||
            sock_read_line(sc, cn, t, &n, err) != P4J_OK) {
            sock_conn_free(cn);
            if (err->kind == P4J_ERR_INTERRUPTED)
                return P4J_ERROR;
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
            sock_conn_free(cn);
            return P4J_ERROR;
        }
        sock_consume_line(cn, n, false);
        set_timeout(cn->fd, SO_RCVTIMEO, sc->timeout > 0 ? sc->timeout : 0);
    }
    *out = cn;
    return P4J_OK;
}

/* True when an idle pooled connection still looks usable (not closed by the peer,
 * nothing unexpected waiting). */
bool sock_conn_alive(conn *cn)
{
    char c;
    ssize_t r = recv(cn->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return !cn->ssl || p4j_ossl.SSL_pending(cn->ssl) == 0;
    if (r <= 0 || !cn->ssl)
        return false;
    /* TLS: records that carry no data (TLS 1.3 session tickets) may wait; read them
     * without blocking: alive when no data and no close came with them */
    int fl = fcntl(cn->fd, F_GETFL);
    if (fl < 0 || fcntl(cn->fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return false;
    p4j_ossl.ERR_clear_error();
    size_t got = 0;
    bool alive = p4j_ossl.SSL_peek_ex(cn->ssl, &c, 1, &got) != 1 &&
                 p4j_ossl.SSL_get_error(cn->ssl, 0) == P4J_SSL_ERROR_WANT_READ;
    p4j_ossl.ERR_clear_error();
    fcntl(cn->fd, F_SETFL, fl);
    return alive;
}

void sock_unlink_locked(socket_client *sc, conn *cn)
{
    if (cn->prev)
        cn->prev->next = cn->next;
    else
        sc->all = cn->next;
    if (cn->next)
        cn->next->prev = cn->prev;
    cn->prev = cn->next = NULL;
    sc->nopen--;
    sc->counts.closed++;
}

/* Adds `cn` to the client's open connections unless the client is shut down; false
 * then. Called with sc->mu held. */
bool sock_link_unless_closed_locked(socket_client *sc, conn *cn)
{
    if (sc->base.closed)
        return false;
    cn->next = sc->all;
    if (sc->all)
        sc->all->prev = cn;
    sc->all = cn;
    sc->nopen++;
    sc->counts.made++;
    cn->id = ++sc->last_id;
    return true;
}

/* Reads the rest of a command the peer sent, whose first line starts the read buffer,
 * up to its "e" line; *len is the length of the whole command in the buffer. */
p4j_status sock_read_command(socket_client *sc, conn *cn, double timeout, size_t *len,
                               p4j_error *err)
{
    size_t pos = 0, n;
    for (;;) {
        if (sock_read_line_at(sc, cn, pos, timeout, &n, err) != P4J_OK)
            return P4J_ERROR;
        bool end = n == 1 && cn->rbuf[pos] == 'e';
        pos += n + 1;
        if (end) {
            *len = pos;
            return P4J_OK;
        }
    }
}


p4j_status sock_conn_adopt(socket_client *sc, int fd, double read_timeout_s, conn **out,
                           p4j_error *err)
{
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
    if (sc->tls_serve &&
        tls_handshake(sc, cn, sc->tls_serve, true,
                      read_timeout_s > 0 ? read_timeout_s : CONNECT_TIMEOUT_S, read_timeout_s,
                      err) != P4J_OK) {
        sock_conn_free(cn);
        return P4J_ERROR;
    }
    *out = cn;
    return P4J_OK;
}

p4j_status sock_conn_reopen(socket_client *sc, conn *cn, p4j_error *err)
{
    conn *fresh;
    if (sock_conn_open(sc, &fresh, err) != P4J_OK)
        return P4J_ERROR;
    pthread_mutex_lock(&sc->mu); /* op_shutdown reads cn->fd under mu */
    bool closed = sc->base.closed;
    if (!closed) {
#define SWAP(field)                                                                        \
    do {                                                                                   \
        __typeof__(cn->field) t = cn->field;                                               \
        cn->field = fresh->field;                                                          \
        fresh->field = t;                                                                  \
    } while (0)
        SWAP(fd);
        SWAP(ssl);
        SWAP(rbuf);
        SWAP(rcap);
        SWAP(rlen);
#undef SWAP
        cn->eof = cn->broken = false;
        cn->id = ++sc->last_id; /* another socket: another id (py4j: a new connection) */
        sc->counts.made++;
        sc->counts.closed++;
        sc->counts.retried++;
    }
    pthread_mutex_unlock(&sc->mu);
    sock_conn_free(fresh); /* the old socket, or the new one after a shutdown */
    return closed ? sock_closed_error(err) : P4J_OK;
}

void sock_tls_clear(socket_client *sc)
{
    if (sc->tls)
        p4j_ossl.SSL_CTX_free(sc->tls);
    if (sc->tls_serve)
        p4j_ossl.SSL_CTX_free(sc->tls_serve);
    free(sc->tls_host);
    sc->tls = sc->tls_serve = NULL;
    sc->tls_host = NULL;
}

p4j_status p4j_socket_client_set_tls(p4j_client *c, SSL_CTX *ctx, const char *host,
                                     bool check_host, SSL_CTX *serve_ctx, p4j_error *err)
{
    socket_client *sc = SC(c);
    if ((ctx || serve_ctx) && p4j_socket_tls_load(err) != P4J_OK)
        return P4J_ERROR;
    char *h = host ? strdup(host) : NULL;
    if (host && !h)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    sock_tls_clear(sc);
    if (ctx)
        p4j_ossl.SSL_CTX_up_ref(ctx);
    if (serve_ctx)
        p4j_ossl.SSL_CTX_up_ref(serve_ctx);
    sc->tls = ctx;
    sc->tls_serve = serve_ctx;
    sc->tls_host = h;
    sc->tls_check_host = check_host && h;
    return P4J_OK;
}
