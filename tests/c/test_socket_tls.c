/* tests/c/test_socket_tls.c - TLS in the socket transport (p4j_socket_client_set_tls)
 * against a fake py4j peer written here with OpenSSL, with certificates made at run time
 * (a P-256 key, self-signed for "localhost"): calls over TLS from a pooled and a pinned
 * client, a certificate that is not trusted, the host name check as asked, and a served
 * connection (ops->serve) whose handshake the transport runs as server. (Against py4j's
 * own Java servers: tests/python/socket_mode/test_tls.py.) The transport is not linked with OpenSSL:
 * it resolves it at run time from the libssl this test links, which the first test
 * checks. */
#define _GNU_SOURCE 1
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "socket_client.h"
#include "socket_openssl.h"

/* The ABI socket_openssl.h declares instead of including OpenSSL's headers. */
_Static_assert(P4J_SSL_ERROR_WANT_READ == SSL_ERROR_WANT_READ, "SSL_ERROR_WANT_READ");
_Static_assert(P4J_SSL_ERROR_WANT_WRITE == SSL_ERROR_WANT_WRITE, "SSL_ERROR_WANT_WRITE");
_Static_assert(P4J_SSL_ERROR_SYSCALL == SSL_ERROR_SYSCALL, "SSL_ERROR_SYSCALL");
_Static_assert(P4J_SSL_ERROR_ZERO_RETURN == SSL_ERROR_ZERO_RETURN, "SSL_ERROR_ZERO_RETURN");
_Static_assert(P4J_X509_V_OK == X509_V_OK, "X509_V_OK");
_Static_assert(P4J_SSL_CTRL_SET_TLSEXT_HOSTNAME == SSL_CTRL_SET_TLSEXT_HOSTNAME,
               "SSL_CTRL_SET_TLSEXT_HOSTNAME");
_Static_assert(P4J_TLSEXT_NAMETYPE_host_name == TLSEXT_NAMETYPE_host_name,
               "TLSEXT_NAMETYPE_host_name");
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING /* 3.x headers */
_Static_assert(P4J_OSSL3_UNEXPECTED_EOF_WHILE_READING == SSL_R_UNEXPECTED_EOF_WHILE_READING,
               "OpenSSL 3's reason code");
_Static_assert(P4J_OSSL3_LIB_SSL == ERR_LIB_SSL, "OpenSSL's SSL library code");
#endif

/* ---- certificates ------------------------------------------------------------------ */

typedef struct cert {
    EVP_PKEY *key;
    X509 *x509;
} cert;

/* A self-signed certificate for DNS name "localhost" (no IP address). */
static cert make_cert(void)
{
    cert c = {EVP_EC_gen("P-256"), X509_new()};
    assert_non_null(c.key);
    assert_non_null(c.x509);
    ASN1_INTEGER_set(X509_get_serialNumber(c.x509), 1);
    X509_gmtime_adj(X509_getm_notBefore(c.x509), -60);
    X509_gmtime_adj(X509_getm_notAfter(c.x509), 3600);
    X509_set_pubkey(c.x509, c.key);
    X509_NAME *name = X509_get_subject_name(c.x509);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost",
                               -1, -1, 0);
    X509_set_issuer_name(c.x509, name);
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, c.x509, c.x509, NULL, NULL, 0);
    X509_EXTENSION *san = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "DNS:localhost");
    assert_non_null(san);
    X509_add_ext(c.x509, san, -1);
    X509_EXTENSION_free(san);
    assert_true(X509_sign(c.x509, c.key, EVP_sha256()) > 0);
    return c;
}

static void cert_free(cert *c)
{
    EVP_PKEY_free(c->key);
    X509_free(c->x509);
}

/* A server context showing `c`. */
static SSL_CTX *server_ctx(const cert *c)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_use_certificate(ctx, c->x509), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey(ctx, c->key), 1);
    return ctx;
}

/* A client context that verifies the peer against `trusted` only. */
static SSL_CTX *client_ctx(const cert *trusted)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_int_equal(X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), trusted->x509), 1);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

/* ---- a fake py4j peer over TLS ------------------------------------------------------ */

/* Reads one command (lines up to "e") from ssl; returns its line count, -1 at EOF. */
static int tls_command(SSL *ssl)
{
    int lines = 0;
    char line[256];
    size_t n = 0;
    for (;;) {
        char c;
        if (SSL_read(ssl, &c, 1) != 1)
            return -1;
        if (c != '\n') {
            if (n + 1 < sizeof line)
                line[n++] = c;
            continue;
        }
        line[n] = 0;
        lines++;
        if (!strcmp(line, "e"))
            return lines;
        n = 0;
    }
}

typedef struct peer {
    int lfd;           /* listening socket (first member: see start_peer) */
    SSL_CTX *ctx;      /* its server side */
    int calls, handshakes_failed;
} peer;

/* Serves connections until the listening socket closes: each call is answered 7. */
static void *peer_run(void *arg)
{
    peer *p = arg;
    for (;;) {
        int fd = accept(p->lfd, NULL, NULL);
        if (fd < 0)
            return NULL;
        SSL *ssl = SSL_new(p->ctx);
        SSL_set_fd(ssl, fd);
        if (SSL_accept(ssl) != 1) {
            p->handshakes_failed++;
        } else {
            while (tls_command(ssl) > 0) {
                p->calls++;
                SSL_write(ssl, "!yi7\n", 5);
            }
        }
        SSL_free(ssl);
        close(fd);
    }
}

static int listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 8), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

typedef struct fixture {
    cert good, other;
    peer p;
    pthread_t t;
    int port;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->good = make_cert();
    f->other = make_cert();
    f->p.ctx = server_ctx(&f->good);
    f->p.lfd = listener(&f->port);
    assert_int_equal(pthread_create(&f->t, NULL, peer_run, &f->p), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    shutdown(f->p.lfd, SHUT_RDWR);
    close(f->p.lfd);
    pthread_join(f->t, NULL);
    SSL_CTX_free(f->p.ctx);
    cert_free(&f->good);
    cert_free(&f->other);
    free(f);
    return 0;
}

/* A client of the fake peer at `host` with TLS context ctx (given away). */
static p4j_client *tls_client(fixture *f, bool pinned, const char *host, SSL_CTX *ctx,
                              bool check_host)
{
    p4j_client *c;
    p4j_error err = {0};
    p4j_status st = pinned ? p4j_socket_client_new_pinned(host, f->port, NULL, 10, &c, &err)
                           : p4j_socket_client_new(host, f->port, NULL, 10, &c, &err);
    assert_int_equal(st, P4J_OK);
    assert_int_equal(p4j_socket_client_set_tls(c, ctx, host, check_host, NULL, &err), P4J_OK);
    SSL_CTX_free(ctx); /* the client holds its own reference */
    return c;
}

/* Calls t.m() on c: P4J_OK with *out, or the error's kind and message in err. */
static p4j_status call_m(p4j_client *c, int64_t *out, p4j_error *err)
{
    p4j_ref t;
    p4j_value v;
    assert_int_equal(p4j_socket_ref_new("t", false, &t, err), P4J_OK);
    p4j_status st = c->ops->call(c, &t, 0, "m", 1, NULL, 0, &v, err);
    if (st == P4J_OK)
        *out = v.u.i;
    free(t.handle);
    return st;
}

static void done(p4j_client *c)
{
    c->ops->shutdown(c);
    c->ops->destroy(c);
}

/* ---- tests ------------------------------------------------------------------------ */

static void test_calls_over_tls(void **state)
{
    fixture *f = *state;
    for (int pinned = 0; pinned < 2; pinned++) {
        p4j_client *c = tls_client(f, pinned, "localhost", client_ctx(&f->good), true);
        p4j_error err = {0};
        int64_t v = 0;
        for (int i = 0; i < 3; i++) {
            assert_int_equal(call_m(c, &v, &err), P4J_OK);
            assert_int_equal(v, 7);
        }
        p4j_socket_counts n;
        p4j_socket_client_counts(c, &n);
        assert_int_equal(n.made, 1); /* one TLS connection, kept (pooled or pinned) */
        done(c);
    }
}

static void test_untrusted_certificate(void **state)
{
    fixture *f = *state;
    p4j_client *c = tls_client(f, false, "localhost", client_ctx(&f->other), true);
    p4j_error err = {0};
    int64_t v;
    assert_int_equal(call_m(c, &v, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_NETWORK);
    assert_non_null(strstr(err.message, "certificate verify failed"));
    p4j_error_clear(NULL, &err);
    done(c);
}

static void test_host_name_checked_only_when_asked(void **state)
{
    fixture *f = *state;
    /* the certificate names "localhost", not 127.0.0.1 */
    p4j_client *c = tls_client(f, false, "127.0.0.1", client_ctx(&f->good), true);
    p4j_error err = {0};
    int64_t v;
    assert_int_equal(call_m(c, &v, &err), P4J_ERROR);
    assert_non_null(strstr(err.message, "certificate verify failed"));
    p4j_error_clear(NULL, &err);
    done(c);
    c = tls_client(f, false, "127.0.0.1", client_ctx(&f->good), false);
    assert_int_equal(call_m(c, &v, &err), P4J_OK);
    assert_int_equal(v, 7);
    done(c);
}

typedef struct java_side {
    int fd;
    SSL_CTX *ctx;
    char answer[64];
    int ok;
} java_side;

/* Java's end of a served connection: TLS client, one callback command, its answer. */
static void *java_run(void *arg)
{
    java_side *j = arg;
    SSL *ssl = SSL_new(j->ctx);
    SSL_set_fd(ssl, j->fd);
    if (SSL_connect(ssl) == 1) {
        const char *cmd = "c\np0\napply\ne\n";
        SSL_write(ssl, cmd, (int)strlen(cmd));
        int n = SSL_read(ssl, j->answer, sizeof j->answer - 1);
        j->ok = n > 0;
        if (n > 0)
            j->answer[n] = 0;
    }
    SSL_free(ssl);
    close(j->fd); /* the end of Java's use: serve returns */
    return NULL;
}

static int answer_9(void *ctx, const char *command, size_t len, char **answer, size_t *alen)
{
    (void)ctx;
    (void)command;
    (void)len;
    *answer = strdup("!yi9\n");
    *alen = 5;
    return 0;
}

static void test_served_connection_handshake_as_server(void **state)
{
    fixture *f = *state;
    p4j_client *c;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_client_new_pinned("127.0.0.1", f->port, NULL, 10, &c, &err),
                     P4J_OK);
    SSL_CTX *serve = server_ctx(&f->good);
    assert_int_equal(p4j_socket_client_set_tls(c, NULL, NULL, false, serve, &err), P4J_OK);
    SSL_CTX_free(serve);
    c->ops->set_command_handler(c, answer_9, NULL);
    int port, lfd = listener(&port);
    java_side j = {.fd = socket(AF_INET, SOCK_STREAM, 0), .ctx = client_ctx(&f->good)};
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(j.fd, (struct sockaddr *)&sa, sizeof sa), 0);
    int served = accept(lfd, NULL, NULL);
    close(lfd);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, java_run, &j), 0);
    assert_int_equal(c->ops->serve(c, served, NULL, 10, &err), P4J_OK);
    pthread_join(t, NULL);
    assert_true(j.ok);
    assert_string_equal(j.answer, "!yi9\n");
    SSL_CTX_free(j.ctx);
    done(c);
}

/* The transport's OpenSSL is the libssl this process linked: the same functions, and
 * it reads a context's options as that library does. */
static void test_openssl_resolved_from_the_loaded_libssl(void **state)
{
    (void)state;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_tls_load(&err), P4J_OK);
    void *(*mine_new)(SSL_CTX *) = (void *(*)(SSL_CTX *))SSL_new;
    void *linked;
    memcpy(&linked, &mine_new, sizeof linked);
    assert_ptr_equal(p4j_socket_tls_function("SSL_new"), linked);
    assert_non_null(p4j_socket_tls_function("OpenSSL_version_num"));
    assert_null(p4j_socket_tls_function("SSL_CTX_new")); /* not one the transport calls */
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    assert_true(p4j_socket_tls_ctx_options(ctx) == (uint64_t)SSL_CTX_get_options(ctx));
    assert_true(p4j_socket_tls_ctx_options(ctx) & SSL_OP_NO_TICKET);
    SSL_CTX_free(ctx);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* OpenSSL writes with write(2); Python ignores it too */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openssl_resolved_from_the_loaded_libssl),
        cmocka_unit_test_setup_teardown(test_calls_over_tls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untrusted_certificate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_name_checked_only_when_asked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_served_connection_handshake_as_server, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
