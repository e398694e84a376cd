/* python-binding/src/socket/socket_callbacks.c - the C half of callbacks in socket mode.
 *
 * py4jni/socket_mode/callbacks.py runs py4j's callback server (sockets, threads, the proxy
 * pool); this file gives it the codec, so that callback arguments decode exactly as
 * call results do and Python's answers encode exactly as call arguments do:
 *  - p4j_socket_proxy_value: a Python proxy passed as an argument becomes py4j's
 *    `f<id>;<iface>;...` (its text comes from the client's proxy_hook);
 *  - wire_decode_args(client, parts): the argument lines of a Java `c` command ->
 *    Python objects (the transport's decode_arg, then p4j_value_to_py);
 *  - wire_answer(client, value, error=False, keep=None): `!y<part>\n` or `!x<part>\n`
 *    (p4j_value_from_py, then the transport's encode_answer);
 *  - p4jpy_run_command: pinned-thread mode's command handler, which hands a command
 *    Java sent on a thread's connection to the client's command_hook;
 *  - socket_counts(client): the client's connection counts (socket_transport.h);
 *  - socket_set_tls(client, context, server_hostname, serve_context): TLS for a socket
 *    client from Python ssl.SSLContexts (see tls_ctx_of for how).
 * Every function but p4jpy_run_command needs the GIL; none keeps state.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <string.h>

#include "binding.h"
#include "socket_transport.h"

static PyObject *str_Java; /* interned "Java" */

int p4j_socket_proxy_value(ClientObject *cl, PyObject *o, p4j_value *v, p4j_argpack *pack)
{
    if (cl->proxy_hook == NULL || cl->proxy_hook == Py_None ||
        !p4jpy_has_cap(cl, P4J_CAP_TEXT_PROXIES) || !_PyType_Lookup(Py_TYPE(o), str_Java))
        return 0;
#ifdef Py_GIL_DISABLED /* held for the call: another thread may set a new hook */
    PyObject *hook = p4jpy_client_slot_new(cl, offsetof(ClientObject, proxy_hook));
    PyObject *text = PyObject_CallOneArg(hook, o);
    Py_DECREF(hook);
#else
    PyObject *text = PyObject_CallOneArg(cl->proxy_hook, o);
#endif
    if (!text)
        return -1;
    if (text == Py_None) { /* not a proxy after all: other conversions may take it */
        Py_DECREF(text);
        return 0;
    }
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "py4jni: proxy_hook returned %.100s, not str",
                     Py_TYPE(text)->tp_name);
        Py_DECREF(text);
        return -1;
    }
    const char *utf8 = PyUnicode_AsUTF8(text);
    pack->taken = 1; /* released by p4j_args_release */
    if (!utf8 || ((!pack->temps && !(pack->temps = PyList_New(0))) ||
                  PyList_Append(pack->temps, text) < 0)) {
        Py_DECREF(text);
        return -1;
    }
    Py_DECREF(text); /* the temps list keeps it (and its UTF-8) for the call */
    v->kind = P4J_PROXY;
    v->u.proxy = (void *)utf8;
    return 1;
}

int p4jpy_run_command(void *ctx, const char *command, size_t len, char **answer,
                      size_t *answer_len)
{
    ClientObject *cl = ctx;
    int rc = -1;
    PyGILState_STATE g = PyGILState_Ensure(); /* a Python thread waiting in a call */
    PyObject *hook = p4jpy_client_slot_new(cl, offsetof(ClientObject, command_hook));
    if (hook != Py_None) {
        p4jpy_command_depth++;
        PyObject *r = PyObject_CallFunction(hook, "y#", command, (Py_ssize_t)len);
        p4jpy_command_depth--;
        if (r && PyBytes_Check(r)) {
            size_t n = (size_t)PyBytes_GET_SIZE(r);
            if ((*answer = malloc(n ? n : 1))) {
                memcpy(*answer, PyBytes_AS_STRING(r), n);
                *answer_len = n;
                rc = 0;
            }
        } else if (r) {
            PyErr_Format(PyExc_TypeError, "py4jni: command_hook returned %.100s, not bytes",
                         Py_TYPE(r)->tp_name);
        }
        Py_XDECREF(r);
        if (PyErr_Occurred() && (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt) ||
                                 PyErr_ExceptionMatches(PyExc_SystemExit))) {
            p4jpy_interrupt_keep(); /* raised by the call waiting below, as in py4j */
            rc = P4J_COMMAND_ABANDON;
        } else if (PyErr_Occurred()) { /* Java gets py4j's error answer */
            PyErr_WriteUnraisable(hook);
        }
    }
    Py_DECREF(hook);
    PyGILState_Release(g);
    return rc;
}

static int socket_client_arg(PyObject *o, ClientObject **cl)
{
    if (!PyObject_TypeCheck(o, &ClientType)) {
        PyErr_SetString(PyExc_TypeError, "expected a py4jni Client");
        return -1;
    }
    *cl = (ClientObject *)o;
    if (!p4jpy_has_cap(*cl, P4J_CAP_TEXT_PROXIES)) {
        PyErr_SetString(PyExc_ValueError, "the wire codec serves socket clients only");
        return -1;
    }
    return 0;
}

/* Decodes one argument line `part` (type prefix + value, '\n' optional) into a new
 * Python object. `line` is scratch room of at least len + 3 bytes. */
static PyObject *decode_part(ClientObject *cl, const char *part, Py_ssize_t len, char *line)
{
    memcpy(line, part, (size_t)len);
    p4j_value out;
    p4j_error err = {0};
    if (cl->c->ops->decode_arg(cl->c, line, (size_t)len, &out, &err) == P4J_OK)
        return p4j_value_to_py(cl, &out);
    return p4j_raise(cl, &err, NULL);
}

static PyObject *mod_wire_decode_args(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    ClientObject *cl;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "wire_decode_args(client, parts) takes 2 arguments");
        return NULL;
    }
    if (socket_client_arg(args[0], &cl) < 0)
        return NULL;
    PyObject *seq = PySequence_Fast(args[1], "parts must be a sequence of bytes");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *result = PyList_New(n);
    char small[256];
    for (Py_ssize_t i = 0; result && i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyBytes_Check(item)) {
            PyErr_Format(PyExc_TypeError, "argument parts must be bytes, not %.100s",
                         Py_TYPE(item)->tp_name);
            Py_CLEAR(result);
            break;
        }
        Py_ssize_t len = PyBytes_GET_SIZE(item);
        char *line = (size_t)len + 3 <= sizeof small ? small : PyMem_Malloc((size_t)len + 3);
        if (!line) {
            PyErr_NoMemory();
            Py_CLEAR(result);
            break;
        }
        PyObject *o = decode_part(cl, PyBytes_AS_STRING(item), len, line);
        if (line != small)
            PyMem_Free(line);
        if (!o) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, o);
    }
    Py_DECREF(seq);
    return result;
}

static PyObject *mod_wire_answer(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"client", "value", "error", "keep", NULL};
    PyObject *clo, *value, *keep = Py_None;
    int error = 0;
    ClientObject *cl;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|pO:wire_answer", kwlist, &clo, &value,
                                     &error, &keep) ||
        socket_client_arg(clo, &cl) < 0)
        return NULL;
    if (keep != Py_None && !PyList_Check(keep)) {
        PyErr_SetString(PyExc_TypeError, "keep must be a list or None");
        return NULL;
    }
    p4j_argpack pack;
    if (p4j_args_from_py(cl, &value, 1, &pack) < 0)
        return NULL;
    /* Java objects made to convert the value (auto_convert) must outlive the answer */
    Py_ssize_t ntemps = keep != Py_None && pack.temps ? PyList_GET_SIZE(pack.temps) : 0;
    for (Py_ssize_t i = 0; i < ntemps; i++) {
        if (PyList_Append(keep, PyList_GET_ITEM(pack.temps, i)) < 0) {
            p4j_args_release(&pack);
            return NULL;
        }
    }
    char *text = NULL;
    size_t len = 0;
    p4j_error err = {0};
    p4j_status st = cl->c->ops->encode_answer(cl->c, &pack.vals[0], error, &text, &len, &err);
    p4j_args_release(&pack);
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    PyObject *r = PyBytes_FromStringAndSize(text, (Py_ssize_t)len);
    free(text);
    return r;
}

static PyObject *mod_socket_counts(PyObject *mod, PyObject *arg)
{
    (void)mod;
    ClientObject *cl;
    if (socket_client_arg(arg, &cl) < 0)
        return NULL;
    p4j_socket_counts n;
    p4j_socket_client_counts(cl->c, &n);
    return Py_BuildValue("{sKsKsK}", "made", (unsigned long long)n.made, "closed",
                         (unsigned long long)n.closed, "retried", (unsigned long long)n.retried);
}

/* The head of CPython's ssl.SSLContext object (PySSLContext of CPython's _ssl module,
 * the same in 3.10-3.13): the SSL_CTX it configures comes right after the object
 * header. */
typedef struct {
    PyObject_HEAD
    struct ssl_ctx_st *ctx;
} py_ssl_context_head;

/* Raises Py4JError naming `what` and why its context cannot serve; returns NULL. */
static struct ssl_ctx_st *tls_refused(const char *what, const char *why)
{
    PyErr_Format(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_RuntimeError,
                 "py4jni: %s(ssl_context=...) cannot be used by the socket transport: %s",
                 what, why);
    return NULL;
}

/* The SSL_CTX (borrowed) that ssl.SSLContext `o` configures, for the C transport to run
 * TLS with exactly what the context says (verification, CA and client certificates,
 * versions, ciphers, options). The transport resolves OpenSSL at run time from the one
 * libssl loaded in the process (p4j_socket_tls_load: Python's ssl module loaded it);
 * the context is taken only when the SSL_CTX_get_options that _ssl binds to (dlsym on
 * _ssl) is the transport's, and the context's options read through the pointer equal
 * what Python reports. Contexts whose callbacks would call into Python's ssl objects from
 * OpenSSL (sni_callback, _msg_callback, keylog_filename) are refused. NULL with
 * Py4JError (TypeError for a non-context) otherwise. */
static struct ssl_ctx_st *tls_ctx_of(PyObject *o, const char *what)
{
    PyObject *ssl = PyImport_ImportModule("ssl");
    PyObject *cls = ssl ? PyObject_GetAttrString(ssl, "SSLContext") : NULL;
    PyObject *mod = cls ? PyImport_ImportModule("_ssl") : NULL;
    PyObject *file = mod ? PyObject_GetAttrString(mod, "__file__") : NULL;
    if (!file)
        PyErr_Clear();
    Py_XDECREF(ssl);
    Py_XDECREF(mod);
    if (!cls) {
        Py_XDECREF(file);
        return NULL;
    }
    int is = PyObject_IsInstance(o, cls);
    Py_DECREF(cls);
    if (is <= 0) {
        Py_XDECREF(file);
        if (is == 0)
            PyErr_Format(PyExc_TypeError, "%s(ssl_context=...) must be an ssl.SSLContext, not "
                         "%.100s", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    const char *path = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : NULL;
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD); /* NULL path: _ssl built into python */
    Py_XDECREF(file);
    void *theirs = h ? dlsym(h, "SSL_CTX_get_options") : NULL;
    if (h)
        dlclose(h);
    p4j_error err = {0};
    if (p4j_socket_tls_load(&err) != P4J_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", err.message ? err.message : "OpenSSL not found");
        p4j_error_clear(NULL, &err);
        return tls_refused(what, why);
    }
    void *mine = p4j_socket_tls_function("SSL_CTX_get_options");
    if (!theirs || theirs != mine) {
        Dl_info a = {0}, b = {0};
        char why[600];
        dladdr(mine, &a);
        if (theirs)
            dladdr(theirs, &b);
        snprintf(why, sizeof why, "Python's ssl module runs on another OpenSSL (%s) than "
                 "py4jni (%s)", b.dli_fname ? b.dli_fname : "built in",
                 a.dli_fname ? a.dli_fname : "?");
        return tls_refused(what, why);
    }
    struct ssl_ctx_st *ctx = ((py_ssl_context_head *)o)->ctx;
    PyObject *opts = PyObject_GetAttrString(o, "options");
    unsigned long long want = opts ? PyLong_AsUnsignedLongLongMask(opts) : 0;
    Py_XDECREF(opts);
    if (PyErr_Occurred())
        return NULL;
    if (!ctx || p4j_socket_tls_ctx_options(ctx) != (uint64_t)want)
        return tls_refused(what, "this Python's ssl.SSLContext is not laid out as py4jni "
                           "expects");
    static const char *const python_callbacks[] = {"sni_callback", "_msg_callback",
                                                   "keylog_filename"};
    for (size_t i = 0; i < sizeof python_callbacks / sizeof *python_callbacks; i++) {
        PyObject *v = PyObject_GetAttrString(o, python_callbacks[i]);
        if (!v) {
            PyErr_Clear();
            continue;
        }
        bool set = v != Py_None;
        Py_DECREF(v);
        if (set) {
            char why[200];
            snprintf(why, sizeof why, "its %s is set (OpenSSL would call back into Python's "
                     "ssl objects)", python_callbacks[i]);
            return tls_refused(what, why);
        }
    }
    return ctx;
}

static PyObject *mod_socket_set_tls(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *clo, *context, *serve_context = Py_None;
    const char *host = NULL, *what = "GatewayParameters", *serve_what = "CallbackServerParameters";
    ClientObject *cl;
    if (!PyArg_ParseTuple(args, "OOz|Oss:socket_set_tls", &clo, &context, &host,
                          &serve_context, &what, &serve_what) ||
        socket_client_arg(clo, &cl) < 0)
        return NULL;
    struct ssl_ctx_st *ctx = NULL, *serve = NULL;
    int check_host = 0;
    if (context != Py_None) {
        if (!(ctx = tls_ctx_of(context, what)))
            return NULL;
        PyObject *v = PyObject_GetAttrString(context, "check_hostname");
        check_host = v ? PyObject_IsTrue(v) : -1;
        Py_XDECREF(v);
        if (check_host < 0)
            return NULL;
    }
    if (serve_context != Py_None && !(serve = tls_ctx_of(serve_context, serve_what)))
        return NULL;
    p4j_error err = {0};
    if (p4j_socket_client_set_tls(cl->c, ctx, host, check_host, serve, &err) != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    Py_RETURN_NONE;
}

static PyMethodDef socket_callback_methods[] = {
    {"socket_set_tls", mod_socket_set_tls, METH_VARARGS,
     "socket_set_tls(client, context, server_hostname, serve_context=None, what=..., "
     "serve_what=...): TLS for a socket client's connections, configured by ssl.SSLContext "
     "`context` (None: plain; its check_hostname checks the server's certificate against "
     "server_hostname), and the server side of the connections it serves (serve_context). "
     "Call before the client's first command. Py4JError when the context cannot be used."},
    {"socket_counts", mod_socket_counts, METH_O,
     "socket_counts(client): {'made', 'closed', 'retried'}: the socket client's connections "
     "opened (or served), closed, and commands resent once on a new connection after a "
     "pooled one was found broken, since the client was made."},
    {"wire_decode_args", (PyCFunction)(void (*)(void))mod_wire_decode_args, METH_FASTCALL,
     "wire_decode_args(client, parts): the argument lines of a callback command (bytes, "
     "py4j type prefix + value) as Python objects, converted as call results are."},
    {"wire_answer", (PyCFunction)(void (*)(void))mod_wire_answer, METH_VARARGS | METH_KEYWORDS,
     "wire_answer(client, value, error=False, keep=None): py4j's answer line for a "
     "callback, b'!y<part>\\n' (or b'!x<part>\\n'), `value` converted as call arguments "
     "are; Java objects made for the conversion are appended to list `keep` (they must "
     "live until Java has read the answer)."},
    {NULL, NULL, 0, NULL},
};

int p4j_socket_callbacks_init(PyObject *module)
{
    if (!(str_Java = PyUnicode_InternFromString("Java")))
        return -1;
    return PyModule_AddFunctions(module, socket_callback_methods);
}
