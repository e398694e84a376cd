/* tests/c/test_socket_client.c - the socket p4j_client against a real py4j
 * GatewayServer (py4j's own jar, unmodified), started here like py4j's
 * launch_gateway does: `java -cp <jar> py4j.GatewayServer --die-on-broken-pipe 0`,
 * port (and token) read from its stdout. Needs P4J_PY4J_JAR (else every test is
 * skipped) and `java` (or P4J_JAVA). */
#define _GNU_SOURCE 1
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "socket_client.h"

/* ---- a py4j server process ---------------------------------------------------------- */

typedef struct server {
    pid_t pid;
    int port;
    int stdin_fd; /* closing it stops the server (--die-on-broken-pipe) */
    char token[256];
} server;

static const char *jar_path(void)
{
    const char *jar = getenv("P4J_PY4J_JAR");
    return jar && *jar ? jar : NULL;
}

/* Starts a GatewayServer on an ephemeral port; returns 0 or -1. */
static int server_start(server *s, bool auth)
{
    const char *java = getenv("P4J_JAVA");
    if (!java || !*java)
        java = "java";
    int in[2], out[2];
    memset(s, 0, sizeof *s);
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        return -1;
    s->pid = fork();
    if (s->pid < 0)
        return -1;
    if (s->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull)
            dup2(fileno(devnull), 2);
        const char *argv[8];
        int k = 0;
        argv[k++] = java;
        argv[k++] = "-cp";
        argv[k++] = jar_path();
        argv[k++] = "py4j.GatewayServer";
        argv[k++] = "--die-on-broken-pipe";
        if (auth)
            argv[k++] = "--enable-auth";
        argv[k++] = "0";
        argv[k] = NULL;
        execvp(java, (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    s->stdin_fd = in[1];
    FILE *f = fdopen(out[0], "r");
    char line[300];
    int ok = f && fgets(line, sizeof line, f) && (s->port = atoi(line)) > 0;
    if (ok && auth) {
        ok = fgets(s->token, sizeof s->token, f) != NULL;
        s->token[strcspn(s->token, "\r\n")] = 0;
    }
    if (f)
        fclose(f);
    if (!ok) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        close(s->stdin_fd);
        return -1;
    }
    return 0;
}

static void server_kill(server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
    if (s->stdin_fd > 0) {
        close(s->stdin_fd);
        s->stdin_fd = 0;
    }
}

/* Waits up to `ms` until nothing accepts connections on `port`. */
static bool port_closed_within(int port, int ms)
{
    for (int i = 0; i < ms / 20; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        close(fd);
        if (rc < 0 && errno == ECONNREFUSED)
            return true;
        usleep(20000);
    }
    return false;
}

/* Waits up to `ms` for the server process to exit by itself. */
static bool server_exits_within(server *s, int ms)
{
    for (int i = 0; i < ms / 10; i++) {
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
            s->pid = 0;
            return true;
        }
        usleep(10000);
    }
    return false;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- fixture: one shared server and client ---------------------------------------- */

static server main_server;
static p4j_client *gw; /* client of main_server */

static int group_setup(void **state)
{
    (void)state;
    if (!jar_path())
        return 0; /* every test skips */
    if (server_start(&main_server, false) < 0) {
        fprintf(stderr, "cannot start the py4j GatewayServer (P4J_PY4J_JAR=%s)\n", jar_path());
        return -1;
    }
    p4j_error err = {0};
    if (p4j_socket_client_new("127.0.0.1", main_server.port, NULL, 0, &gw, &err) != P4J_OK) {
        fprintf(stderr, "client: %s\n", err.message);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (gw) {
        gw->ops->shutdown(gw);
        gw->ops->destroy(gw);
    }
    server_kill(&main_server);
    return 0;
}

#define NEED_SERVER()                                                                      \
    do {                                                                                   \
        if (!jar_path()) {                                                                 \
            fprintf(stderr, "P4J_PY4J_JAR is not set: skipping py4j server tests\n");     \
            skip();                                                                        \
        }                                                                                  \
    } while (0)

/* ---- helpers -------------------------------------------------------------------------- */

static p4j_ref cls_ref(const char *fqn)
{
    p4j_ref r;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_ref_new(fqn, true, &r, &err), P4J_OK);
    return r;
}

static p4j_value str_arg(const char *s)
{
    p4j_value v;
    memset(&v, 0, sizeof v);
    v.kind = P4J_STRING;
    v.u.s.data = s;
    v.u.s.len = strlen(s);
    v.u.s.enc = P4J_ENC_UTF8;
    return v;
}

static p4j_value int_arg(int32_t i)
{
    p4j_value v;
    memset(&v, 0, sizeof v);
    v.kind = P4J_INT;
    v.u.i = i;
    return v;
}

/* Calls and asserts success; the result lands in *out. (Results are filled in
 * place, never returned by value: a short string points into its value's own
 * inline storage, which a struct copy would leave behind.) */
static void call_ok(p4j_value *out, p4j_client *c, const p4j_ref *target, unsigned flags,
                    const char *name, const p4j_value *args, size_t nargs)
{
    p4j_error err = {0};
    p4j_status st = c->ops->call(c, target, flags, name, strlen(name), args, nargs, out, &err);
    if (st != P4J_OK)
        fail_msg("%s failed: kind %d: %s", name, (int)err.kind,
                 err.message ? err.message : "(no message)");
}

static void new_ok(p4j_value *out, p4j_client *c, const char *fqn, const p4j_value *args,
                   size_t nargs)
{
    p4j_ref cls = cls_ref(fqn);
    p4j_error err = {0};
    if (c->ops->construct(c, &cls, args, nargs, out, &err) != P4J_OK)
        fail_msg("new %s failed: %s", fqn, err.message ? err.message : "");
    c->ops->release(c, &cls);
}

static void release_value(p4j_client *c, p4j_value *v)
{
    if (p4j_kind_has_ref(v->kind))
        c->ops->release(c, &v->ref);
    p4j_value_clear(v);
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_static_call(void **state)
{
    (void)state;
    NEED_SERVER();
    p4j_ref sys = cls_ref("java.lang.System");
    p4j_value t;
    call_ok(&t, gw, &sys, P4J_CALL_STATIC, "currentTimeMillis", NULL, 0);
    assert_int_equal(t.kind, P4J_LONG);
    assert_true(t.u.l > 1600000000000LL);
    gw->ops->release(gw, &sys);

    p4j_ref math = cls_ref("java.lang.Math");
    p4j_value a[2] = {int_arg(3), int_arg(9)};
    p4j_value m;
    call_ok(&m, gw, &math, P4J_CALL_STATIC, "max", a, 2);
    assert_int_equal(m.kind, P4J_INT);
    assert_int_equal(m.u.i, 9);
    gw->ops->release(gw, &math);
}

static void test_construct_and_call(void **state)
{
    (void)state;
    NEED_SERVER();
    p4j_value sb;
    new_ok(&sb, gw, "java.lang.StringBuilder", NULL, 0);
    assert_int_equal(sb.kind, P4J_REF);
    assert_non_null(sb.ref.handle);
    p4j_value hello = str_arg("hello");
    p4j_value r;
    call_ok(&r, gw, &sb.ref, 0, "append", &hello, 1);
    release_value(gw, &r);
    p4j_value n = int_arg(42);
    call_ok(&r, gw, &sb.ref, 0, "append", &n, 1);
    release_value(gw, &r);
    p4j_value s;
    call_ok(&s, gw, &sb.ref, 0, "toString", NULL, 0);
    assert_int_equal(s.kind, P4J_STRING);
    assert_int_equal(s.u.s.len, 7);
    assert_memory_equal(s.u.s.data, "hello42", 7);
    p4j_value_clear(&s);
    release_value(gw, &sb);
}

/* A string goes to Java and back through StringBuilder; Java's length() counts
 * UTF-16 units. */
static void round_trip_string(const p4j_value *arg, const char *utf8, size_t utf8_len,
                              int java_len)
{
    p4j_value sb;
    new_ok(&sb, gw, "java.lang.StringBuilder", NULL, 0);
    p4j_value r;
    call_ok(&r, gw, &sb.ref, 0, "append", arg, 1);
    release_value(gw, &r);
    p4j_value len;
    call_ok(&len, gw, &sb.ref, 0, "length", NULL, 0);
    assert_int_equal(len.kind, P4J_INT);
    assert_int_equal(len.u.i, java_len);
    p4j_value s;
    call_ok(&s, gw, &sb.ref, 0, "toString", NULL, 0);
    assert_int_equal(s.kind, P4J_STRING);
    assert_int_equal(s.u.s.len, utf8_len);
    assert_memory_equal(s.u.s.data, utf8, utf8_len);
    p4j_value_clear(&s);
    release_value(gw, &sb);
}

static void test_string_round_trip(void **state)
{
    (void)state;
    NEED_SERVER();
    /* NUL, emoji, newline, CR, backslash, a literal backslash-n, tab */
    static const char u8[] = "a\0b\xF0\x9F\x98\x80\nc\rd\\e\\nf\tg";
    p4j_value v = str_arg("");
    v.u.s.data = u8;
    v.u.s.len = sizeof u8 - 1;
    round_trip_string(&v, u8, sizeof u8 - 1, 16);

    static const uint16_t u16[] = {'a', 0, 0xD83D, 0xDE00, '\n', '\\', 0x00E9};
    v.u.s.data = u16;
    v.u.s.len = 7;
    v.u.s.enc = P4J_ENC_UTF16;
    static const char u16_as8[] = "a\0\xF0\x9F\x98\x80\n\\\xC3\xA9";
    round_trip_string(&v, u16_as8, sizeof u16_as8 - 1, 7);

    static const uint32_t u32[] = {0x1F600, '\r', 0};
    v.u.s.data = u32;
    v.u.s.len = 3;
    v.u.s.enc = P4J_ENC_UCS4;
    static const char u32_as8[] = "\xF0\x9F\x98\x80\r\0";
    round_trip_string(&v, u32_as8, sizeof u32_as8 - 1, 4);

    static const unsigned char l1[] = {0xE9, '\\', 'n', 0xFF};
    v.u.s.data = l1;
    v.u.s.len = 4;
    v.u.s.enc = P4J_ENC_LATIN1;
    static const char l1_as8[] = "\xC3\xA9\\n\xC3\xBF";
    round_trip_string(&v, l1_as8, sizeof l1_as8 - 1, 4);

    /* a long string (crosses the server's 8 KiB writer buffer both ways) */
    size_t n = 100000;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = "ab\\\ncd\r"[i % 7];
    v = str_arg("");
    v.u.s.data = big;
    v.u.s.len = n;
    round_trip_string(&v, big, n, (int)n);
    free(big);

    /* a lone surrogate is refused before anything is sent */
    static const uint16_t lone[] = {'x', 0xD800};
    v.u.s.data = lone;
    v.u.s.len = 2;
    v.u.s.enc = P4J_ENC_UTF16;
    p4j_ref string_cls = cls_ref("java.lang.String");
    p4j_value out;
    p4j_error err = {0};
    assert_int_equal(gw->ops->call(gw, &string_cls, P4J_CALL_STATIC, "valueOf", 7, &v, 1, &out,
                                   &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "surrogate"));
    p4j_error_clear(gw, &err);
    gw->ops->release(gw, &string_cls);
}

/* byte[] both ways: java.util.Arrays.copyOf(byte[], int) echoes the array. */
static void echo_bytes(size_t n)
{
    uint8_t *src = malloc(n ? n : 1), *back = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        src[i] = (uint8_t)(i * 2654435761u >> 13);
    p4j_value args[2];
    memset(args, 0, sizeof args);
    args[0].kind = P4J_BYTES;
    args[0].u.bytes.data = src;
    args[0].u.bytes.len = n;
    args[1] = int_arg((int32_t)n);
    p4j_ref arrays = cls_ref("java.util.Arrays");
    p4j_value r;
    call_ok(&r, gw, &arrays, P4J_CALL_STATIC, "copyOf", args, 2);
    assert_int_equal(r.kind, P4J_BYTES);
    assert_int_equal(r.u.bytes.len, n);
    p4j_error err = {0};
    assert_int_equal(gw->ops->read_bytes(gw, &r, back, &err), P4J_OK);
    assert_memory_equal(back, src, n);
    p4j_value_clear(&r);
    gw->ops->release(gw, &arrays);
    free(src);
    free(back);
}

static void test_bytes_both_ways(void **state)
{
    (void)state;
    NEED_SERVER();
    echo_bytes(0);
    echo_bytes(1);
    echo_bytes(16384);
    echo_bytes(4 * 1024 * 1024);

    /* X7: ByteBuffer.allocate(16384).array() */
    p4j_ref bb = cls_ref("java.nio.ByteBuffer");
    p4j_value n = int_arg(16384);
    p4j_value buf;
    call_ok(&buf, gw, &bb, P4J_CALL_STATIC, "allocate", &n, 1);
    p4j_value arr;
    call_ok(&arr, gw, &buf.ref, 0, "array", NULL, 0);
    assert_int_equal(arr.kind, P4J_BYTES);
    assert_int_equal(arr.u.bytes.len, 16384);
    uint8_t *dst = malloc(16384);
    uint8_t *zero = calloc(1, 16384);
    p4j_error err = {0};
    assert_int_equal(gw->ops->read_bytes(gw, &arr, dst, &err), P4J_OK);
    assert_memory_equal(dst, zero, 16384);
    free(dst);
    free(zero);
    p4j_value_clear(&arr);
    release_value(gw, &buf);
    gw->ops->release(gw, &bb);
}

static void test_result_kinds(void **state)
{
    (void)state;
    NEED_SERVER();
    static const struct {
        const char *fqn;
        p4j_kind kind;
    } ctors[] = {{"java.util.ArrayList", P4J_LIST},
                 {"java.util.HashMap", P4J_MAP},
                 {"java.util.HashSet", P4J_SET},
                 {"java.lang.Object", P4J_REF}};
    for (size_t i = 0; i < 4; i++) {
        p4j_value v;
    new_ok(&v, gw, ctors[i].fqn, NULL, 0);
        assert_int_equal(v.kind, ctors[i].kind);
        if (ctors[i].kind == P4J_LIST) {
            p4j_value it;
    call_ok(&it, gw, &v.ref, 0, "iterator", NULL, 0);
            assert_int_equal(it.kind, P4J_ITERATOR);
            release_value(gw, &it);
            p4j_value vd;
    call_ok(&vd, gw, &v.ref, 0, "clear", NULL, 0);
            assert_int_equal(vd.kind, P4J_VOID);
            p4j_value b;
    call_ok(&b, gw, &v.ref, 0, "isEmpty", NULL, 0);
            assert_int_equal(b.kind, P4J_BOOL);
            assert_true(b.u.b);
        }
        release_value(gw, &v);
    }
    p4j_value s = str_arg("abc");
    p4j_value str;
    new_ok(&str, gw, "java.lang.String", &s, 1);
    assert_int_equal(str.kind, P4J_STRING);
    p4j_value_clear(&str);
    p4j_value chars;
    call_ok(&chars, gw, &(p4j_ref){.handle = "java.lang.String", .cls = (void *)p4j_wire_class_tag},
                              P4J_CALL_STATIC, "valueOf", &s, 1);
    p4j_value_clear(&chars);

    p4j_value dec_arg = str_arg("1.50");
    p4j_value d;
    new_ok(&d, gw, "java.math.BigDecimal", &dec_arg, 1);
    assert_int_equal(d.kind, P4J_DECIMAL);
    assert_int_equal(d.u.s.len, 4);
    assert_memory_equal(d.u.s.data, "1.50", 4);
    p4j_value_clear(&d);

    p4j_value dd;
    memset(&dd, 0, sizeof dd);
    dd.kind = P4J_DOUBLE;
    dd.u.d = 0.1;
    p4j_ref fl = cls_ref("java.lang.Float");
    p4j_value f;
    call_ok(&f, gw, &fl, P4J_CALL_STATIC, "valueOf", &(p4j_value){.kind = P4J_STRING, .u.s = {"0.1", 3, P4J_ENC_UTF8}}, 1);
    assert_int_equal(f.kind, P4J_DOUBLE);
    assert_true(f.u.d == 0.1); /* Float.toString prints 0.1 */
    gw->ops->release(gw, &fl);
    p4j_ref dbl = cls_ref("java.lang.Double");
    p4j_value back;
    call_ok(&back, gw, &dbl, P4J_CALL_STATIC, "valueOf", &dd, 1);
    assert_true(back.u.d == 0.1);
    gw->ops->release(gw, &dbl);

    p4j_ref sys = cls_ref("java.lang.System");
    p4j_value nul;
    call_ok(&nul, gw, &sys, P4J_CALL_STATIC, "getProperty",
                            &(p4j_value){.kind = P4J_STRING, .u.s = {"no.such.prop", 12, P4J_ENC_UTF8}}, 1);
    assert_int_equal(nul.kind, P4J_NULL);
    gw->ops->release(gw, &sys);

    p4j_value cs;
    call_ok(&cs, gw, &(p4j_ref){.handle = "java.lang.Character", .cls = (void *)p4j_wire_class_tag},
                           P4J_CALL_STATIC, "valueOf", &(p4j_value){.kind = P4J_STRING, .u.s = {"x", 1, P4J_ENC_UTF8}}, 1);
    assert_int_equal(cs.kind, P4J_STRING);
    p4j_value_clear(&cs);

}

static void test_java_exception(void **state)
{
    (void)state;
    NEED_SERVER();
    p4j_ref integer = cls_ref("java.lang.Integer");
    p4j_value a = str_arg("abc");
    p4j_value out;
    p4j_error err = {0};
    assert_int_equal(gw->ops->call(gw, &integer, P4J_CALL_STATIC, "parseInt", 8, &a, 1, &out,
                                   &err),
                     P4J_ERROR);
    assert_int_equal(out.kind, P4J_NULL);
    assert_int_equal(err.kind, P4J_ERR_JAVA);
    assert_string_equal(err.java_class, "java.lang.NumberFormatException");
    assert_string_equal(err.message, "For input string: \"abc\"");
    assert_non_null(err.throwable.handle);

    p4j_value trace;
    p4j_error e2 = {0};
    assert_int_equal(gw->ops->stack_trace(gw, &err.throwable, &trace, &e2), P4J_OK);
    assert_int_equal(trace.kind, P4J_STRING);
    const char *t = trace.u.s.data;
    assert_true(trace.u.s.len > 60);
    assert_memory_equal(t, "java.lang.NumberFormatException: For input string", 49);
    assert_non_null(memmem(t, trace.u.s.len, "\tat java.base/java.lang.Integer.parseInt", 40));
    p4j_value_clear(&trace);

    /* the throwable is a live object: call it */
    p4j_value msg;
    call_ok(&msg, gw, &err.throwable, 0, "getMessage", NULL, 0);
    assert_int_equal(msg.kind, P4J_STRING);
    p4j_value_clear(&msg);
    p4j_error_clear(gw, &err); /* releases the throwable */
    assert_null(err.throwable.handle);

    /* an exception without a message; and one thrown by a constructor */
    p4j_value obj;
    new_ok(&obj, gw, "java.util.ArrayList", NULL, 0);
    p4j_value idx = int_arg(-1);
    assert_int_equal(gw->ops->call(gw, &obj.ref, 0, "get", 3, &idx, 1, &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_JAVA);
    assert_string_equal(err.java_class, "java.lang.IndexOutOfBoundsException");
    assert_string_equal(err.message, "Index -1 out of bounds for length 0");
    p4j_error_clear(gw, &err);
    release_value(gw, &obj);

    p4j_value it;
    new_ok(&it, gw, "java.util.ArrayList", NULL, 0);
    p4j_value iter;
    call_ok(&iter, gw, &it.ref, 0, "iterator", NULL, 0);
    assert_int_equal(gw->ops->call(gw, &iter.ref, 0, "next", 4, NULL, 0, &out, &err), P4J_ERROR);
    assert_string_equal(err.java_class, "java.util.NoSuchElementException");
    assert_string_equal(err.message, "");
    p4j_error_clear(gw, &err);
    release_value(gw, &iter);
    release_value(gw, &it);

    p4j_ref fis = cls_ref("java.io.FileInputStream");
    p4j_value path = str_arg("/no/such/file");
    assert_int_equal(gw->ops->construct(gw, &fis, &path, 1, &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_JAVA);
    assert_string_equal(err.java_class, "java.io.FileNotFoundException");
    p4j_error_clear(gw, &err);
    gw->ops->release(gw, &fis);
    gw->ops->release(gw, &integer);
}

static void test_bridge_errors(void **state)
{
    (void)state;
    NEED_SERVER();
    p4j_value sb;
    new_ok(&sb, gw, "java.lang.StringBuilder", NULL, 0);
    p4j_value out;
    p4j_error err = {0};
    assert_int_equal(gw->ops->call(gw, &sb.ref, 0, "noSuchMethod", 12, NULL, 0, &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "noSuchMethod"));
    assert_non_null(strstr(err.message, "does not exist"));
    p4j_error_clear(gw, &err);

    p4j_ref nope = cls_ref("no.such.Clazz");
    assert_int_equal(gw->ops->construct(gw, &nope, NULL, 0, &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "ClassNotFoundException"));
    p4j_error_clear(gw, &err);
    gw->ops->release(gw, &nope);

    /* a method name with a line break would inject commands: refused locally */
    assert_int_equal(gw->ops->call(gw, &sb.ref, 0, "x\ne\nc", 5, NULL, 0, &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    p4j_error_clear(gw, &err);

    /* a fatal answer ("!z": setting an int field to a string) closes only that
     * connection; the next call works */
    p4j_value three[2] = {int_arg(3), int_arg(4)};
    p4j_value pt;
    new_ok(&pt, gw, "java.awt.Point", three, 2);
    p4j_value s = str_arg("x");
    assert_int_equal(gw->ops->field_set(gw, &pt.ref, 0, "x", &s, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "IllegalArgumentException"));
    p4j_error_clear(gw, &err);
    p4j_value x;
    call_ok(&x, gw, &pt.ref, 0, "getX", NULL, 0);
    assert_true(x.u.d == 3.0);
    release_value(gw, &pt);
    release_value(gw, &sb);
}

static void test_fields_and_reflection(void **state)
{
    (void)state;
    NEED_SERVER();
    p4j_value args[2] = {int_arg(3), int_arg(4)};
    p4j_value pt;
    new_ok(&pt, gw, "java.awt.Point", args, 2);
    p4j_value out;
    p4j_error err = {0};
    assert_int_equal(gw->ops->field_get(gw, &pt.ref, 0, "y", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_INT);
    assert_int_equal(out.u.i, 4);
    p4j_value seven = int_arg(7);
    assert_int_equal(gw->ops->field_set(gw, &pt.ref, 0, "y", &seven, &err), P4J_OK);
    assert_int_equal(gw->ops->field_get(gw, &pt.ref, 0, "y", &out, &err), P4J_OK);
    assert_int_equal(out.u.i, 7);
    assert_int_equal(gw->ops->field_get(gw, &pt.ref, 0, "nosuch", &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "no field nosuch"));
    p4j_error_clear(gw, &err);
    assert_int_equal(gw->ops->field_set(gw, &pt.ref, 0, "nosuch", &seven, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    p4j_error_clear(gw, &err);

    /* dir: sorted, newline-separated */
    assert_int_equal(gw->ops->dir(gw, &pt.ref, P4J_DIR_FIELDS, &out, &err), P4J_OK);
    assert_int_equal(out.u.s.len, 3);
    assert_memory_equal(out.u.s.data, "x\ny", 3);
    p4j_value_clear(&out);
    assert_int_equal(gw->ops->dir(gw, &pt.ref, P4J_DIR_METHODS, &out, &err), P4J_OK);
    assert_true(out.u.s.len > 20);
    assert_memory_equal(out.u.s.data, "clone\ndistance\n", 15);
    p4j_value_clear(&out);
    release_value(gw, &pt);

    /* static members */
    p4j_ref integer = cls_ref("java.lang.Integer");
    assert_int_equal(gw->ops->static_member(gw, &integer, "MAX_VALUE", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_INT);
    assert_int_equal(out.u.i, 2147483647);
    assert_int_equal(gw->ops->static_member(gw, &integer, "parseInt", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_METHOD);
    assert_int_equal(gw->ops->static_member(gw, &integer, "nope", &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_string_equal(err.message, "java.lang.Integer.nope does not exist in the JVM");
    p4j_error_clear(gw, &err);
    assert_int_equal(gw->ops->field_get(gw, &integer, P4J_CALL_STATIC, "MIN_VALUE", &out, &err),
                     P4J_OK);
    assert_int_equal(out.u.i, INT32_MIN);
    assert_int_equal(gw->ops->field_get(gw, &integer, P4J_CALL_STATIC, "parseInt", &out, &err),
                     P4J_ERROR);
    p4j_error_clear(gw, &err);
    assert_int_equal(gw->ops->dir(gw, &integer, P4J_DIR_STATIC, &out, &err), P4J_OK);
    assert_non_null(memmem(out.u.s.data, out.u.s.len, "\nMAX_VALUE\n", 11));
    p4j_value_clear(&out);
    gw->ops->release(gw, &integer);

    p4j_ref map = cls_ref("java.util.Map");
    assert_int_equal(gw->ops->static_member(gw, &map, "Entry", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_CLASS);
    assert_string_equal(out.ref.handle, "java.util.Map$Entry");
    assert_int_equal(out.u.s.len, 19);
    release_value(gw, &out);
    gw->ops->release(gw, &map);

    /* a static field written through reflection (System.out is final: use a
     * writable public static field of the JDK instead: none is reliably writable,
     * so check the error paths) */
    p4j_ref pointcls = cls_ref("java.awt.Point");
    assert_int_equal(gw->ops->field_set(gw, &pointcls, P4J_CALL_STATIC, "nope", &seven, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "no field nope"));
    p4j_error_clear(gw, &err);
    p4j_ref integer2 = cls_ref("java.lang.Integer");
    assert_int_equal(gw->ops->field_set(gw, &integer2, P4J_CALL_STATIC, "MAX_VALUE", &seven,
                                        &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_JAVA);
    assert_string_equal(err.java_class, "java.lang.IllegalAccessException");
    p4j_error_clear(gw, &err);
    gw->ops->release(gw, &integer2);
    gw->ops->release(gw, &pointcls);

    /* resolve in the default view and in a new view with imports */
    assert_int_equal(gw->ops->resolve(gw, NULL, "java.util.ArrayList", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_CLASS);
    assert_string_equal(out.ref.handle, "java.util.ArrayList");
    p4j_value list;
    new_ok(&list, gw, out.ref.handle, NULL, 0);
    assert_int_equal(list.kind, P4J_LIST);
    release_value(gw, &list);
    release_value(gw, &out);
    assert_int_equal(gw->ops->resolve(gw, NULL, "String", &out, &err), P4J_OK);
    assert_string_equal(out.ref.handle, "java.lang.String");
    release_value(gw, &out);
    assert_int_equal(gw->ops->resolve(gw, NULL, "java.util", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_PACKAGE);

    p4j_value view;
    assert_int_equal(gw->ops->view_new(gw, "my view\n", &view, &err), P4J_OK);
    assert_int_equal(view.kind, P4J_REF);
    assert_int_equal(gw->ops->resolve(gw, &view.ref, "LinkedList", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_PACKAGE);
    assert_int_equal(gw->ops->view_import(gw, &view.ref, "java.util.*", false, &err), P4J_OK);
    assert_int_equal(gw->ops->view_import(gw, &view.ref, "java.io.File", false, &err), P4J_OK);
    assert_int_equal(gw->ops->resolve(gw, &view.ref, "LinkedList", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_CLASS);
    assert_string_equal(out.ref.handle, "java.util.LinkedList");
    release_value(gw, &out);
    assert_int_equal(gw->ops->dir(gw, &view.ref, P4J_DIR_VIEW, &out, &err), P4J_OK);
    assert_int_equal(out.u.s.len, 4);
    assert_memory_equal(out.u.s.data, "File", 4);
    p4j_value_clear(&out);
    assert_int_equal(gw->ops->view_import(gw, &view.ref, "java.util.*", true, &err), P4J_OK);
    assert_int_equal(gw->ops->resolve(gw, &view.ref, "LinkedList", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_PACKAGE);
    release_value(gw, &view);

    /* help pages */
    p4j_ref runnable = cls_ref("java.lang.Runnable");
    assert_int_equal(gw->ops->help(gw, &runnable, true, NULL, true, &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_STRING);
    assert_non_null(memmem(out.u.s.data, out.u.s.len, "run() : void", 12));
    p4j_value_clear(&out);
    gw->ops->release(gw, &runnable);
    p4j_value sb;
    new_ok(&sb, gw, "java.lang.StringBuilder", NULL, 0);
    assert_int_equal(gw->ops->help(gw, &sb.ref, false, "rev*", false, &out, &err), P4J_OK);
    assert_non_null(memmem(out.u.s.data, out.u.s.len, "reverse()", 9));
    p4j_value_clear(&out);
    release_value(gw, &sb);

    /* the gateway server object is always there */
    p4j_ref gs;
    assert_int_equal(p4j_socket_ref_new(P4J_SOCKET_GATEWAY_SERVER_ID, false, &gs, &err), P4J_OK);
    p4j_value port;
    call_ok(&port, gw, &gs, 0, "getListeningPort", NULL, 0);
    assert_int_equal(port.u.i, main_server.port);
    gw->ops->release(gw, &gs);
}

static void test_release_sends_delete(void **state)
{
    (void)state;
    NEED_SERVER();
    p4j_value sb;
    new_ok(&sb, gw, "java.lang.StringBuilder", NULL, 0);
    char id[64];
    snprintf(id, sizeof id, "%s", (const char *)sb.ref.handle);

    /* a dup keeps the object alive until both copies are gone */
    p4j_ref copy;
    p4j_error err = {0};
    assert_int_equal(gw->ops->dup(gw, &sb.ref, &copy, &err), P4J_OK);
    assert_string_equal(copy.handle, id);
    gw->ops->release(gw, &sb.ref);
    assert_null(sb.ref.handle);
    p4j_value s;
    call_ok(&s, gw, &copy, 0, "toString", NULL, 0);
    p4j_value_clear(&s);
    gw->ops->release(gw, &copy);

    /* the id is gone on the server now */
    p4j_ref stale;
    assert_int_equal(p4j_socket_ref_new(id, false, &stale, &err), P4J_OK);
    p4j_value out;
    assert_int_equal(gw->ops->call(gw, &stale, 0, "toString", 8, NULL, 0, &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "does not exist"));
    p4j_error_clear(gw, &err);
    free(stale.handle);

    /* releasing twice or a NULL ref is harmless */
    gw->ops->release(gw, &copy);
    p4j_ref empty = {0};
    gw->ops->release(gw, &empty);
}

static void test_server_not_running(void **state)
{
    (void)state;
    NEED_SERVER();
    /* a port nobody listens on: bind, read it, close */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    int port = ntohs(sa.sin_port);
    close(fd);

    p4j_client *c;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_client_new("127.0.0.1", port, NULL, 0, &c, &err), P4J_OK);
    p4j_ref sys = cls_ref("java.lang.System");
    p4j_value out;
    double t0 = now_s();
    assert_int_equal(c->ops->call(c, &sys, P4J_CALL_STATIC, "currentTimeMillis", 17, NULL, 0,
                                  &out, &err),
                     P4J_ERROR);
    double dt = now_s() - t0;
    assert_true(dt < 10.0); /* refused at once: no retry loop (a bound for "does not hang") */
    assert_int_equal(err.kind, P4J_ERR_NETWORK);
    char where[64];
    snprintf(where, sizeof where, "127.0.0.1:%d", port);
    assert_non_null(strstr(err.message, where));
    p4j_error_clear(c, &err);
    c->ops->release(c, &sys);
    c->ops->shutdown(c);
    c->ops->destroy(c);

    assert_int_equal(p4j_socket_client_new("no-such-host.invalid", 1, NULL, 0, &c, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_NETWORK);
    p4j_error_clear(NULL, &err);
}

typedef struct sleeper {
    p4j_client *c;
    p4j_status st;
    p4j_error err;
} sleeper;

static void *sleep_in_java(void *arg)
{
    sleeper *s = arg;
    p4j_ref thread = cls_ref("java.lang.Thread");
    p4j_value ms;
    memset(&ms, 0, sizeof ms);
    ms.kind = P4J_LONG;
    ms.u.l = 5000;
    p4j_value out;
    s->st = s->c->ops->call(s->c, &thread, P4J_CALL_STATIC, "sleep", 5, &ms, 1, &out, &s->err);
    free(thread.handle);
    return NULL;
}

static void test_server_killed(void **state)
{
    (void)state;
    NEED_SERVER();
    server srv;
    assert_int_equal(server_start(&srv, false), 0);
    p4j_client *c;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_client_new("127.0.0.1", srv.port, NULL, 0, &c, &err), P4J_OK);
    p4j_ref sys = cls_ref("java.lang.System");
    p4j_value t;
    call_ok(&t, c, &sys, P4J_CALL_STATIC, "currentTimeMillis", NULL, 0);
    (void)t;

    /* killed while a call is in flight: that call fails, on the receive (a reset: not
     * resent, as py4j) or, when the close came first, on its resend (py4j resends once
     * when the peer closed before answering), which cannot connect or, while the dying
     * JVM's listening socket still completes connections, gets no answer */
    sleeper sl = {.c = c};
    pthread_t th;
    pthread_create(&th, NULL, sleep_in_java, &sl);
    usleep(500000);
    double t0 = now_s();
    server_kill(&srv);
    pthread_join(th, NULL);
    assert_true(now_s() - t0 < 2.0);
    assert_int_equal(sl.st, P4J_ERROR);
    assert_int_equal(sl.err.kind, P4J_ERR_NETWORK);
    assert_non_null(sl.err.message);
    p4j_error_clear(NULL, &sl.err);

    /* later calls fail too (pooled connection is dead, reconnect refused) */
    p4j_value out;
    assert_int_equal(c->ops->call(c, &sys, P4J_CALL_STATIC, "currentTimeMillis", 17, NULL, 0,
                                  &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_NETWORK);
    p4j_error_clear(NULL, &err);
    size_t open = 9, idle = 9;
    p4j_socket_client_connections(c, &open, &idle);
    assert_int_equal(open, 0);
    assert_int_equal(idle, 0);

    /* release after the server died must not fail visibly */
    p4j_ref ghost;
    p4j_socket_ref_new("o1", false, &ghost, &err);
    c->ops->release(c, &ghost);
    c->ops->release(c, &sys);
    c->ops->shutdown(c);
    c->ops->destroy(c);
}

static void test_auth(void **state)
{
    (void)state;
    NEED_SERVER();
    server srv;
    assert_int_equal(server_start(&srv, true), 0);
    assert_true(strlen(srv.token) > 10);
    p4j_ref sys = cls_ref("java.lang.System");
    p4j_value out;
    p4j_error err = {0};
    p4j_client *c;

    /* wrong token */
    assert_int_equal(p4j_socket_client_new("127.0.0.1", srv.port, "wrong", 0, &c, &err), P4J_OK);
    assert_int_equal(c->ops->call(c, &sys, P4J_CALL_STATIC, "currentTimeMillis", 17, NULL, 0,
                                  &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_AUTH);
    assert_non_null(strstr(err.message, "bad auth token"));
    p4j_error_clear(NULL, &err);
    c->ops->destroy(c);

    /* no token */
    assert_int_equal(p4j_socket_client_new("127.0.0.1", srv.port, NULL, 0, &c, &err), P4J_OK);
    assert_int_equal(c->ops->call(c, &sys, P4J_CALL_STATIC, "currentTimeMillis", 17, NULL, 0,
                                  &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_AUTH);
    p4j_error_clear(NULL, &err);
    c->ops->destroy(c);

    /* right token, on every new connection */
    assert_int_equal(p4j_socket_client_new("127.0.0.1", srv.port, srv.token, 0, &c, &err),
                     P4J_OK);
    p4j_value t;
    call_ok(&t, c, &sys, P4J_CALL_STATIC, "currentTimeMillis", NULL, 0);
    assert_int_equal(t.kind, P4J_LONG);
    c->ops->shutdown(c);
    c->ops->destroy(c);
    server_kill(&srv);
    free(sys.handle);
}

static void test_read_timeout(void **state)
{
    (void)state;
    NEED_SERVER();
    p4j_client *c;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_client_new("127.0.0.1", main_server.port, NULL, 0.3, &c, &err),
                     P4J_OK);
    sleeper sl = {.c = c};
    double t0 = now_s();
    sleep_in_java(&sl); /* sleeps 5 s in Java */
    double dt = now_s() - t0;
    assert_int_equal(sl.st, P4J_ERROR);
    assert_int_equal(sl.err.kind, P4J_ERR_NETWORK);
    assert_non_null(strstr(sl.err.message, "timed out"));
    assert_true(sl.err.timed_out); /* a time-out known by its flag, not by its text */
    assert_true(dt < 4.5); /* ended by the time-out, before Java's 5 s sleep ended */
    p4j_error_clear(NULL, &sl.err);
    /* the timed-out connection was dropped; a new one serves the next call */
    size_t open;
    p4j_socket_client_connections(c, &open, NULL);
    assert_int_equal(open, 0);
    p4j_ref sys = cls_ref("java.lang.System");
    p4j_value t;
    call_ok(&t, c, &sys, P4J_CALL_STATIC, "currentTimeMillis", NULL, 0);
    assert_int_equal(t.kind, P4J_LONG);
    free(sys.handle);
    c->ops->shutdown(c);
    c->ops->destroy(c);
}

/* The idle connections as py4j's GatewayClient.deque sees them: listed oldest first, a
 * taken one used by no call until put back, a duplicate descriptor of its socket, closed
 * on request. */
static void test_idle_connections(void **state)
{
    (void)state;
    NEED_SERVER();
    p4j_client *c;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_client_new("127.0.0.1", main_server.port, NULL, 0, &c, &err),
                     P4J_OK);
    uint64_t ids[4];
    assert_int_equal(c->ops->idle_list(c, ids, 4), 0);
    p4j_ref sys = cls_ref("java.lang.System");
    p4j_value t;
    call_ok(&t, c, &sys, P4J_CALL_STATIC, "currentTimeMillis", NULL, 0);
    assert_int_equal(c->ops->idle_list(c, ids, 4), 1);
    uint64_t first = ids[0];
    assert_int_equal(c->ops->conn_ctl(c, first, P4J_CONN_STATE), 1);
    assert_int_equal(c->ops->conn_ctl(c, first, P4J_CONN_PUT), -1); /* not taken */
    assert_int_equal(c->ops->conn_ctl(c, first, P4J_CONN_TAKE), 0);
    assert_int_equal(c->ops->conn_ctl(c, first, P4J_CONN_TAKE), -1);
    assert_int_equal(c->ops->conn_ctl(c, first, P4J_CONN_STATE), 2);
    assert_int_equal(c->ops->idle_list(c, ids, 4), 0);
    call_ok(&t, c, &sys, P4J_CALL_STATIC, "currentTimeMillis", NULL, 0); /* a new one */
    assert_int_equal(c->ops->idle_list(c, ids, 4), 1);
    uint64_t second = ids[0];
    assert_true(second != first);
    assert_int_equal(c->ops->conn_ctl(c, first, P4J_CONN_PUT), 0); /* used next */
    assert_int_equal(c->ops->idle_list(c, ids, 1), 2); /* too small: the count only */
    assert_int_equal(c->ops->idle_list(c, ids, 4), 2);
    assert_true(ids[0] == second && ids[1] == first);
    size_t open, idle;
    p4j_socket_client_connections(c, &open, &idle);
    assert_true(open == 2 && idle == 2);
    int fd = c->ops->conn_ctl(c, first, P4J_CONN_DUP_FD);
    assert_true(fd >= 0);
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    assert_int_equal(getpeername(fd, (struct sockaddr *)&peer, &plen), 0);
    assert_int_equal(ntohs(peer.sin_port), main_server.port);
    close(fd);
    assert_int_equal(c->ops->conn_ctl(c, second, P4J_CONN_CLOSE), 0);
    assert_int_equal(c->ops->conn_ctl(c, second, P4J_CONN_STATE), 0);
    assert_int_equal(c->ops->conn_ctl(c, second, P4J_CONN_CLOSE), -1);
    assert_int_equal(c->ops->idle_list(c, ids, 4), 1);
    assert_true(ids[0] == first);
    p4j_socket_client_connections(c, &open, &idle);
    assert_true(open == 1 && idle == 1);
    call_ok(&t, c, &sys, P4J_CALL_STATIC, "currentTimeMillis", NULL, 0); /* on `first` */
    assert_int_equal(c->ops->idle_list(c, ids, 4), 1);
    assert_true(ids[0] == first);
    free(sys.handle);
    c->ops->shutdown(c);
    c->ops->destroy(c);
}

typedef struct worker {
    int id;
    int failures;
} worker;

static void *hammer(void *arg)
{
    worker *w = arg;
    p4j_ref math = cls_ref("java.lang.Math");
    for (int i = 0; i < 200; i++) {
        p4j_value a[2] = {int_arg(w->id * 1000 + i), int_arg(i)};
        p4j_value out;
        p4j_error err = {0};
        if (gw->ops->call(gw, &math, P4J_CALL_STATIC, "max", 3, a, 2, &out, &err) != P4J_OK ||
            out.kind != P4J_INT || out.u.i != w->id * 1000 + i) {
            w->failures++;
            p4j_error_clear(gw, &err);
        }
    }
    free(math.handle);
    return NULL;
}

static void test_threads_share_pool(void **state)
{
    (void)state;
    NEED_SERVER();
    pthread_t th[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.id = i + 1};
        pthread_create(&th[i], NULL, hammer, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    size_t open, idle;
    p4j_socket_client_connections(gw, &open, &idle);
    assert_true(open >= 1 && open <= 8); /* about one per concurrent thread */
    assert_int_equal(open, idle);
}

static void test_shutdown(void **state)
{
    (void)state;
    NEED_SERVER();
    server srv;
    assert_int_equal(server_start(&srv, false), 0);
    p4j_client *c;
    p4j_error err = {0};
    assert_int_equal(p4j_socket_client_new("localhost", srv.port, NULL, 0, &c, &err), P4J_OK);
    p4j_value sb;
    new_ok(&sb, c, "java.lang.StringBuilder", NULL, 0);

    c->ops->shutdown(c);
    p4j_ref sys = cls_ref("java.lang.System");
    p4j_value out;
    assert_int_equal(c->ops->call(c, &sys, P4J_CALL_STATIC, "currentTimeMillis", 17, NULL, 0,
                                  &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_CLOSED);
    p4j_error_clear(NULL, &err);
    c->ops->release(c, &sb.ref); /* no-op after shutdown */
    assert_null(sb.ref.handle);
    /* the server is still up: shutdown does not send "s" */
    assert_false(server_exits_within(&srv, 200));
    c->ops->destroy(c);

    /* shutdown_server stops it */
    assert_int_equal(p4j_socket_client_new("127.0.0.1", srv.port, NULL, 0, &c, &err), P4J_OK);
    p4j_value t;
    call_ok(&t, c, &sys, P4J_CALL_STATIC, "currentTimeMillis", NULL, 0);
    (void)t;
    assert_int_equal(p4j_socket_client_shutdown_server(c, &err), P4J_OK);
    assert_true(port_closed_within(srv.port, 5000));
    assert_int_equal(c->ops->call(c, &sys, P4J_CALL_STATIC, "currentTimeMillis", 17, NULL, 0,
                                  &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_CLOSED);
    p4j_error_clear(NULL, &err);
    c->ops->destroy(c);
    server_kill(&srv);
    free(sys.handle);
}

int main(void)
{
    /* SIGPIPE stays at its default: the client must never raise it (MSG_NOSIGNAL). */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_call),
        cmocka_unit_test(test_construct_and_call),
        cmocka_unit_test(test_string_round_trip),
        cmocka_unit_test(test_bytes_both_ways),
        cmocka_unit_test(test_result_kinds),
        cmocka_unit_test(test_java_exception),
        cmocka_unit_test(test_bridge_errors),
        cmocka_unit_test(test_fields_and_reflection),
        cmocka_unit_test(test_release_sends_delete),
        cmocka_unit_test(test_server_not_running),
        cmocka_unit_test(test_server_killed),
        cmocka_unit_test(test_auth),
        cmocka_unit_test(test_read_timeout),
        cmocka_unit_test(test_idle_connections),
        cmocka_unit_test(test_threads_share_pool),
        cmocka_unit_test(test_shutdown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
