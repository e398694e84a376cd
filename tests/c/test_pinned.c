/* tests/c/test_pinned.c - the socket client's pinned-thread mode (py4j's ClientServer)
 * against a fake peer written here, so that each step of the protocol is checked on
 * the wire: a callback arriving while a thread waits runs on that thread and may call
 * out again on the same connection; a thread's connection closes when it exits; ops->
 * serve answers commands on an accepted connection, with and without py4j's auth; a
 * peer that breaks the connection mid-callback gives P4J_ERR_NETWORK. (The real Java
 * ClientServer is exercised by tests/python/socket_mode/test_clientserver_socket.py.) */
#define _GNU_SOURCE 1
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
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

/* ---- a fake peer: line I/O on one socket -------------------------------------------- */

/* Reads one line (without '\n') into buf; returns its length, or -1 at EOF. */
static int peer_line(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    for (;;) {
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r <= 0)
            return -1;
        if (c == '\n')
            break;
        if (n + 1 < cap)
            buf[n++] = c;
    }
    buf[n] = 0;
    return (int)n;
}

/* Reads a whole command (lines up to "e") into buf, lines joined with '|'. */
static int peer_command(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    char line[512];
    for (;;) {
        int len = peer_line(fd, line, sizeof line);
        if (len < 0)
            return -1;
        if (!strcmp(line, "e"))
            break;
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "|" : "", line);
    }
    return (int)n;
}

static void peer_send(int fd, const char *text)
{
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

/* A listening socket on 127.0.0.1 (an ephemeral port, in *port). */
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

/* Starts fake peer `run` (arg's first member: the listening socket it accepts on) on a
 * new thread; returns the port it listens on. */
static int start_peer(void *(*run)(void *), void *arg, pthread_t *t)
{
    int port;
    *(int *)arg = listener(&port);
    assert_int_equal(pthread_create(t, NULL, run, arg), 0);
    return port;
}

/* ---- the command handler under test ------------------------------------------------- */

typedef struct handler_state {
    p4j_client *client;  /* call out on it from the handler when set */
    pthread_t thread;    /* the thread the last command ran on */
    int calls;
    char last[512];
    int64_t nested;      /* the nested call's result */
    p4j_error_kind nested_err;
} handler_state;

static int handler(void *ctx, const char *command, size_t len, char **answer, size_t *alen)
{
    handler_state *h = ctx;
    h->thread = pthread_self();
    h->calls++;
    snprintf(h->last, sizeof h->last, "%.*s", (int)len, command);
    if (h->client) { /* a callback that calls Java again: same thread, same connection */
        p4j_ref target;
        p4j_error err = {0};
        p4j_value out;
        assert_int_equal(p4j_socket_ref_new("t", false, &target, &err), P4J_OK);
        if (h->client->ops->call(h->client, &target, 0, "inner", 5, NULL, 0, &out, &err) ==
            P4J_OK)
            h->nested = out.u.i;
        h->nested_err = err.kind;
        p4j_error_clear(NULL, &err);
        free(target.handle);
    }
    const char *text = command[0] == 'g' ? "!y\n" : "!yi3\n";
    *answer = strdup(text);
    *alen = strlen(text);
    return 0;
}

static p4j_client *pinned_client(int port, handler_state *h)
{
    p4j_client *c = NULL;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_client_new_pinned("127.0.0.1", port, NULL, 10.0, &c, &err),
                     P4J_OK);
    assert_true(c->ops->caps & P4J_CAP_PINNED);
    c->ops->set_command_handler(c, handler, h);
    return c;
}

/* Calls t.outer() on c; returns its int result, or -1 with *kind set. */
static int call_outer(p4j_client *c, p4j_error_kind *kind)
{
    p4j_ref target;
    p4j_error err = {0};
    p4j_value out;
    assert_int_equal(p4j_socket_ref_new("t", false, &target, &err), P4J_OK);
    p4j_status st = c->ops->call(c, &target, 0, "outer", 5, NULL, 0, &out, &err);
    free(target.handle);
    if (kind)
        *kind = err.kind;
    p4j_error_clear(NULL, &err);
    return st == P4J_OK ? out.u.i : -1;
}

/* ---- a callback during a call, nested, on one connection ---------------------------- */

typedef struct fake_java {
    int lfd;
    int accepted;
    bool break_mid_callback;
    char nested_command[512], answer[512];
} fake_java;

static void *fake_java_run(void *arg)
{
    fake_java *j = arg;
    char buf[512];
    int fd = accept(j->lfd, NULL, NULL);
    j->accepted++;
    peer_command(fd, buf, sizeof buf); /* c|t|outer */
    peer_send(fd, "c\np0\napply\ni1\ni2\ne\n");  /* Java calls a Python proxy back */
    if (j->break_mid_callback) {
        close(fd);
        return NULL;
    }
    peer_command(fd, j->nested_command, sizeof j->nested_command); /* c|t|inner */
    peer_send(fd, "!yi7\n");
    peer_line(fd, j->answer, sizeof j->answer); /* the callback's answer */
    peer_send(fd, "!yi9\n");                    /* outer's own answer */
    /* the calling thread keeps its connection: a second call comes on it */
    peer_command(fd, buf, sizeof buf);
    peer_send(fd, "!yi11\n");
    peer_line(fd, buf, sizeof buf); /* EOF once the client closes it */
    close(fd);
    return NULL;
}

static void test_callback_runs_on_the_waiting_thread(void **state)
{
    (void)state;
    fake_java j = {0};
    pthread_t t;
    int port = start_peer(fake_java_run, &j, &t);
    handler_state h = {0};
    p4j_client *c = pinned_client(port, &h);
    h.client = c;
    assert_int_equal(call_outer(c, NULL), 9);
    assert_int_equal(h.calls, 1);
    assert_true(pthread_equal(h.thread, pthread_self()));
    assert_string_equal(h.last, "c\np0\napply\ni1\ni2\ne\n");
    assert_string_equal(j.nested_command, "c|t|inner");
    assert_int_equal(h.nested, 7);
    assert_string_equal(j.answer, "!yi3");
    size_t open = 0;
    p4j_socket_client_connections(c, &open, NULL);
    assert_int_equal(open, 1);
    assert_int_equal(call_outer(c, NULL), 11);
    c->ops->shutdown(c);
    c->ops->destroy(c);
    pthread_join(t, NULL);
    assert_int_equal(j.accepted, 1);
    close(j.lfd);
}

static void test_broken_mid_callback_is_a_network_error(void **state)
{
    (void)state;
    fake_java j = {.break_mid_callback = true};
    pthread_t t;
    int port = start_peer(fake_java_run, &j, &t);
    handler_state h = {0};
    p4j_client *c = pinned_client(port, &h);
    h.client = c;
    p4j_error_kind kind = P4J_ERR_NONE;
    assert_int_equal(call_outer(c, &kind), -1);
    assert_int_equal(kind, P4J_ERR_NETWORK);
    assert_int_equal(h.nested_err, P4J_ERR_NETWORK); /* the nested call failed too */
    pthread_join(t, NULL);
    c->ops->shutdown(c);
    c->ops->destroy(c);
    close(j.lfd);
}

/* ---- a thread's connection closes when the thread exits ----------------------------- */

typedef struct eof_java {
    int lfd;
    int calls, eofs;
} eof_java;

static void *eof_java_run(void *arg)
{
    eof_java *j = arg;
    char buf[512];
    int fd = accept(j->lfd, NULL, NULL);
    while (peer_command(fd, buf, sizeof buf) >= 0) {
        j->calls++;
        peer_send(fd, "!yi5\n");
    }
    j->eofs++;
    close(fd);
    return NULL;
}

static void *call_twice_and_exit(void *arg)
{
    p4j_client *c = arg;
    call_outer(c, NULL);
    call_outer(c, NULL);
    return NULL;
}

static void test_thread_exit_closes_its_connection(void **state)
{
    (void)state;
    eof_java j = {0};
    pthread_t peer, worker;
    int port = start_peer(eof_java_run, &j, &peer);
    handler_state h = {0};
    p4j_client *c = pinned_client(port, &h);
    pthread_create(&worker, NULL, call_twice_and_exit, c);
    pthread_join(worker, NULL);
    pthread_join(peer, NULL); /* returns once the worker's exit closed the connection */
    assert_int_equal(j.calls, 2);
    assert_int_equal(j.eofs, 1);
    size_t open = 1;
    p4j_socket_client_connections(c, &open, NULL);
    assert_int_equal(open, 0);
    c->ops->shutdown(c);
    c->ops->destroy(c);
    close(j.lfd);
}

/* ---- ops->serve: a connection the peer opened ---------------------------------------- */

typedef struct served {
    p4j_client *c;
    int fd;
    const char *token;
    p4j_status st;
    p4j_error_kind kind;
    pthread_t thread;
} served;

static void *serve_run(void *arg)
{
    served *s = arg;
    p4j_error err = {0};
    s->thread = pthread_self();
    s->st = s->c->ops->serve(s->c, s->fd, s->token, 10.0, &err);
    s->kind = err.kind;
    p4j_error_clear(NULL, &err);
    return NULL;
}

/* Serves one end of a socketpair on a new thread; *peer is the other end. */
static pthread_t serve_pair(served *s, p4j_client *c, const char *token, int *peer)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    *s = (served){.c = c, .fd = sv[0], .token = token};
    *peer = sv[1];
    pthread_t t;
    pthread_create(&t, NULL, serve_run, s);
    return t;
}

static void test_serve_answers_commands(void **state)
{
    (void)state;
    handler_state h = {0};
    p4j_client *c = pinned_client(1, &h);
    served s;
    int peer;
    pthread_t t = serve_pair(&s, c, NULL, &peer);
    char line[128];
    peer_send(peer, "c\np0\napply\ni1\ni2\ne\n");
    peer_line(peer, line, sizeof line);
    assert_string_equal(line, "!yi3");
    peer_send(peer, "g\np0\ne\n");
    peer_line(peer, line, sizeof line);
    assert_string_equal(line, "!y");
    close(peer); /* the peer is done: serve returns P4J_OK */
    pthread_join(t, NULL);
    assert_int_equal(s.st, P4J_OK);
    assert_int_equal(h.calls, 2);
    assert_true(pthread_equal(h.thread, s.thread));
    assert_string_equal(h.last, "g\np0\ne\n");
    c->ops->shutdown(c);
    c->ops->destroy(c);
}

static void test_serve_auth_and_unknown_commands(void **state)
{
    (void)state;
    handler_state h = {0};
    p4j_client *c = pinned_client(1, &h);
    served s;
    int peer;
    char line[128];
    pthread_t t = serve_pair(&s, c, "s3cret", &peer);
    peer_send(peer, "A\ns3cret\ne\nc\np0\napply\ne\n");
    peer_line(peer, line, sizeof line);
    assert_string_equal(line, "!yv");
    peer_line(peer, line, sizeof line);
    assert_string_equal(line, "!yi3");
    close(peer);
    pthread_join(t, NULL);
    assert_int_equal(s.st, P4J_OK);

    t = serve_pair(&s, c, "s3cret", &peer);
    peer_send(peer, "A\nwrong\ne\n");
    peer_line(peer, line, sizeof line);
    assert_string_equal(line, "!xn");
    pthread_join(t, NULL);
    assert_int_equal(s.st, P4J_ERROR);
    assert_int_equal(s.kind, P4J_ERR_AUTH);
    close(peer);

    t = serve_pair(&s, c, NULL, &peer);
    peer_send(peer, "q\n");
    peer_line(peer, line, sizeof line);
    assert_string_equal(line, "!xn");
    pthread_join(t, NULL);
    assert_int_equal(s.st, P4J_ERROR);
    assert_int_equal(s.kind, P4J_ERR_NETWORK);
    close(peer);
    assert_int_equal(h.calls, 1);
    c->ops->shutdown(c);
    c->ops->destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callback_runs_on_the_waiting_thread),
        cmocka_unit_test(test_broken_mid_callback_is_a_network_error),
        cmocka_unit_test(test_thread_exit_closes_its_connection),
        cmocka_unit_test(test_serve_answers_commands),
        cmocka_unit_test(test_serve_auth_and_unknown_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
