/* python-binding/src/module.c - the _py4jni module and its Client type.
 *
 * A Client is the seam of py4j's design: every command of py4j's Python objects goes
 * through it. The transport behind it is in-process (JNI) or a socket; nothing above
 * this file knows which.
 */
#include <string.h>
#include <sys/resource.h>

#include "binding.h"
#include "classhooks.h"
#include "jvm.h"
#include "transport.h"

/* Runs a transport operation with the GIL released; expands to a p4j_status. */
#define P4J_RUN(st, expr)           \
    do {                            \
        Py_BEGIN_ALLOW_THREADS      \
        st = (expr);                \
        Py_END_ALLOW_THREADS        \
    } while (0)

static PyObject *client_wrap_new(p4j_client *c)
{
    ClientObject *cl = PyObject_New(ClientObject, &ClientType);
    if (!cl) {
        c->ops->shutdown(c);
        c->ops->destroy(c);
        return NULL;
    }
    cl->c = c;
    if (c->ops->caps & P4J_CAP_LOCK_HELD) { /* the GIL; SIGINT interrupts Java calls */
        c->unlock = p4jpy_unlock_interruptible;
        c->relock = p4jpy_relock;
    }
    cl->converter = Py_NewRef(Py_None);
    cl->proxy_hook = Py_NewRef(Py_None);
    cl->command_hook = Py_NewRef(Py_None);
    cl->weakreflist = NULL;
    cl->dict = NULL;
    cl->pending = NULL;
    cl->auto_field = 0;
    cl->keep_dropped = 0;
    return (PyObject *)cl;
}

static void client_dealloc(PyObject *self)
{
    ClientObject *cl = (ClientObject *)self;
    if (cl->weakreflist)
        PyObject_ClearWeakRefs(self);
    Py_CLEAR(cl->converter);
    Py_CLEAR(cl->proxy_hook);
    Py_CLEAR(cl->command_hook);
    Py_CLEAR(cl->dict);
    Py_CLEAR(cl->pending);
    if (cl->c) {
        cl->c->ops->shutdown(cl->c);
        cl->c->ops->destroy(cl->c);
    }
    PyObject_Free(self);
}

/* Returns the p4j_ref of a JavaObject or JavaClass argument (None -> NULL ref). */
static int ref_of(PyObject *o, const p4j_ref **ref, const char *what)
{
    static const p4j_ref none = {NULL, NULL};
    if (o == Py_None) {
        *ref = &none;
        return 0;
    }
    if (P4J_IS_JAVAOBJECT(o)) {
        *ref = &((JavaObject *)o)->ref;
        return 0;
    }
    if (P4J_IS_JAVACLASS(o)) {
        *ref = &((JavaClassObject *)o)->ref;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s must be a JavaObject or JavaClass, not %.100s", what,
                 Py_TYPE(o)->tp_name);
    return -1;
}

/* A transport operation on `target` with the GIL released, the target pinned (a detach
 * on another thread meanwhile waits for it; see p4j_pin) and read through a copy, `ref_`;
 * a detached target fails the operation through the caller's `err`. */
#define P4J_RUN_ON(st, target, ref, expr)                                              \
    do {                                                                               \
        JavaObject *pinned_ = P4J_IS_JAVAOBJECT(target) ? (JavaObject *)(target) : NULL; \
        p4j_ref copy_ = *(ref);                                                        \
        const p4j_ref *ref_ = &copy_;                                                  \
        if (pinned_ && !p4jpy_pin_copy(pinned_, &copy_)) {                             \
            st = p4j_error_set(&err, P4J_ERR_BRIDGE, /* detached meanwhile */          \
                               P4JPY_DETACHED);                                       \
            break;                                                                     \
        }                                                                              \
        P4J_RUN(st, expr);                                                             \
        if (pinned_)                                                                   \
            p4j_unpin(pinned_);                                                        \
    } while (0)

static PyObject *client_resolve(PyObject *self, PyObject *args)
{
    ClientObject *cl = (ClientObject *)self;
    PyObject *view;
    const char *name;
    const p4j_ref *vref;
    if (!PyArg_ParseTuple(args, "Os:resolve", &view, &name) || ref_of(view, &vref, "view") < 0)
        return NULL;
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN_ON(st, view, vref,
               cl->c->ops->resolve(cl->c, ref_->handle ? ref_ : NULL, name, &out, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    if (out.kind == P4J_PACKAGE)
        Py_RETURN_NONE;
    return p4j_value_to_py(cl, &out);
}

static PyObject *client_view_new(PyObject *self, PyObject *args)
{
    ClientObject *cl = (ClientObject *)self;
    const char *name = "";
    if (!PyArg_ParseTuple(args, "|s:view_new", &name))
        return NULL;
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN(st, cl->c->ops->view_new(cl->c, name, &out, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    return p4j_value_to_py(cl, &out);
}

static PyObject *client_view_import(PyObject *self, PyObject *args)
{
    ClientObject *cl = (ClientObject *)self;
    PyObject *view;
    const char *pattern;
    int remove = 0;
    const p4j_ref *vref;
    if (!PyArg_ParseTuple(args, "Os|p:view_import", &view, &pattern, &remove) ||
        ref_of(view, &vref, "view") < 0)
        return NULL;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN_ON(st, view, vref,
               cl->c->ops->view_import(cl->c, ref_->handle ? ref_ : NULL, pattern, remove, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    Py_RETURN_NONE;
}

static PyObject *client_dir(PyObject *self, PyObject *args)
{
    ClientObject *cl = (ClientObject *)self;
    PyObject *target;
    int kind;
    const p4j_ref *ref;
    if (!PyArg_ParseTuple(args, "OC:dir", &target, &kind) || ref_of(target, &ref, "target") < 0)
        return NULL;
    if (!strchr("fmsv", kind)) {
        PyErr_SetString(PyExc_ValueError, "dir kind must be one of 'f', 'm', 's', 'v'");
        return NULL;
    }
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN_ON(st, target, ref,
               cl->c->ops->dir(cl->c, ref_->handle ? ref_ : NULL, (p4j_dir_kind)kind, &out, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    PyObject *text = p4j_value_to_py(cl, &out);
    if (!text || text == Py_None) {
        Py_XDECREF(text);
        return text ? PyList_New(0) : NULL;
    }
    PyObject *lines = PyUnicode_Splitlines(text, 0);
    Py_DECREF(text);
    return lines;
}

static PyObject *client_help(PyObject *self, PyObject *args)
{
    ClientObject *cl = (ClientObject *)self;
    PyObject *target;
    const char *pattern = NULL;
    int short_name = 1;
    const p4j_ref *ref;
    if (!PyArg_ParseTuple(args, "O|zp:help", &target, &pattern, &short_name) ||
        ref_of(target, &ref, "target") < 0)
        return NULL;
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    bool is_class = P4J_IS_JAVACLASS(target);
    P4J_RUN_ON(st, target, ref,
               cl->c->ops->help(cl->c, ref_, is_class, pattern, short_name, &out, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    return p4j_value_to_py(cl, &out);
}

static PyObject *client_stack_trace(PyObject *self, PyObject *arg)
{
    ClientObject *cl = (ClientObject *)self;
    const p4j_ref *ref;
    if (ref_of(arg, &ref, "throwable") < 0)
        return NULL;
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN_ON(st, arg, ref, cl->c->ops->stack_trace(cl->c, ref_, &out, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    return p4j_value_to_py(cl, &out);
}

static PyObject *client_field_get(PyObject *self, PyObject *args)
{
    ClientObject *cl = (ClientObject *)self;
    PyObject *target;
    const char *name;
    const p4j_ref *ref;
    if (!PyArg_ParseTuple(args, "Os:field_get", &target, &name) ||
        ref_of(target, &ref, "target") < 0)
        return NULL;
    unsigned flags = P4J_IS_JAVACLASS(target) ? P4J_CALL_STATIC : 0;
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN_ON(st, target, ref, cl->c->ops->field_get(cl->c, ref_, flags, name, &out, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    return p4j_value_to_py(cl, &out);
}

static PyObject *client_field_set(PyObject *self, PyObject *args)
{
    ClientObject *cl = (ClientObject *)self;
    PyObject *target, *value;
    const char *name;
    const p4j_ref *ref;
    if (!PyArg_ParseTuple(args, "OsO:field_set", &target, &name, &value) ||
        ref_of(target, &ref, "target") < 0)
        return NULL;
    unsigned flags = P4J_IS_JAVACLASS(target) ? P4J_CALL_STATIC : 0;
    p4j_argpack pack;
    if (p4j_args_from_py(cl, &value, 1, &pack) < 0)
        return NULL;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN_ON(st, target, ref,
               cl->c->ops->field_set(cl->c, ref_, flags, name, &pack.vals[0], &err));
    p4j_args_release(&pack);
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    Py_RETURN_NONE;
}

static PyObject *client_shutdown(PyObject *self, PyObject *unused)
{
    (void)unused;
    ClientObject *cl = (ClientObject *)self;
    Py_BEGIN_ALLOW_THREADS
    cl->c->ops->shutdown(cl->c);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* _set_context(context): the org.py4jni.CallContext (a JavaObject of this client, or
 * None) the client's calls run for, in-process (bridge/inproc/include/inproc.h). */
static PyObject *client_set_context(PyObject *self, PyObject *arg)
{
    ClientObject *cl = (ClientObject *)self;
    if (p4j_check_open(cl) < 0)
        return NULL;
    if (!p4jpy_has_cap(cl, P4J_CAP_BUFFERS)) {
        PyErr_SetString(p4j_reg.Py4JError, "py4jni: a call context is for in-process clients");
        return NULL;
    }
    if (arg != Py_None && (!P4J_IS_JAVAOBJECT(arg) || !((JavaObject *)arg)->ref.handle)) {
        PyErr_SetString(PyExc_TypeError, "py4jni: the context must be a JavaObject or None");
        return NULL;
    }
    p4j_error err = {0};
    p4j_status st;
    if (arg == Py_None)
        P4J_RUN(st, p4jpy_transport_inproc_context(cl->c, NULL, &err));
    else
        P4J_RUN_ON(st, arg, &((JavaObject *)arg)->ref,
                   p4jpy_transport_inproc_context(cl->c, ref_->handle, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    Py_RETURN_NONE;
}

static PyObject *client_raw_command(PyObject *self, PyObject *arg)
{
    ClientObject *cl = (ClientObject *)self;
    Py_ssize_t len;
    const char *text = PyUnicode_AsUTF8AndSize(arg, &len);
    if (!text)
        return NULL;
    if (!cl->c->ops->raw_command) {
        PyErr_SetString(p4j_reg.Py4JError, "py4jni: this transport has no py4j command text");
        return NULL;
    }
    char *answer = NULL;
    size_t alen = 0;
    int stage = 0;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN(st, cl->c->ops->raw_command(cl->c, text, (size_t)len, &answer, &alen, &stage,
                                        &err));
    if (st != P4J_OK && err.kind == P4J_ERR_NETWORK && stage > 0) {
        /* py4j's Py4JNetworkError(message, cause, when): the caller decides on a retry;
         * the cause is a TimeoutError (py4j's socket.timeout) when a wait timed out */
        const char *msg = err.message ? err.message : "network error";
        PyObject *cause = err.timed_out ? PyObject_CallFunction(PyExc_TimeoutError, "s", msg)
                                        : Py_NewRef(Py_None);
        PyObject *exc = cause ? PyObject_CallFunction(p4j_reg.Py4JNetworkError, "sOs", msg,
                                                      cause,
                                                      stage == 1 ? "on_send" : "on_receive")
                              : NULL;
        Py_XDECREF(cause);
        p4j_error_clear(cl->c, &err);
        if (exc) {
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
        }
        return NULL;
    }
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    PyObject *res = PyUnicode_DecodeUTF8(answer, (Py_ssize_t)alen, "replace");
    free(answer);
    return res;
}

static PyObject *client_close_idle(PyObject *self, PyObject *unused)
{
    (void)unused;
    ClientObject *cl = (ClientObject *)self;
    if (cl->c->ops->close_idle) {
        Py_BEGIN_ALLOW_THREADS
        cl->c->ops->close_idle(cl->c);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

/* The ids of the client's idle connections (ops->idle_list): a list of ints, the one
 * used last first; empty when the transport has none (in-process). */
static PyObject *client_idle_ids(PyObject *self, PyObject *unused)
{
    (void)unused;
    ClientObject *cl = (ClientObject *)self;
    uint64_t small[16], *ids = small;
    size_t cap = 16, n = 0;
    for (;;) {
        if (!cl->c->ops->idle_list)
            break;
        n = cl->c->ops->idle_list(cl->c, ids, cap); /* a short lock, no network wait */
        if (n <= cap)
            break;
        if (ids != small)
            PyMem_Free(ids);
        cap = n + 16;
        if (!(ids = PyMem_Malloc(cap * sizeof *ids)))
            return PyErr_NoMemory();
    }
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *id = PyLong_FromUnsignedLongLong(ids[i]);
        if (!id)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, id);
    }
    if (ids != small)
        PyMem_Free(ids);
    return list;
}

/* _conn_ctl(id, op): ops->conn_ctl's result (-1: not applicable; see p4j_conn_op). */
static PyObject *client_conn_ctl(PyObject *self, PyObject *args)
{
    ClientObject *cl = (ClientObject *)self;
    unsigned long long id;
    int op;
    if (!PyArg_ParseTuple(args, "Ki:_conn_ctl", &id, &op))
        return NULL;
    if (op < P4J_CONN_STATE || op > P4J_CONN_DUP_FD) {
        PyErr_SetString(PyExc_ValueError, "unknown connection operation");
        return NULL;
    }
    int rc = -1;
    if (cl->c->ops->conn_ctl) {
        Py_BEGIN_ALLOW_THREADS /* closing a TLS connection may write */
        rc = cl->c->ops->conn_ctl(cl->c, (uint64_t)id, (p4j_conn_op)op);
        Py_END_ALLOW_THREADS
    } else if (op == P4J_CONN_STATE) {
        rc = 0;
    }
    return PyLong_FromLong(rc);
}

/* Calls py4jni._client_api.<name>(self, *args, **kw): py4j's public GatewayClient and
 * JavaClient methods are written in Python there (none is on a hot path). */
static PyObject *client_api_call(const char *name, PyObject *self, PyObject *args,
                                 PyObject *kw)
{
    PyObject *mod = PyImport_ImportModule("py4jni._client_api");
    if (!mod)
        return NULL;
    PyObject *fn = PyObject_GetAttrString(mod, name);
    Py_DECREF(mod);
    if (!fn)
        return NULL;
    PyObject *full = PyTuple_New(PyTuple_GET_SIZE(args) + 1);
    if (!full) {
        Py_DECREF(fn);
        return NULL;
    }
    PyTuple_SET_ITEM(full, 0, Py_NewRef(self));
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++)
        PyTuple_SET_ITEM(full, i + 1, Py_NewRef(PyTuple_GET_ITEM(args, i)));
    PyObject *res = PyObject_Call(fn, full, kw);
    Py_DECREF(full);
    Py_DECREF(fn);
    return res;
}

/* Defines client_<name>, a Client method implemented by py4jni._client_api.<name>. */
#define CLIENT_API(name)                                                            \
    static PyObject *client_##name(PyObject *self, PyObject *args, PyObject *kw)   \
    {                                                                               \
        return client_api_call(#name, self, args, kw);                             \
    }
CLIENT_API(close)
CLIENT_API(shutdown_gateway)
CLIENT_API(garbage_collect_object)
CLIENT_API(send_command)
CLIENT_API(get_thread_connection)
CLIENT_API(set_thread_connection)
CLIENT_API(set_class_loader)
#undef CLIENT_API

static PyObject *client_global_refs(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    return PyLong_FromLong(p4j_jvm_global_count());
}

/* py4j's GatewayClient.deque: py4jni._client_api.idle_connections(self). */
static PyObject *client_get_deque(PyObject *self, void *closure)
{
    (void)closure;
    PyObject *args = PyTuple_New(0);
    if (!args)
        return NULL;
    PyObject *res = client_api_call("idle_connections", self, args, NULL);
    Py_DECREF(args);
    return res;
}

static PyObject *client_get_closed(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((ClientObject *)self)->c->closed);
}

static PyObject *client_get_kind(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(((ClientObject *)self)->c->ops->name);
}

static PyObject *client_get_caps(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLong(((ClientObject *)self)->c->ops->caps);
}

static PyObject *client_get_bulk(PyObject *self, void *closure)
{
    (void)closure;
    const p4j_client_ops *ops = ((ClientObject *)self)->c->ops;
    return PyBool_FromLong(ops->cursor_open && ops->cursor_next && ops->collection_new &&
                           ops->array_info && ops->array_read && ops->array_write &&
                           ops->array_new);
}

static PyObject *client_get_converter(PyObject *self, void *closure)
{
    (void)closure;
    PyObject *r;
    P4JPY_LOCK_OBJ(self); /* free-threaded builds: against a concurrent set */
    r = Py_NewRef(((ClientObject *)self)->converter);
    P4JPY_UNLOCK_OBJ();
    return r;
}

static int client_set_converter(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    if (!value || (value != Py_None && !PyCallable_Check(value))) {
        PyErr_SetString(PyExc_TypeError, "converter must be callable or None");
        return -1;
    }
    PyObject *old;
    P4JPY_LOCK_OBJ(self);
    old = ((ClientObject *)self)->converter;
    ((ClientObject *)self)->converter = Py_NewRef(value);
    P4JPY_UNLOCK_OBJ();
    Py_XDECREF(old); /* outside the lock: may run any code */
    return 0;
}

/* Getter of a callable-or-None slot of the Client (closure: the slot's offset). */
static PyObject *client_get_hook(PyObject *self, void *closure)
{
    return p4jpy_client_slot_new((ClientObject *)self, (size_t)closure);
}

/* Setter of a callable-or-None slot of the Client (closure: the slot's offset). */
static int client_set_hook(PyObject *self, PyObject *value, void *closure)
{
    if (!value || (value != Py_None && !PyCallable_Check(value))) {
        PyErr_SetString(PyExc_TypeError, "the hook must be callable or None");
        return -1;
    }
    PyObject *old;
    P4JPY_LOCK_OBJ(self);
    old = *(PyObject **)((char *)self + (size_t)closure);
    *(PyObject **)((char *)self + (size_t)closure) = Py_NewRef(value);
    P4JPY_UNLOCK_OBJ();
    Py_XDECREF(old); /* outside the lock: may run any code */
    return 0;
}

static PyMethodDef client_methods[] = {
    {"resolve", client_resolve, METH_VARARGS,
     "resolve(view, name): the JavaClass for dotted `name` in a JVM view, or None for a package."},
    {"view_new", client_view_new, METH_VARARGS, "view_new(name): a new JVM view (JavaObject)."},
    {"view_import", client_view_import, METH_VARARGS,
     "view_import(view, pattern, remove=False): adds or removes an import in a view."},
    {"dir", client_dir, METH_VARARGS,
     "dir(target, kind): names of fields 'f', methods 'm', statics 's' or view imports 'v'."},
    {"help", client_help, METH_VARARGS,
     "help(target, pattern=None, short_name=True): py4j's help page text."},
    {"stack_trace", client_stack_trace, METH_O, "stack_trace(throwable): the Java stack trace."},
    {"field_get", client_field_get, METH_VARARGS, "field_get(target, name): a public field."},
    {"field_set", client_field_set, METH_VARARGS,
     "field_set(target, name, value): assigns a public field."},
    {"shutdown", client_shutdown, METH_NOARGS,
     "Closes this client; later calls raise Py4JError. The process's JVM stays up."},
    {"_set_context", client_set_context, METH_O,
     "_set_context(context): the org.py4jni.CallContext (or None) this in-process client's "
     "calls run for; set_class_loader is the public way."},
    {"_raw_command", client_raw_command, METH_O,
     "_raw_command(text): sends py4j command text, returns the answer line (socket mode); "
     "a failure after connecting raises Py4JNetworkError with py4j's `when`."},
    {"_close_idle", client_close_idle, METH_NOARGS,
     "Closes the connections nobody uses (socket mode); the client stays usable."},
    {"_idle_ids", client_idle_ids, METH_NOARGS,
     "The ids of the idle connections (socket mode; py4j's deque order), a short lock."},
    {"_conn_ctl", client_conn_ctl, METH_VARARGS,
     "_conn_ctl(id, op): acts on one connection (CONN_* of this module); -1 when it does "
     "not apply."},
#define API_METHOD(name, doc) \
    {#name, (PyCFunction)(void (*)(void))client_##name, METH_VARARGS | METH_KEYWORDS, doc}
    /* "name($self, /, py4j's parameters)\n--\n\n": inspect.signature gives py4j's */
    API_METHOD(close, "close($self, /)\n--\n\n"
                      "py4j's: closes the client's connections (see py4jni._client_api)."),
    API_METHOD(shutdown_gateway, "shutdown_gateway($self, /)\n--\n\n"
                                 "py4j's: asks the server to shut down."),
    API_METHOD(garbage_collect_object,
               "garbage_collect_object($self, /, target_id, enqueue=True)\n--\n\n"
               "py4j's: releases a Java object by id."),
    API_METHOD(send_command,
               "send_command($self, /, command, retry=True, binary=False)\n--\n\n"
               "py4j's: raw py4j command text (socket mode)."),
    API_METHOD(get_thread_connection,
               "get_thread_connection($self, /)\n--\n\n"
               "py4j's JavaClient method: this thread's connection object."),
    API_METHOD(set_thread_connection,
               "set_thread_connection($self, /, connection)\n--\n\n"
               "py4j's JavaClient method: makes `connection` this thread's."),
    API_METHOD(set_class_loader,
               "set_class_loader($self, /, loader)\n--\n\n"
               "py4jni's, in-process: `loader` (a java.lang.ClassLoader, None: the thread's "
               "own) is the context class loader of the Java thread of every call through "
               "this client, and its name lookups resolve in it (py4jni._client_api)."),
#undef API_METHOD
    {"global_ref_count", client_global_refs, METH_NOARGS,
     "Live JNI global references made by py4jni in this process (0 in socket mode)."},
    {NULL, NULL, 0, NULL},
};

static PyObject *client_get_auto_field(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((ClientObject *)self)->auto_field);
}

static int client_set_auto_field(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    int on = value ? PyObject_IsTrue(value) : 0;
    if (on < 0)
        return -1;
    ((ClientObject *)self)->auto_field = on;
    return 0;
}

static PyObject *client_get_keep_dropped(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((ClientObject *)self)->keep_dropped);
}

static int client_set_keep_dropped(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    int on = value ? PyObject_IsTrue(value) : 0;
    if (on < 0)
        return -1;
    ((ClientObject *)self)->keep_dropped = on;
    return 0;
}

static PyObject *client_get_interrupt_java(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((ClientObject *)self)->c->unlock == p4jpy_unlock_interruptible);
}

/* Swaps the client's unlock (p4jpy_relock ends either kind); socket clients (no unlock)
 * ignore it. A call in flight keeps the kind it started with. */
static int client_set_interrupt_java(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    p4j_client *c = ((ClientObject *)self)->c;
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "interrupt_java cannot be deleted");
        return -1;
    }
    int on = PyObject_IsTrue(value);
    if (on < 0)
        return -1;
    if (c->unlock)
        c->unlock = on ? p4jpy_unlock_interruptible : p4jpy_unlock_plain;
    return 0;
}

static PyGetSetDef client_getset[] = {
    {"auto_field", client_get_auto_field, client_set_auto_field,
     "py4j's auto_field: attributes of JavaObjects read a public field when there is one "
     "(one extra transport call per attribute read).", NULL},
    {"closed", client_get_closed, NULL, "True after shutdown().", NULL},
    {"_keep_dropped", client_get_keep_dropped, client_set_keep_dropped,
     "py4j's enable_memory_management=False: JavaObjects Python drops are not released "
     "(detach() still releases; in-process they live until the process ends).", NULL},
    {"deque", client_get_deque, NULL,
     "py4j's deque of idle connections: a live view of the transport's (socket mode; "
     "empty in-process), see py4jni._client_api.IdleConnections.", NULL},
    {"interrupt_java", client_get_interrupt_java, client_set_interrupt_java,
     "In-process: whether a SIGINT (Ctrl-C) interrupts this client's Java calls on the "
     "main thread (Thread.interrupt()); True by default. Socket clients: always False.",
     NULL},
    {"kind", client_get_kind, NULL, "'inproc' or 'socket' (for messages: ask caps).", NULL},
    {"caps", client_get_caps, NULL,
     "What the transport can do: CAP_* bits of this module (bridge/client.h).", NULL},
    {"bulk", client_get_bulk, NULL,
     "True when the transport has the bulk operations (collections, arrays).", NULL},
    {"converter", client_get_converter, client_set_converter,
     "callable(obj) -> JavaObject for Python arguments of other types (auto_convert, "
     "callbacks), or None.", NULL},
    {"proxy_hook", client_get_hook, client_set_hook,
     "socket mode: callable(obj) -> py4j proxy text '<id>;<iface>;...' (or None: not a "
     "proxy) for Python objects whose class has Java.implements, or None.",
     (void *)offsetof(ClientObject, proxy_hook)},
    {"command_hook", client_get_hook, client_set_hook,
     "pinned-thread mode: callable(command: bytes) -> answer: bytes, runs a command Java "
     "sends on a thread's connection (py4j's c or g lines, up to e), or None.",
     (void *)offsetof(ClientObject, command_hook)},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ClientType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "py4jni._py4jni.Client",
    .tp_doc = "One connection to a JVM (in-process or socket); every py4j command goes "
              "through it.",
    .tp_basicsize = sizeof(ClientObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_weaklistoffset = offsetof(ClientObject, weakreflist),
    .tp_dictoffset = offsetof(ClientObject, dict),
    .tp_dealloc = client_dealloc,
    .tp_methods = client_methods,
    .tp_getset = client_getset,
};

/* ------------------------------------------------------------- module functions */

/* atexit handler: Java's shutdown hooks and File.deleteOnExit run while Python can
 * still serve callbacks (the GIL released: hooks run on Java threads). */
static PyObject *mod_java_shutdown_hooks(PyObject *mod, PyObject *unused)
{
    (void)mod; (void)unused;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN(st, p4j_jvm_run_shutdown_hooks(&err));
    if (st != P4J_OK) {
        PyErr_SetString(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_RuntimeError,
                        err.message ? err.message : "py4jni: Java's shutdown hooks failed");
        p4j_error_clear(NULL, &err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef shutdown_hooks_def = {
    "_java_shutdown_hooks", mod_java_shutdown_hooks, METH_NOARGS,
    "Runs Java's shutdown hooks and File.deleteOnExit (at interpreter exit)."};

/* Registers mod_java_shutdown_hooks with atexit once the JVM runs: handlers registered
 * later (the application's) run before it, earlier ones after. 0 or -1. */
static int register_java_exit(void)
{
    static int done;
    if (done)
        return 0;
    if (p4j_atexit_register(&shutdown_hooks_def) < 0)
        return -1;
    done = 1;
    return 0;
}

static PyObject *mod_inproc_client(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"helper_jar", "classpath", "options", "libjvm", "check_jni",
                             "keep_signals", "join", NULL};
    const char *jar, *classpath = NULL, *libjvm = NULL;
    PyObject *options = NULL;
    int check_jni = 0, keep_signals = 0, join = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|zOzppp:inproc_client", kwlist, &jar,
                                     &classpath, &options, &libjvm, &check_jni, &keep_signals,
                                     &join))
        return NULL;
    PyObject *seq = options && options != Py_None
                        ? PySequence_Fast(options, "options must be a sequence of str")
                        : PyTuple_New(0);
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const char **opts = PyMem_Calloc((size_t)n + 1, sizeof *opts);
    if (!opts) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        opts[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        if (!opts[i]) {
            PyMem_Free(opts);
            Py_DECREF(seq);
            return NULL;
        }
    }
    p4jpy_transport_spec spec = {
        .kind = P4JPY_TRANSPORT_INPROC,
        .jvm = {.libjvm_path = libjvm, .helper_jar = jar, .classpath = classpath,
                .options = opts, .noptions = (size_t)n, .check_jni = check_jni,
                .keep_signals = keep_signals, .join_running = join}};
    p4j_client *c = NULL;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN(st, p4jpy_transport_new(&spec, &c, &err));
    PyMem_Free(opts);
    Py_DECREF(seq);
    if (st != P4J_OK) {
        PyErr_SetString(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_RuntimeError,
                        err.message ? err.message : "py4jni: cannot start the JVM");
        p4j_error_clear(NULL, &err);
        return NULL;
    }
    if (register_java_exit() < 0) {
        c->ops->shutdown(c);
        c->ops->destroy(c);
        return NULL;
    }
    return client_wrap_new(c);
}

static PyObject *mod_socket_client(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"address", "port", "auth_token", "read_timeout", "pinned", NULL};
    const char *address = "127.0.0.1", *token = NULL;
    int port = 25333, pinned = 0;
    double timeout = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zizdp:socket_client", kwlist, &address, &port,
                                     &token, &timeout, &pinned))
        return NULL;
    p4j_client *c = NULL;
    p4j_error err = {0};
    p4j_status st;
    p4jpy_transport_spec spec = {.kind = P4JPY_TRANSPORT_SOCKET, .address = address,
                                 .port = port, .auth_token = token,
                                 .read_timeout_s = timeout, .pinned = pinned};
    P4J_RUN(st, p4jpy_transport_new(&spec, &c, &err));
    if (st != P4J_OK) {
        PyObject *type = err.kind == P4J_ERR_NETWORK ? p4j_reg.Py4JNetworkError : p4j_reg.Py4JError;
        PyErr_SetString(type ? type : PyExc_RuntimeError,
                        err.message ? err.message : "py4jni: cannot create the socket client");
        p4j_error_clear(NULL, &err);
        return NULL;
    }
    PyObject *cl = client_wrap_new(c);
    if (cl && c->ops->set_command_handler) /* the Client outlives its p4j_client's use */
        c->ops->set_command_handler(c, p4jpy_run_command, cl);
    return cl;
}

static PyObject *mod_serve_connection(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"client", "fd", "auth_token", "read_timeout", NULL};
    PyObject *client;
    int fd;
    const char *token = NULL;
    double timeout = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!i|zd:serve_connection", kwlist, &ClientType,
                                     &client, &fd, &token, &timeout))
        return NULL;
    ClientObject *cl = (ClientObject *)client;
    if (!cl->c->ops->serve) {
        PyErr_SetString(PyExc_ValueError, "serve_connection needs a pinned-thread client "
                        "(a ClientServer's)");
        return NULL;
    }
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN(st, cl->c->ops->serve(cl->c, fd, token, timeout, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    Py_RETURN_NONE;
}

static PyObject *mod_object_ref(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *client;
    const char *id;
    if (!PyArg_ParseTuple(args, "O!s:object_ref", &ClientType, &client, &id))
        return NULL;
    ClientObject *cl = (ClientObject *)client;
    if (!cl->c->ops->ref_from_id) {
        PyErr_SetString(PyExc_ValueError, "object_ref names socket-mode object ids only");
        return NULL;
    }
    p4j_ref ref;
    p4j_error err = {0};
    if (cl->c->ops->ref_from_id(cl->c, id, &ref, &err) != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    return p4j_wrap_ref(cl, P4J_REF, &ref);
}

static PyObject *mod_shutdown_server(PyObject *mod, PyObject *arg)
{
    (void)mod;
    if (!PyObject_TypeCheck(arg, &ClientType)) {
        PyErr_SetString(PyExc_TypeError, "shutdown_server needs a Client");
        return NULL;
    }
    ClientObject *cl = (ClientObject *)arg;
    if (!cl->c->ops->shutdown_server) {
        PyErr_SetString(PyExc_ValueError, "shutdown_server is for socket clients");
        return NULL;
    }
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN(st, cl->c->ops->shutdown_server(cl->c, &err));
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    Py_RETURN_NONE;
}

static PyObject *mod_register(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"Py4JError", "Py4JJavaError", "Py4JNetworkError",
                             "Py4JAuthenticationError", "wrappers", "gateway_module",
                             "protocol_module", "object_from_id", NULL};
    PyObject *e1, *e2, *e3, *e4, *wrappers = NULL, *gw_mod = NULL, *proto_mod = NULL;
    PyObject *from_id = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO|O!OOO:_register", kwlist, &e1, &e2, &e3,
                                     &e4, &PyDict_Type, &wrappers, &gw_mod, &proto_mod,
                                     &from_id))
        return NULL;
    if (gw_mod && proto_mod) {
        PyObject *hook = PyObject_GetAttrString(proto_mod, "get_return_value");
        if (!hook)
            return NULL;
        Py_XSETREF(p4j_reg.default_hook, hook);
        Py_XSETREF(p4j_reg.gateway_module, Py_NewRef(gw_mod));
        Py_XSETREF(p4j_reg.protocol_module, Py_NewRef(proto_mod));
    }
    if (from_id)
        Py_XSETREF(p4j_reg.object_from_id, Py_NewRef(from_id));
    Py_XSETREF(p4j_reg.Py4JError, Py_NewRef(e1));
    Py_XSETREF(p4j_reg.Py4JJavaError, Py_NewRef(e2));
    Py_XSETREF(p4j_reg.Py4JNetworkError, Py_NewRef(e3));
    Py_XSETREF(p4j_reg.Py4JAuthenticationError, Py_NewRef(e4));
    if (wrappers) {
        static const struct { const char *key; p4j_kind kind; } names[] = {
            {"list", P4J_LIST}, {"set", P4J_SET}, {"map", P4J_MAP},
            {"array", P4J_ARRAY}, {"iterator", P4J_ITERATOR},
        };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            PyObject *t = PyDict_GetItemString(wrappers, names[i].key);
            if (!t)
                continue;
            if (!PyType_Check(t) || !PyType_IsSubtype((PyTypeObject *)t, &JavaObjectType)) {
                PyErr_Format(PyExc_TypeError, "wrapper %s must subclass JavaObject", names[i].key);
                return NULL;
            }
            Py_XSETREF(p4j_reg.wrappers[names[i].kind], Py_NewRef(t));
        }
    }
    Py_RETURN_NONE;
}

static PyObject *mod_find_libjvm(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *explicit_path = NULL;
    if (!PyArg_ParseTuple(args, "|z:find_libjvm", &explicit_path))
        return NULL;
    char out[8192];
    if (!p4j_jvm_find_libjvm(explicit_path, out, sizeof out)) {
        PyErr_SetString(PyExc_FileNotFoundError, out);
        return NULL;
    }
    return PyUnicode_FromString(out);
}

/* The soft RLIMIT_STACK (None: unlimited), without importing `resource` (a module of its
 * own to load, ~0.6 ms of the first JavaGateway()). */
static PyObject *mod_stack_limit(PyObject *mod, PyObject *unused)
{
    (void)mod; (void)unused;
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    if (rl.rlim_cur == RLIM_INFINITY)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong((unsigned long long)rl.rlim_cur);
}

/* Binds org.py4jni.ClassHooks' JVMTI natives (classhooks.h), once. */
static PyObject *mod_class_hooks_install(PyObject *mod, PyObject *unused)
{
    (void)mod; (void)unused;
    p4j_error err = {0};
    p4j_status st;
    P4J_RUN(st, p4j_classhooks_install(&err));
    if (st != P4J_OK) {
        PyErr_SetString(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_RuntimeError,
                        err.message ? err.message : "py4jni: class hooks unavailable");
        p4j_error_clear(NULL, &err);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* The JVM start's time stamps (jvm.h), for perf/cold_start.py's breakdown. */
static PyObject *mod_start_times(PyObject *mod, PyObject *unused)
{
    (void)mod; (void)unused;
    const p4j_jvm_start_times *t = p4j_jvm_start_times_get();
    return Py_BuildValue("{sLsLsLsLsLsL}", "begin", t->begin, "libjvm_loaded",
                         t->libjvm_loaded, "create_called", t->create_called, "created",
                         t->created, "classes", t->classes, "ready", t->ready);
}

static PyObject *mod_member(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *owner, *name;
    if (!PyArg_ParseTuple(args, "OU:member", &owner, &name))
        return NULL;
    if (P4J_IS_JAVACLASS(owner))
        return p4jpy_member_new(owner, name, P4J_CALL_STATIC);
    if (!P4J_IS_JAVAOBJECT(owner)) {
        PyErr_SetString(PyExc_TypeError, "member() needs a JavaObject or JavaClass");
        return NULL;
    }
    return p4jpy_member_new(owner, name, 0);
}

static PyMethodDef module_methods[] = {
    {"member", mod_member, METH_VARARGS,
     "member(obj, name): the JavaMember `name` of a JavaObject (or static of a JavaClass)."},
    {"inproc_client", (PyCFunction)(void (*)(void))mod_inproc_client, METH_VARARGS | METH_KEYWORDS,
     "inproc_client(helper_jar, classpath=None, options=(), libjvm=None, check_jni=False, "
     "keep_signals=False, join=False): starts (or joins) this process's JVM and returns a "
     "Client; join=True joins the running JVM whatever its classpath and options."},
    {"socket_client", (PyCFunction)(void (*)(void))mod_socket_client, METH_VARARGS | METH_KEYWORDS,
     "socket_client(address='127.0.0.1', port=25333, auth_token=None, read_timeout=0.0, "
     "pinned=False): a Client speaking py4j's protocol to a GatewayServer, or with pinned "
     "to a ClientServer's JavaServer (a connection per thread); connects on first use."},
    {"serve_connection", (PyCFunction)(void (*)(void))mod_serve_connection,
     METH_VARARGS | METH_KEYWORDS,
     "serve_connection(client, fd, auth_token=None, read_timeout=0.0): serves socket fd "
     "(accepted from Java; closed on return) on this thread until Java closes it: Java's "
     "commands run through client.command_hook, and Java calls made meanwhile on this "
     "thread go out on fd (py4j's pinned-thread mode)."},
    {"object_ref", mod_object_ref, METH_VARARGS,
     "object_ref(client, id): a JavaObject for a known socket-mode object id ('t')."},
    {"shutdown_server", mod_shutdown_server, METH_O,
     "shutdown_server(client): asks the GatewayServer to stop, then closes the client."},
    {"_register", (PyCFunction)(void (*)(void))mod_register, METH_VARARGS | METH_KEYWORDS,
     "Registers the package's exception classes and collection wrapper types."},
    {"find_libjvm", mod_find_libjvm, METH_VARARGS,
     "find_libjvm(path=None): the libjvm.so that would be loaded (FileNotFoundError "
     "listing the places tried)."},
    {"class_hooks_install", mod_class_hooks_install, METH_NOARGS,
     "class_hooks_install(): binds org.py4jni.ClassHooks' JVMTI natives in the running JVM "
     "(once); Py4JError when the JVM refuses them."},
    {"_stack_limit", mod_stack_limit, METH_NOARGS,
     "The soft stack size limit (RLIMIT_STACK) in bytes; None when unlimited."},
    {"_start_times", mod_start_times, METH_NOARGS,
     "The JVM start's monotonic time stamps in ns (0: a step not reached)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "py4jni._py4jni",
    .m_doc = "py4jni's C core: the py4j command set in-process through JNI or over py4j's "
             "socket protocol.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__py4jni(void)
{
    PyTypeObject *types[] = {&ClientType, &JavaObjectType, &JavaClassType, &JavaMemberType,
                             &NamespaceType};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (PyType_Ready(types[i]) < 0)
            return NULL;
    if (p4j_objects_init() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
#ifdef Py_GIL_DISABLED
    /* Shared state is guarded without the GIL (see binding.h): importing the module
     * leaves a free-threaded interpreter free-threaded. */
    if (PyUnstable_Module_SetGIL(m, Py_MOD_GIL_NOT_USED) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    if (PyModule_AddObjectRef(m, "Client", (PyObject *)&ClientType) < 0 ||
        PyModule_AddObjectRef(m, "JavaObject", (PyObject *)&JavaObjectType) < 0 ||
        PyModule_AddObjectRef(m, "JavaClass", (PyObject *)&JavaClassType) < 0 ||
        PyModule_AddObjectRef(m, "JavaMember", (PyObject *)&JavaMemberType) < 0 ||
        PyModule_AddObjectRef(m, "Namespace", (PyObject *)&NamespaceType) < 0 ||
        PyModule_AddIntConstant(m, "CAP_SHARED_REFS", P4J_CAP_SHARED_REFS) < 0 ||
        PyModule_AddIntConstant(m, "CAP_CLASS_ARG", P4J_CAP_CLASS_ARG) < 0 ||
        PyModule_AddIntConstant(m, "CAP_CALLBACKS", P4J_CAP_CALLBACKS) < 0 ||
        PyModule_AddIntConstant(m, "CAP_NATIVES", P4J_CAP_NATIVES) < 0 ||
        PyModule_AddIntConstant(m, "CAP_BUFFERS", P4J_CAP_BUFFERS) < 0 ||
        PyModule_AddIntConstant(m, "CAP_TEXT_PROXIES", P4J_CAP_TEXT_PROXIES) < 0 ||
        PyModule_AddIntConstant(m, "CAP_PINNED", P4J_CAP_PINNED) < 0 ||
        PyModule_AddIntConstant(m, "CAP_LOCK_HELD", P4J_CAP_LOCK_HELD) < 0 ||
        PyModule_AddIntConstant(m, "CONN_STATE", P4J_CONN_STATE) < 0 ||
        PyModule_AddIntConstant(m, "CONN_TAKE", P4J_CONN_TAKE) < 0 ||
        PyModule_AddIntConstant(m, "CONN_PUT", P4J_CONN_PUT) < 0 ||
        PyModule_AddIntConstant(m, "CONN_PUT_LAST", P4J_CONN_PUT_LAST) < 0 ||
        PyModule_AddIntConstant(m, "CONN_CLOSE", P4J_CONN_CLOSE) < 0 ||
        PyModule_AddIntConstant(m, "CONN_RESET", P4J_CONN_RESET) < 0 ||
        PyModule_AddIntConstant(m, "CONN_DUP_FD", P4J_CONN_DUP_FD) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (p4j_arrays_init(m) < 0 || p4j_batches_init(m) < 0 || /* collections and arrays */
        p4j_buffers_init(m) < 0) {                             /* zero-copy buffers */
        Py_DECREF(m);
        return NULL;
    }
    if (p4j_callbacks_init(m) < 0) { /* proxies, Python entry point, natives */
        Py_DECREF(m);
        return NULL;
    }
    if (p4jpy_signals_init(m) < 0) { /* Ctrl-C into Java calls, SIGTERM's shutdown */
        Py_DECREF(m);
        return NULL;
    }
    if (p4j_socket_callbacks_init(m) < 0) { /* socket mode: proxies, callback codec */
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
