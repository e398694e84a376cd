/* bridge/socket/socket_client.c - p4j_client over TCP to a py4j GatewayServer or
 * ClientServer (see socket_client.h): py4j's command set on top of either connection
 * regime (socket_pool.c, socket_pinned.c; the shared layer in socket_conn.c). Commands
 * are built with the wire codec (wire.h) into the connection's buffer, sent in one
 * write, and answered by one line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "socket_internal.h"

#include <netdb.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static const p4j_client_ops socket_ops, pinned_ops;

/* The connection for one operation: the calling thread's own in pinned-thread mode,
 * else one from the pool. */
static p4j_status acquire(socket_client *sc, conn **out, p4j_error *err)
{
    return sc->pinned ? sock_acquire_pinned(sc, out, err) : sock_acquire_pooled(sc, out, err);
}

/* Ends an operation's use of `cn` (see sock_give_back_pinned, sock_give_back_pooled). */
static void give_back(socket_client *sc, conn *cn)
{
    if (cn->pinned)
        sock_give_back_pinned(sc, cn);
    else
        sock_give_back_pooled(sc, cn);
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

/* ---- one command ---------------------------------------------------------------- */

static p4j_wbuf *begin(conn *cn, const char *cmd)
{
    p4j_wbuf_reset(cn->out);
    p4j_wire_cpart(cn->out, cmd);
    return cn->out;
}

/* Reads the answer line to the command just sent (*n: its length). In pinned-thread
 * mode the peer may first send commands of its own (callbacks): each runs here, on
 * the waiting thread, before the wait goes on; *ran (may be NULL) is set when one did. */
static p4j_status await_answer(socket_client *sc, conn *cn, size_t *n, bool *ran,
                               p4j_error *err)
{
    for (;;) {
        if (sock_read_line(sc, cn, sc->timeout, n, err) != P4J_OK)
            return P4J_ERROR;
        if (!sc->pinned || *n == 0 || cn->rbuf[0] == '!')
            return P4J_OK;
        if (ran)
            *ran = true;
        if (sock_run_peer_command(sc, cn, *n, sc->timeout, err) != P4J_OK)
            return P4J_ERROR;
    }
}

/* Sends the command in cn->out and decodes its answer into `out`. A Java exception
 * leaves its throwable ref in `out` (P4J_ANSWER_JAVA_ERROR). Transport failures
 * and unusable answers return P4J_ANSWER_FATAL/MALFORMED with the connection
 * marked broken. */
/* py4j's retry (GatewayClient.send_command, JavaClient._should_retry): a command whose
 * send failed, or whose connection the peer closed before any answer, is sent once more
 * on a new connection (never one whose wait a signal interrupted), when Python opened the connection (not one Java opened to
 * Python) and, pinned, the command is not nested inside a callback on it and no
 * callback of the peer ran while it waited (`ran`: the command had effects). True when
 * cn now holds a fresh connection (err cleared); false leaves err as it was, except that
 * a failure to open the new connection replaces it (py4j raises that one). */
static bool reopen_for_retry(socket_client *sc, conn *cn, bool sent, bool ran, p4j_error *err)
{
    if (sc->base.closed || err->kind == P4J_ERR_INTERRUPTED || cn->served || ran ||
        (cn->pinned && cn->depth > 1) ||
        (sent && !(cn->eof && cn->rlen == 0)))
        return false;
    p4j_error e = {0};
    if (sock_conn_reopen(sc, cn, &e) != P4J_OK) {
        if (e.kind == P4J_ERR_CLOSED) {
            p4j_error_clear(NULL, &e);
            return false;
        }
        p4j_error_clear(NULL, err);
        *err = e;
        return false;
    }
    p4j_error_clear(NULL, err);
    return true;
}

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
            sock_closed_error(err);
        else
            p4j_error_set(err, P4J_ERR_NETWORK, "the connection to the py4j server at %s "
                          "failed earlier", sc->label);
        return P4J_ANSWER_FATAL;
    }
    bool ran = false;
    bool sent = sock_send_all(sc, cn, b->data, b->len, err) == P4J_OK;
    if (!sent || await_answer(sc, cn, &n, &ran, err) != P4J_OK) {
        if (!reopen_for_retry(sc, cn, sent, ran, err) ||
            sock_send_all(sc, cn, b->data, b->len, err) != P4J_OK ||
            await_answer(sc, cn, &n, NULL, err) != P4J_OK)
            return P4J_ANSWER_FATAL;
    }
    /* Adopt the buffer for big payloads only when the line is all it holds. */
    void *block = cn->rbuf;
    bool may_adopt = cn->rlen == n + 1;
    /* a TLS record (alert or handshake, TLS 1.0-1.3) where py4j's text should be */
    const unsigned char *head = (const unsigned char *)cn->rbuf;
    bool tls_record = !cn->ssl && n >= 3 && (head[0] == 0x15 || head[0] == 0x16) &&
                      head[1] == 0x03 && head[2] <= 0x04;
    p4j_answer a = p4j_wire_decode(cn->rbuf, n, may_adopt ? &block : NULL, out, err);
    sock_consume_line(cn, n, may_adopt && block == NULL);
    if (a == P4J_ANSWER_MALFORMED && tls_record) {
        p4j_error_clear(NULL, err);
        p4j_error_set(err, P4J_ERR_NETWORK, "the py4j server at %s speaks TLS and this "
                      "gateway does not: give it the server's ssl_context "
                      "(GatewayParameters(ssl_context=...), JavaParameters for a "
                      "ClientServer)", sc->label);
    }
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
        /* callers may hold their lock (the GIL, from a destructor): never wait with it,
         * the peer may need it to answer */
        void *saved = c->unlock ? c->unlock() : NULL;
        conn *cn = sc->pinned ? sock_thread_conn(sc) : NULL;
        p4j_error e = {0};
        /* pinned-thread mode: the thread's own connection when it has a usable one,
         * else a pooled one (a thread that never called Java opens none for this) */
        if (cn && (cn->broken || sock_push_level(cn) < 0))
            cn = NULL;
        if (cn || sock_acquire_pooled(sc, &cn, &e) == P4J_OK) {
            quiet_delete(sc, cn, id);
            give_back(sc, cn);
        }
        p4j_error_clear(NULL, &e);
        if (c->relock)
            c->relock(saved);
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

static void op_shutdown(p4j_client *c)
{
    socket_client *sc = SC(c);
    pthread_mutex_lock(&sc->mu);
    sc->base.closed = 1;
    conn *idle = sock_take_idle_locked(sc);
    /* wake threads blocked on connections in use; they close them on give_back */
    for (conn *cn = sc->all; cn; cn = cn->next)
        shutdown(cn->fd, SHUT_RDWR);
    pthread_mutex_unlock(&sc->mu);
    sock_free_chain(idle);
}

static void op_close_idle(p4j_client *c)
{
    socket_client *sc = SC(c);
    sock_pool_close_idle(sc);
    if (sc->pinned) {
        conn *cn = sock_thread_conn(sc); /* only its own thread uses or frees it */
        if (cn && cn->depth == 0)
            sock_unpin_free(sc, cn);
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
        st = sc->base.closed ? sock_closed_error(err)
                             : p4j_error_set(err, P4J_ERR_NETWORK, "the connection to the "
                                             "py4j server at %s failed earlier", sc->label);
    else
        st = sock_send_all(sc, cn, text, len, err);
    if (st == P4J_OK)
        *stage = 2;
    if (st == P4J_OK && await_answer(sc, cn, &n, NULL, err) != P4J_OK) {
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
                sock_consume_line(cn, n, false);
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
    sock_pins_forget_client(sc);
    while (sc->all) {
        conn *cn = sc->all;
        sock_unlink_locked(sc, cn);
        sock_conn_free(cn);
    }
    sock_tls_clear(sc);
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
    .close_idle = op_close_idle, \
    .idle_list = sock_idle_list, \
    .conn_ctl = sock_conn_ctl,

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
    .set_command_handler = sock_set_command_handler,
    .serve = sock_serve,
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
    if (sock_pins_init(err) != P4J_OK)
        return P4J_ERROR;
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
        st = sock_send_all(sc, cn, "s\n", 2, err);
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


void p4j_socket_client_set_interrupt(p4j_client *c, p4j_socket_interrupt_fn fn, void *ctx)
{
    SC(c)->intr_fn = fn;
    SC(c)->intr_ctx = ctx;
}

void p4j_socket_client_counts(p4j_client *c, p4j_socket_counts *out)
{
    socket_client *sc = SC(c);
    pthread_mutex_lock(&sc->mu);
    *out = sc->counts;
    pthread_mutex_unlock(&sc->mu);
}
