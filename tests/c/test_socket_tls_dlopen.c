/* tests/c/test_socket_tls_dlopen.c - TLS in the socket transport on an OpenSSL that the
 * process loads with dlopen after it started, as Python's ssl module does: this test
 * links no OpenSSL; it opens P4J_TEST_LIBSSL (default libssl.so.3, else libssl.so.1.1),
 * after P4J_TEST_LIBCRYPTO when set (a libssl outside the loader's path, e.g. OpenSSL
 * 1.1.1 from a Debian 11 root: P4J_TEST_LIBCRYPTO=<root>/usr/lib/x86_64-linux-gnu/
 * libcrypto.so.1.1 P4J_TEST_LIBSSL=<root>/.../libssl.so.1.1). Its fake py4j peer calls
 * that library through dlsym; certificates come from the openssl command. Checked:
 * calls (pooled and pinned), an untrusted certificate, a name or address mismatch, and
 * a peer that closes without close_notify (1.1.1: SSL_ERROR_SYSCALL with nothing
 * queued; 3.x: SSL_R_UNEXPECTED_EOF_WHILE_READING) read as a closed connection. */
#define _GNU_SOURCE 1
#include <arpa/inet.h>
#include <dlfcn.h>
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

#include "socket_client.h"

/* The OpenSSL functions the fake peer and the client contexts use, from the opened
 * library (all in 1.1.1 and 3.x; SSL_CTX and SSL are opaque here). */
#define PEER_FUNCS(X)                                                              \
    X(const void *, TLS_server_method, (void))                                     \
    X(const void *, TLS_client_method, (void))                                     \
    X(void *, SSL_CTX_new, (const void *))                                         \
    X(void, SSL_CTX_free, (void *))                                                \
    X(int, SSL_CTX_use_certificate_file, (void *, const char *, int))              \
    X(int, SSL_CTX_use_PrivateKey_file, (void *, const char *, int))               \
    X(int, SSL_CTX_load_verify_locations, (void *, const char *, const char *))    \
    X(void, SSL_CTX_set_verify, (void *, int, void *))                             \
    X(void *, SSL_new, (void *))                                                   \
    X(void, SSL_free, (void *))                                                    \
    X(int, SSL_set_fd, (void *, int))                                              \
    X(int, SSL_accept, (void *))                                                   \
    X(int, SSL_read, (void *, void *, int))                                        \
    X(int, SSL_write, (void *, const void *, int))
#define PEM 1         /* SSL_FILETYPE_PEM */
#define VERIFY_PEER 1 /* SSL_VERIFY_PEER */

static struct {
#define PEER_FIELD(ret, name, params) ret(*name) params;
    PEER_FUNCS(PEER_FIELD)
#undef PEER_FIELD
} o;

static char dir[] = "/tmp/p4j-tls-dlopen-XXXXXX";
static char good_pem[64], good_key[64], other_pem[64];
static void *server;     /* the peer's SSL_CTX */
static int lfd, port;
static volatile int close_after_command; /* the peer closes instead of answering */
static pthread_t peer_thread;

static void make_cert(const char *name, char *pem, char *key)
{
    snprintf(pem, 64, "%s/%s.pem", dir, name);
    snprintf(key, 64, "%s/%s.key", dir, name);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
             "-nodes -keyout %s -out %s -days 2 -subj /CN=localhost "
             "-addext subjectAltName=DNS:localhost >/dev/null 2>&1", key, pem);
    assert_int_equal(system(cmd), 0);
}

/* Reads one command (lines up to "e"); its line count, -1 at EOF. */
static int read_command(void *ssl)
{
    char line[256];
    size_t n = 0;
    for (int lines = 0;;) {
        char c;
        if (o.SSL_read(ssl, &c, 1) != 1)
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

/* Serves connections until the listening socket closes: each call is answered 7. */
static void *peer_run(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            return NULL;
        void *ssl = o.SSL_new(server);
        o.SSL_set_fd(ssl, fd);
        if (o.SSL_accept(ssl) == 1)
            while (read_command(ssl) > 0 && !close_after_command)
                o.SSL_write(ssl, "!yi7\n", 5);
        o.SSL_free(ssl); /* no close_notify sent */
        close(fd);
    }
}

static int setup(void **state)
{
    (void)state;
    const char *crypto = getenv("P4J_TEST_LIBCRYPTO"), *ssl = getenv("P4J_TEST_LIBSSL");
    if (crypto && !dlopen(crypto, RTLD_NOW | RTLD_GLOBAL))
        fail_msg("cannot open %s: %s", crypto, dlerror());
    void *h = dlopen(ssl ? ssl : "libssl.so.3", RTLD_NOW | RTLD_GLOBAL);
    if (!h && !ssl)
        h = dlopen("libssl.so.1.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        fail_msg("cannot open libssl: %s", dlerror());
    void *sym;
#define PEER_RESOLVE(ret, name, params)                                                  \
    if (!(sym = dlsym(h, #name)))                                                        \
        fail_msg("libssl has no %s", #name);                                             \
    memcpy(&o.name, &sym, sizeof sym);
    PEER_FUNCS(PEER_RESOLVE)
#undef PEER_RESOLVE
    assert_non_null(mkdtemp(dir));
    char unused[64];
    make_cert("good", good_pem, good_key);
    make_cert("other", other_pem, unused);
    server = o.SSL_CTX_new(o.TLS_server_method());
    assert_int_equal(o.SSL_CTX_use_certificate_file(server, good_pem, PEM), 1);
    assert_int_equal(o.SSL_CTX_use_PrivateKey_file(server, good_key, PEM), 1);
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(lfd, 8), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
    port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&peer_thread, NULL, peer_run, NULL), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    shutdown(lfd, SHUT_RDWR);
    close(lfd);
    pthread_join(peer_thread, NULL);
    o.SSL_CTX_free(server);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A client of the peer at `host` trusting `ca`, the name checked when `check`. */
static p4j_client *client(bool pinned, const char *host, const char *ca, bool check)
{
    p4j_client *c;
    p4j_error err = {0};
    p4j_status st = pinned ? p4j_socket_client_new_pinned(host, port, NULL, 10, &c, &err)
                           : p4j_socket_client_new(host, port, NULL, 10, &c, &err);
    assert_int_equal(st, P4J_OK);
    void *ctx = o.SSL_CTX_new(o.TLS_client_method());
    assert_int_equal(o.SSL_CTX_load_verify_locations(ctx, ca, NULL), 1);
    o.SSL_CTX_set_verify(ctx, VERIFY_PEER, NULL);
    if (p4j_socket_client_set_tls(c, ctx, host, check, NULL, &err) != P4J_OK)
        fail_msg("set_tls: %s", err.message);
    o.SSL_CTX_free(ctx); /* the client holds its own reference */
    return c;
}

/* Calls t.m() on c: P4J_OK with *out, or the error in err. */
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

/* c's first call fails with P4J_ERR_NETWORK whose message holds `text`. */
static void first_call_fails(p4j_client *c, const char *text)
{
    p4j_error err = {0};
    int64_t v;
    assert_int_equal(call_m(c, &v, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_NETWORK);
    if (!strstr(err.message, text))
        fail_msg("expected \"%s\" in: %s", text, err.message);
    p4j_error_clear(NULL, &err);
    done(c);
}

static void test_the_table_is_the_opened_library(void **state)
{
    (void)state;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_tls_load(&err), P4J_OK);
    void *mine;
    memcpy(&mine, &o.SSL_new, sizeof mine);
    assert_ptr_equal(p4j_socket_tls_function("SSL_new"), mine);
    unsigned long (*version)(void);
    void *v = p4j_socket_tls_function("OpenSSL_version_num");
    assert_non_null(v);
    memcpy(&version, &v, sizeof v);
    assert_true(version() >= 0x10101000UL);
    print_message("OpenSSL %#lx\n", version());
}

static void test_calls(void **state)
{
    (void)state;
    for (int pinned = 0; pinned < 2; pinned++) {
        p4j_client *c = client(pinned, "localhost", good_pem, true);
        p4j_error err = {0};
        for (int i = 0; i < 3; i++) {
            int64_t v = 0;
            assert_int_equal(call_m(c, &v, &err), P4J_OK);
            assert_int_equal(v, 7);
        }
        done(c);
    }
    p4j_client *c = client(false, "127.0.0.1", good_pem, false); /* address not checked */
    p4j_error err = {0};
    int64_t v = 0;
    assert_int_equal(call_m(c, &v, &err), P4J_OK);
    assert_int_equal(v, 7);
    done(c);
}

static void test_certificate_checks(void **state)
{
    (void)state;
    first_call_fails(client(false, "localhost", other_pem, true), "certificate verify failed");
    first_call_fails(client(false, "127.0.0.1", good_pem, true), "certificate verify failed");
}

static void test_close_without_close_notify_is_a_closed_connection(void **state)
{
    (void)state;
    close_after_command = 1;
    first_call_fails(client(false, "localhost", good_pem, true), "closed the connection");
    close_after_command = 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* OpenSSL writes with write(2); Python ignores it too */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_table_is_the_opened_library),
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_certificate_checks),
        cmocka_unit_test(test_close_without_close_notify_is_a_closed_connection),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
