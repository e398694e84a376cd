/* python-binding/src/inproc/py_callbacks.c - Python objects Java calls (the hooks of
 * bridge/inproc/include/callbacks.h): py4j-style proxies, the Python entry point, and the
 * dispatch that Python-implemented natives (py_natives.c) share.
 *
 * A handle (p4j_pyhandle) holds one Python object for Java. Its count says how many
 * Java owners it has (each proxy, the entry-point slot, each native closure) plus
 * short pins taken while a proxy is being made; it changes only with the GIL held, and
 * the Python object is released when it reaches zero. Passing the same Python object
 * again reuses its live proxy (proxy_cache: id(obj) -> handle, the proxy found through a
 * JNI weak reference), so repeated passes neither leak nor create new Java objects.
 *
 * Free-threaded builds: cb_lock (a mutex) stands for the GIL over what the GIL ordered
 * here: handle counts, proxy_cache, a handle's weak proxy, the names table, the entry
 * point. It is held only around those, never across a Python or Java call.
 *
 * Threads: a callback runs on the Java thread that calls it and takes the GIL with
 * PyGILState_Ensure (Python threads that called Java released it; threads Java created
 * get a thread state for the call). Once the interpreter starts exiting, callbacks
 * throw in Java and releases leave the objects to the exiting interpreter: every entry
 * from Java goes through the gate below, which the atexit handler closes.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "binding.h"
#include "callbacks.h"
#include "jvm.h"

typedef struct p4j_pyhandle {
    PyObject *obj;          /* strong */
    ClientObject *client;   /* strong: converts arguments, tells whether it is closed */
    Py_ssize_t refs;        /* Java owners + pins; changed with the GIL held */
    void *weak;             /* jni weak ref to the last proxy made for obj, or NULL */
    void *proxy_cls;        /* its transport class cache */
    int cached;             /* listed in proxy_cache */
} p4j_pyhandle;

static PyObject *proxy_cache;      /* {id(obj): handle address} */
static PyObject *str_Java, *str_implements;
static PyObject **method_names;    /* interned names by p4j_cb_method id */
static size_t method_names_cap;
static PyObject *error_payload;    /* py4jni.inproc_mode.callbacks._error_payload, imported lazily */
static p4j_pyhandle *entry_handle; /* the Python entry point set through this module */
P4JPY_MUTEX(cb_lock);              /* free-threaded builds: see the top of this file */

#define PY4J_PROXY_PREFIX "An exception was raised by the Python Proxy. Return Message: "

/* ---------------------------------------------------------------------- gate */

/* Java threads enter Python only through the gate (p4j_python_enter, tstate_gone),
 * which mod_callbacks_exit closes at interpreter exit. A flag checked before
 * PyGILState_Ensure is not enough: a thread that passed the check can be descheduled
 * until Py_FinalizeEx has torn the interpreter down, and PyGILState_Ensure then uses
 * freed state (the Cleaner releasing a buffer crashed so). So a thread counts itself
 * in gate_entering from before its check until it holds the GIL, and gate_close, which
 * runs as an atexit handler (GIL held, interpreter intact), closes the gate and then
 * waits, with the GIL released, until that count is zero. After gate_close no Java
 * thread is between the check and the GIL, and none passes the check again.
 * A thread running a callback counts itself in gate_inside until it has fully left
 * CPython (its thread state detached), and gate_close waits up to GATE_INSIDE_WAIT_MS
 * for that count to reach zero too: in a free-threaded build, Py_FinalizeEx frees the
 * thread state of a thread that is detaching (CPython 3.13's detach_thread marks the
 * state detached and then reads tstate->interp), which crashed about 1 exit in 150
 * with four Java threads calling Python. A callback still running after the wait is left
 * like a Python daemon thread. Sequentially consistent atomics: either the closer sees a
 * thread's count or the thread sees the gate closed. */
#define GATE_INSIDE_WAIT_MS 1000
static int gate_closed;                /* atomic */
static int gate_entering;              /* atomic: threads between the check and the GIL */
static int gate_inside;                /* atomic: threads from the GIL until they left */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER; /* for gate_drained */
static pthread_cond_t gate_drained = PTHREAD_COND_INITIALIZER; /* gate_cond_init: monotonic */

/* Makes gate_drained time its waits on CLOCK_MONOTONIC (a wall-clock step at exit must
 * not stretch gate_close's bounded wait). */
static void gate_cond_init(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&gate_drained, &attr);
    pthread_condattr_destroy(&attr);
}

/* Wakes gate_close when `count` dropped to zero after the gate closed. */
static void gate_signal(int left)
{
    if (left == 0 && __atomic_load_n(&gate_closed, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&gate_lock);
        pthread_cond_broadcast(&gate_drained);
        pthread_mutex_unlock(&gate_lock);
    }
}

/* The calling thread no longer enters (it holds the GIL, or was refused). */
static void gate_done(void)
{
    gate_signal(__atomic_sub_fetch(&gate_entering, 1, __ATOMIC_SEQ_CST));
}

/* The calling thread holds the GIL (counted inside before it leaves gate_entering). */
static void gate_in(void)
{
    __atomic_add_fetch(&gate_inside, 1, __ATOMIC_SEQ_CST);
    gate_done();
}

/* The calling thread has left CPython (its thread state detached or deleted). */
static void gate_out(void)
{
    gate_signal(__atomic_sub_fetch(&gate_inside, 1, __ATOMIC_SEQ_CST));
}

/* 0: the caller may take the GIL, then calls gate_done; -1: Python is exiting. */
static int gate_pass(void)
{
    __atomic_add_fetch(&gate_entering, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&gate_closed, __ATOMIC_SEQ_CST) || p4jpy_finalizing()) {
        gate_done();
        return -1;
    }
    return 0;
}

/* Closes the gate, waits until the threads that passed it hold the GIL, then up to
 * GATE_INSIDE_WAIT_MS until the callbacks running have left CPython. GIL held
 * (released while waiting). */
static void gate_close(void)
{
    __atomic_store_n(&gate_closed, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&gate_entering, __ATOMIC_SEQ_CST) == 0 &&
        __atomic_load_n(&gate_inside, __ATOMIC_SEQ_CST) == 0)
        return;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until); /* gate_drained's clock */
    long long ns = until.tv_nsec + GATE_INSIDE_WAIT_MS * 1000000LL;
    until.tv_sec += (time_t)(ns / 1000000000LL);
    until.tv_nsec = (long)(ns % 1000000000LL);
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&gate_lock);
    while (__atomic_load_n(&gate_entering, __ATOMIC_SEQ_CST) > 0)
        pthread_cond_wait(&gate_drained, &gate_lock);
    while (__atomic_load_n(&gate_inside, __ATOMIC_SEQ_CST) > 0 &&
           pthread_cond_timedwait(&gate_drained, &gate_lock, &until) == 0) {
    }
    pthread_mutex_unlock(&gate_lock);
    Py_END_ALLOW_THREADS
}

/* A forked child has none of the parent's Java threads: none of them is entering, and
 * gate_close must not wait for one that was at the fork. */
static void gate_after_fork(void)
{
    __atomic_store_n(&gate_entering, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&gate_inside, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_init(&gate_lock, NULL);
    gate_cond_init();
}

/* ---------------------------------------------------------------------- GIL */

/* Threads Python never saw (Java's own threads, the Cleaner) keep the thread state
 * PyGILState_Ensure makes for their first callback, so later callbacks only take the
 * GIL (creating and deleting a thread state costs microseconds). The state is deleted
 * when the thread exits (tstate_key's destructor), unless Python is exiting. */
static pthread_key_t tstate_key;
static int tstate_key_ok;

static void tstate_gone(void *p)
{
    /* The JVM detached this Java thread before its exit: objects the clearing below frees
     * release their Java references through a fresh attachment, not the stale env. */
    p4j_jvm_forget_env();
    if (gate_pass() < 0)
        return; /* the exiting interpreter frees its thread states */
    PyEval_RestoreThread((PyThreadState *)p);
    gate_in();
    PyThreadState_Clear((PyThreadState *)p);
    PyThreadState_DeleteCurrent();
    gate_out();
}

int p4j_python_enter(p4j_gil *g)
{
    if (gate_pass() < 0)
        return -1;
    g->st = PyGILState_UNLOCKED;
    g->kept = tstate_key_ok && PyGILState_GetThisThreadState() == NULL;
    if (g->kept) {
        PyGILState_Ensure(); /* never released: the state stays for the thread's life */
        pthread_setspecific(tstate_key, PyThreadState_Get());
    } else {
        g->st = PyGILState_Ensure();
    }
    gate_in();
    return 0;
}

void p4j_python_leave(p4j_gil *g)
{
    if (g->kept)
        PyEval_SaveThread(); /* releases the GIL, keeps the thread state */
    else
        PyGILState_Release(g->st);
    gate_out();
}

/* ------------------------------------------------------------------ handles */

/* A new handle on `obj` with no count. GIL held. */
static p4j_pyhandle *handle_new(ClientObject *cl, PyObject *obj)
{
    p4j_pyhandle *h = PyMem_RawCalloc(1, sizeof *h);
    if (!h) {
        PyErr_NoMemory();
        return NULL;
    }
    h->obj = Py_NewRef(obj);
    h->client = (ClientObject *)Py_NewRef((PyObject *)cl);
    return h;
}

/* Frees `h` (its count reached zero). GIL held; keeps any pending exception. */
static void handle_free(p4j_pyhandle *h)
{
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (h->cached && proxy_cache) {
        PyObject *key = PyLong_FromVoidPtr(h->obj);
        PyObject *cur = key ? PyDict_GetItemWithError(proxy_cache, key) : NULL;
        if (cur && PyLong_AsVoidPtr(cur) == (void *)h)
            PyDict_DelItem(proxy_cache, key);
        Py_XDECREF(key);
        PyErr_Clear();
    }
    p4j_cb_weak_delete(h->weak);
    Py_DECREF(h->obj);
    Py_DECREF((PyObject *)h->client);
    PyMem_RawFree(h);
    PyErr_Restore(et, ev, tb);
}

/* Gives one count back. GIL held. */
static void handle_unref(p4j_pyhandle *h)
{
#ifdef Py_GIL_DISABLED
    /* The last count leaves proxy_cache under the lock, so that no lookup finds it. */
    P4JPY_MUTEX_LOCK(cb_lock);
    Py_ssize_t left = --h->refs;
    if (left == 0 && h->cached) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyObject *key = PyLong_FromVoidPtr(h->obj);
        PyObject *cur = key ? PyDict_GetItemWithError(proxy_cache, key) : NULL;
        if (cur && PyLong_AsVoidPtr(cur) == (void *)h)
            PyDict_DelItem(proxy_cache, key);
        Py_XDECREF(key);
        PyErr_Clear();
        PyErr_Restore(et, ev, tb);
        h->cached = 0;
    }
    P4JPY_MUTEX_UNLOCK(cb_lock);
    if (left == 0)
        handle_free(h);
#else
    if (--h->refs == 0)
        handle_free(h);
#endif
}

/* Takes one count. GIL held. */
static void handle_ref(p4j_pyhandle *h)
{
    P4JPY_MUTEX_LOCK(cb_lock);
    h->refs++;
    P4JPY_MUTEX_UNLOCK(cb_lock);
}

static void hook_retain(void *target)
{
    p4j_gil g;
    if (p4j_python_enter(&g) < 0)
        return;
    handle_ref(target);
    p4j_python_leave(&g);
}

static void hook_release(void *target)
{
    p4j_gil g;
    if (p4j_python_enter(&g) < 0)
        return; /* the exiting interpreter owns what is left */
    handle_unref(target);
    p4j_python_leave(&g);
}

/* ------------------------------------------------------------------ invoke */

#ifdef Py_GIL_DISABLED
static PyObject *method_name_locked(const p4j_cb_method *m);
#endif

/* The interned Python name of method `m` (borrowed: names are never dropped), NULL with
 * an exception. */
static PyObject *method_name(const p4j_cb_method *m)
{
#ifdef Py_GIL_DISABLED
    P4JPY_MUTEX_LOCK(cb_lock);
    PyObject *name = method_name_locked(m);
    P4JPY_MUTEX_UNLOCK(cb_lock);
    return name;
}

/* method_name with cb_lock held (free-threaded builds). */
static PyObject *method_name_locked(const p4j_cb_method *m)
{
#endif
    size_t id = (size_t)m->id;
    if (id < method_names_cap && method_names[id])
        return method_names[id];
    if (id >= method_names_cap) {
        size_t cap = method_names_cap ? method_names_cap : 64;
        while (cap <= id)
            cap *= 2;
        PyObject **grown = PyMem_Realloc(method_names, cap * sizeof *grown);
        if (!grown) {
            PyErr_NoMemory();
            return NULL;
        }
        memset(grown + method_names_cap, 0, (cap - method_names_cap) * sizeof *grown);
        method_names = grown;
        method_names_cap = cap;
    }
    PyObject *name = PyUnicode_DecodeUTF8(m->name, (Py_ssize_t)m->name_len, "surrogatepass");
    if (!name)
        return NULL;
    PyUnicode_InternInPlace(&name);
    method_names[id] = name;
    return name;
}

/* Converts one callback argument into a new Python object (consuming its ref). */
static PyObject *arg_to_py(ClientObject *cl, p4j_value *v)
{
    if (v->kind == P4J_PROXY)
        return Py_NewRef(((p4j_pyhandle *)v->u.proxy)->obj);
    return p4j_value_to_py(cl, v);
}

int p4j_base_pending_any;
/* The KeyboardInterrupt / SystemExit a callback on this thread raised, kept for the
 * Python code below the Java call (GIL held to touch it). */
static __thread PyObject *base_pending;

/* Keeps exception `ev` (borrowed) of type `et` for this thread's Python caller when it
 * is a KeyboardInterrupt or SystemExit and the thread has one (threads Java made have
 * no Python frame below the callback: for them Java's exception is all there is). */
static void base_keep(PyObject *et, PyObject *ev)
{
    if (!ev || !PyEval_GetFrame() ||
        !(PyErr_GivenExceptionMatches(et, PyExc_KeyboardInterrupt) ||
          PyErr_GivenExceptionMatches(et, PyExc_SystemExit)))
        return;
    if (!base_pending)
        __atomic_add_fetch(&p4j_base_pending_any, 1, __ATOMIC_RELAXED);
    Py_XSETREF(base_pending, Py_NewRef(ev));
}

int p4j_base_here(void) { return base_pending != NULL; }

PyObject *p4j_base_rethrow(PyObject *result)
{
    PyObject *exc = base_pending;
    if (!exc)
        return result;
    base_pending = NULL;
    __atomic_sub_fetch(&p4j_base_pending_any, 1, __ATOMIC_RELAXED);
    Py_XDECREF(result);
    PyErr_Clear();
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
    return NULL;
}

/* What Java throws for the pending Python exception: py4j's Py4JException message with
 * the traceback text, or (propagate_java_exceptions) the Java exception itself. */
static p4j_status python_failed(ClientObject *cl, p4j_error *err)
{
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    if (ev && tb)
        PyException_SetTraceback(ev, tb);
    base_keep(et, ev);
    PyObject *payload = NULL;
    if (!P4JPY_LOAD(error_payload)) { /* two threads may both import: one is kept */
        PyObject *mod = PyImport_ImportModule("py4jni.inproc_mode.callbacks");
        if (mod) {
            PyObject *fn = PyObject_GetAttrString(mod, "_error_payload");
            Py_DECREF(mod);
            P4JPY_MUTEX_LOCK(cb_lock);
            if (!error_payload)
                error_payload = Py_XNewRef(fn);
            P4JPY_MUTEX_UNLOCK(cb_lock);
            Py_XDECREF(fn);
        }
    }
    if (error_payload && ev)
        payload = PyObject_CallFunctionObjArgs(error_payload, (PyObject *)cl, ev, NULL);
    p4j_status st = P4J_ERROR;
    p4j_ref thrown; /* pinned: a detach on another thread meanwhile waits for the dup */
    if (payload && P4J_IS_JAVAOBJECT(payload) && p4jpy_pin_copy((JavaObject *)payload, &thrown)) {
        p4j_ref dup;
        p4j_error derr = {0};
        p4j_status dst = cl->c->ops->dup(cl->c, &thrown, &dup, &derr);
        p4j_unpin((JavaObject *)payload);
        if (dst == P4J_OK) {
            err->kind = P4J_ERR_JAVA;
            err->throwable = dup;
            free(err->message);
            err->message = strdup("propagated Java exception");
        } else {
            p4j_error_set(err, P4J_ERR_BRIDGE, "%s", derr.message ? derr.message : "");
        }
        p4j_error_clear(NULL, &derr);
    } else if (payload && PyUnicode_Check(payload)) {
        p4j_error_set(err, P4J_ERR_BRIDGE, PY4J_PROXY_PREFIX "%s", PyUnicode_AsUTF8(payload));
    } else { /* formatting failed (deep recursion, exiting): name the exception at least */
        PyErr_Clear();
        PyObject *text = ev ? PyObject_Str(ev) : NULL;
        const char *t = text ? PyUnicode_AsUTF8(text) : NULL;
        PyErr_Clear();
        p4j_error_set(err, P4J_ERR_BRIDGE, PY4J_PROXY_PREFIX "Traceback unavailable\n%s: %s\n",
                      et ? ((PyTypeObject *)et)->tp_name : "Exception", t ? t : "");
        Py_XDECREF(text);
    }
    PyErr_Clear();
    Py_XDECREF(payload);
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
    return st;
}

/* Converts Python result `res` of `m` to the Java return value. */
static p4j_status return_value(ClientObject *cl, p4j_pyhandle *h, const p4j_cb_method *m,
                               PyObject *res, p4j_cb_call *call, p4j_error *err)
{
    if (m->ret == 'V')
        return P4J_OK; /* py4j ignores what a void method returns */
    p4j_argpack pack;
    if (p4j_args_from_py(cl, &res, 1, &pack) < 0) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyObject *text = ev ? PyObject_Str(ev) : NULL;
        PyErr_Clear();
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: Python %s %s.%s returned a %s that "
                      "cannot be converted to Java: %s",
                      (m->flags & P4J_CB_CALL_TARGET) ? "callable for native" : "method",
                      (m->flags & P4J_CB_CALL_TARGET) ? "" : Py_TYPE(h->obj)->tp_name,
                      m->name, Py_TYPE(res)->tp_name,
                      text && PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : "?");
        PyErr_Clear();
        Py_XDECREF(text);
        Py_XDECREF(et);
        Py_XDECREF(ev);
        Py_XDECREF(tb);
        return P4J_ERROR;
    }
    p4j_status st = p4j_cb_return(call, &pack.vals[0], err);
    if (st != P4J_OK && err->kind == P4J_ERR_BRIDGE) {
        PyObject *r = PyObject_Repr(res);
        const char *rs = r ? PyUnicode_AsUTF8(r) : NULL;
        PyErr_Clear();
        char *why = err->message;
        err->message = NULL;
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: Python %s %s%s%s%s returned %.200s (%s): %s",
                      (m->flags & P4J_CB_CALL_TARGET) ? "callable for native" : "method",
                      (m->flags & P4J_CB_CALL_TARGET) ? "" : Py_TYPE(h->obj)->tp_name,
                      (m->flags & P4J_CB_CALL_TARGET) ? "" : ".", m->name, m->sig,
                      rs ? rs : "?", Py_TYPE(res)->tp_name, why ? why : "");
        free(why);
        Py_XDECREF(r);
    }
    p4j_args_release(&pack);
    return st;
}

static p4j_status invoke_locked(p4j_pyhandle *h, const p4j_cb_method *m, p4j_value *args,
                                size_t nargs, p4j_cb_call *call, p4j_error *err)
{
    ClientObject *cl = h->client;
    if (cl->c->closed)
        return p4j_error_set(err, P4J_ERR_CLOSED,
                             "py4jni: cannot call Python %s: the gateway has been shut down",
                             m->name);
    /* buf[0] is scratch for PY_VECTORCALL_ARGUMENTS_OFFSET, buf[1] the receiver. */
    PyObject *buf[2 + P4J_CB_MAX_ARGS + 1];
    PyObject **stack = buf + 1;
    size_t got = 0;
    p4j_status st = P4J_ERROR;
    PyObject *res = NULL;
    stack[0] = h->obj;
    for (; got < nargs; got++) {
        if (!(stack[1 + got] = arg_to_py(cl, &args[got])))
            goto done;
    }
    size_t nf = nargs | PY_VECTORCALL_ARGUMENTS_OFFSET;
    if (m->flags & P4J_CB_CALL_TARGET) {
        res = PyObject_Vectorcall(h->obj, stack + 1, nf, NULL);
    } else {
        PyObject *name = method_name(m);
        if (!name)
            goto done;
        if (m->flags & P4J_CB_HAS_DEFAULT) { /* Java has a fallback: look before calling */
            PyObject *meth = NULL;
#if PY_VERSION_HEX >= 0x030D0000
            int found = PyObject_GetOptionalAttr(h->obj, name, &meth);
#else
            int found = _PyObject_LookupAttr(h->obj, name, &meth);
#endif
            if (found < 0)
                goto done;
            if (!found) {
                if (m->flags & P4J_CB_TO_STRING) {
                    res = PyObject_Str(h->obj);
                } else {
                    p4j_cb_return_default(call);
                    st = P4J_OK;
                    goto done;
                }
            } else {
                res = PyObject_Vectorcall(meth, stack + 1, nf, NULL);
                Py_DECREF(meth);
            }
        } else {
            res = PyObject_VectorcallMethod(name, stack, (1 + nargs) | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                            NULL);
        }
    }
    if (res)
        st = return_value(cl, h, m, res, call, err);
done:
    if (st != P4J_OK && PyErr_Occurred())
        python_failed(cl, err);
    Py_XDECREF(res);
    for (size_t i = 0; i < got; i++)
        Py_DECREF(stack[1 + i]);
    return st;
}

static p4j_status hook_invoke(void *target, const p4j_cb_method *m, p4j_value *args,
                              size_t nargs, p4j_cb_call *call, p4j_error *err)
{
    p4j_gil g;
    if (p4j_python_enter(&g) < 0)
        return p4j_error_set(err, P4J_ERR_CLOSED,
                             "py4jni: cannot call Python %s: the Python interpreter is exiting",
                             m->name);
    p4j_status st = invoke_locked(target, m, args, nargs, call, err);
    p4j_python_leave(&g);
    return st;
}

static const p4j_cb_hooks hooks = {
    .invoke = hook_invoke,
    .retain = hook_retain,
    .release = hook_release,
};

/* ------------------------------------------------------------------ proxies */

/* Makes (or reuses) the Java proxy of `o` whose class lists `seq` (a fast sequence of
 * interface names); *out is a new JavaObject. Returns 0 or -1 with an exception. */
static int proxy_make(ClientObject *cl, PyObject *o, PyObject *key, p4j_pyhandle *h,
                      PyObject *seq, PyObject **out)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const char **names = PyMem_Calloc((size_t)n + 1, sizeof *names);
    if (!names) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        Py_ssize_t len = 0;
        if (!PyUnicode_Check(item) || !(names[i] = PyUnicode_AsUTF8AndSize(item, &len)) ||
            strlen(names[i]) != (size_t)len) { /* a NUL would end the name early in C */
            if (!PyErr_Occurred())
                PyErr_Format(p4j_reg.Py4JError,
                             "py4jni: %.100s.Java.implements must list interface names "
                             "(str without NUL), not %R", Py_TYPE(o)->tp_name, item);
            PyMem_Free(names);
            return -1;
        }
    }
    if (!h || h->client != cl || h->obj != o) {
        if (!(h = handle_new(cl, o))) {
            PyMem_Free(names);
            return -1;
        }
        PyObject *addr = PyLong_FromVoidPtr(h);
        P4JPY_MUTEX_LOCK(cb_lock);
        int rc = addr ? PyDict_SetItem(proxy_cache, key, addr) : -1;
        h->cached = rc == 0;
        P4JPY_MUTEX_UNLOCK(cb_lock);
        if (rc < 0) {
            Py_XDECREF(addr);
            PyMem_Free(names);
            handle_free(h);
            return -1;
        }
        Py_DECREF(addr);
    }
    p4j_ref ref = {NULL, NULL};
    void *weak = NULL;
    p4j_error err = {0};
    p4j_status st;
    const char *tname = Py_TYPE(o)->tp_name;
    handle_ref(h); /* pinned while Java runs without the GIL */
    Py_BEGIN_ALLOW_THREADS
    st = p4j_cb_proxy_new(h, names, (size_t)n, tname, &ref, &weak, &err);
    Py_END_ALLOW_THREADS
    PyMem_Free(names);
    if (st == P4J_OK) {
        P4JPY_MUTEX_LOCK(cb_lock);
        void *old = h->weak;
        h->weak = weak;
        h->proxy_cls = ref.cls;
        P4JPY_MUTEX_UNLOCK(cb_lock);
        p4j_cb_weak_delete(old);
    }
    handle_unref(h); /* frees it when no proxy was made */
    if (st != P4J_OK) {
        p4j_raise(cl, &err, NULL);
        return -1;
    }
    *out = p4j_wrap_ref(cl, P4J_REF, &ref);
    return *out ? 0 : -1;
}

static int proxy_for_new(ClientObject *cl, PyObject *o, PyObject *key, p4j_pyhandle *h,
                         PyObject **out);

int p4j_proxy_for(ClientObject *cl, PyObject *o, PyObject **out)
{
    *out = NULL;
    if (!str_Java || !_PyType_Lookup(Py_TYPE(o), str_Java) || !p4jpy_has_cap(cl, P4J_CAP_CALLBACKS))
        return 0;
    if (p4j_check_open(cl) < 0)
        return -1;
    PyObject *key = PyLong_FromVoidPtr(o);
    if (!key)
        return -1;
#ifdef Py_GIL_DISABLED
    /* Under cb_lock: the handle found is pinned (it may not be freed meanwhile), its
     * weak proxy read while no other thread replaces it. */
    p4j_ref ref;
    int alive = 0;
    P4JPY_MUTEX_LOCK(cb_lock);
    PyObject *addr = PyDict_GetItemWithError(proxy_cache, key);
    p4j_pyhandle *h = addr ? PyLong_AsVoidPtr(addr) : NULL;
    if (h && h->refs > 0) {
        h->refs++;
        alive = h->client == cl && h->obj == o && h->weak && p4j_cb_weak_get(h->weak, &ref);
        if (alive)
            ref.cls = h->proxy_cls;
    } else {
        h = NULL;
    }
    P4JPY_MUTEX_UNLOCK(cb_lock);
    if (!addr && PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    if (alive) { /* its proxy is alive: the same Java object */
        Py_DECREF(key);
        handle_unref(h);
        *out = p4j_wrap_ref(cl, P4J_REF, &ref);
        return *out ? 1 : -1;
    }
    int rc = proxy_for_new(cl, o, key, h, out);
    if (h)
        handle_unref(h);
    return rc;
#else
    PyObject *addr = PyDict_GetItemWithError(proxy_cache, key);
    p4j_pyhandle *h = addr ? PyLong_AsVoidPtr(addr) : NULL;
    if (!addr && PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    if (h && h->client == cl && h->obj == o && h->weak) {
        p4j_ref ref;
        if (p4j_cb_weak_get(h->weak, &ref)) { /* its proxy is alive: the same Java object */
            Py_DECREF(key);
            ref.cls = h->proxy_cls;
            *out = p4j_wrap_ref(cl, P4J_REF, &ref);
            return *out ? 1 : -1;
        }
    }
    return proxy_for_new(cl, o, key, h, out);
#endif
}

/* p4j_proxy_for without a live proxy: `o`'s `Java.implements`, then proxy_make (h: the
 * handle found for key, or NULL). Consumes `key`. */
static int proxy_for_new(ClientObject *cl, PyObject *o, PyObject *key, p4j_pyhandle *h,
                         PyObject **out)
{
    /* py4j's test: a `Java` attribute whose `implements` is a non-empty sequence. */
    PyObject *java = PyObject_GetAttr(o, str_Java);
    PyObject *impl = java ? PyObject_GetAttr(java, str_implements) : NULL;
    Py_XDECREF(java);
    if (impl && PyUnicode_Check(impl)) { /* its characters are no interface names */
        PyErr_Format(p4j_reg.Py4JError, "py4jni: %.100s.Java.implements must be a list of "
                     "interface names, not a str (%R)", Py_TYPE(o)->tp_name, impl);
        Py_DECREF(impl);
        Py_DECREF(key);
        return -1;
    }
    /* a tuple of its own: the names are read from its str items while Java makes the
     * proxy, and another thread may change the object's list meanwhile */
    PyObject *seq = impl ? PySequence_Tuple(impl) : NULL;
    Py_XDECREF(impl);
    if (!seq || PySequence_Fast_GET_SIZE(seq) == 0) {
        PyErr_Clear();
        Py_XDECREF(seq);
        Py_DECREF(key);
        return 0; /* not a proxy: other converters may take it */
    }
    int rc = proxy_make(cl, o, key, h, seq, out);
    Py_DECREF(seq);
    Py_DECREF(key);
    return rc < 0 ? -1 : 1;
}

/* p4j_proxy_unwrap's taking of a proxy's Python object (out of line, so that the common
 * case, no proxy, saves no registers). */
static __attribute__((noinline)) PyObject *proxy_take(ClientObject *cl, p4j_value *v,
                                                      p4j_pyhandle *h)
{
    PyObject *o = Py_NewRef(h->obj);
    cl->c->ops->release(cl->c, &v->ref);
    p4j_value_clear(v);
    return o;
}

PyObject *p4j_proxy_unwrap(ClientObject *cl, p4j_value *v)
{
    if (!v->ref.cls || !p4jpy_has_cap(cl, P4J_CAP_CALLBACKS))
        return NULL;
    p4j_pyhandle *h = p4j_cb_proxy_target(&v->ref);
    return h ? proxy_take(cl, v, h) : NULL;
}

/* -------------------------------------------------------- module functions */

static int client_arg(PyObject *o, ClientObject **cl)
{
    if (!PyObject_TypeCheck(o, &ClientType)) {
        PyErr_SetString(PyExc_TypeError, "expected a py4jni Client");
        return -1;
    }
    *cl = (ClientObject *)o;
    if (!p4jpy_has_cap(*cl, P4J_CAP_CALLBACKS)) {
        PyErr_SetString(p4j_reg.Py4JError,
                        "py4jni: this needs the in-process gateway (socket-mode callbacks go "
                        "through py4j's callback server)");
        return -1;
    }
    return p4j_check_open(*cl);
}

static PyObject *mod_set_entry_point(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *clo, *obj;
    ClientObject *cl;
    if (!PyArg_ParseTuple(args, "OO:set_python_entry_point", &clo, &obj) ||
        client_arg(clo, &cl) < 0)
        return NULL;
    p4j_error err = {0};
    p4j_status st;
    if (obj == Py_None) { /* clear the entry point if this client set it */
        P4JPY_MUTEX_LOCK(cb_lock);
        p4j_pyhandle *h = entry_handle;
        if (h && h->client == cl) {
            entry_handle = NULL;
            h->refs++;
        } else {
            h = NULL;
        }
        P4JPY_MUTEX_UNLOCK(cb_lock);
        if (!h)
            Py_RETURN_NONE;
        Py_BEGIN_ALLOW_THREADS
        st = p4j_cb_entry_point_set(h, true, &err);
        Py_END_ALLOW_THREADS
        handle_unref(h);
    } else {
        p4j_pyhandle *h = handle_new(cl, obj);
        if (!h)
            return NULL;
        h->refs++;
        Py_BEGIN_ALLOW_THREADS
        st = p4j_cb_entry_point_set(h, false, &err);
        Py_END_ALLOW_THREADS
        if (st == P4J_OK)
            P4JPY_STORE(entry_handle, h);
        handle_unref(h);
    }
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    Py_RETURN_NONE;
}

static PyObject *mod_proxy_stats(PyObject *mod, PyObject *unused)
{
    (void)mod; (void)unused;
    return PyLong_FromSsize_t(proxy_cache ? PyDict_Size(proxy_cache) : 0);
}

static volatile int java_exiting; /* on_java_exit runs: Python is not finalised */

static PyObject *mod_callbacks_exit(PyObject *mod, PyObject *unused)
{
    (void)mod; (void)unused;
    if (__atomic_load_n(&java_exiting, __ATOMIC_ACQUIRE))
        Py_RETURN_NONE; /* Java's other shutdown hooks may still call Python */
    p4jpy_exit_begin(); /* before callbacks fail: see binding.h */
    p4j_cb_disable();
    gate_close();
    Py_RETURN_NONE;
}

/* Java is ending the process (System.exit, called on a shutdown-hook thread while the
 * exiting thread waits): runs Python's atexit handlers and flushes sys.stdout/stderr
 * before the JVM halts. The process then exits with Java's status, without the rest
 * of Python's finalisation. */
static void on_java_exit(void)
{
    p4j_gil g;
    if (p4j_python_enter(&g) < 0)
        return;
    __atomic_store_n(&java_exiting, 1, __ATOMIC_RELEASE);
    PyObject *atexit = PyImport_ImportModule("atexit");
    PyObject *r = atexit ? PyObject_CallMethod(atexit, "_run_exitfuncs", NULL) : NULL;
    if (!r)
        PyErr_WriteUnraisable(NULL);
    Py_XDECREF(r);
    Py_XDECREF(atexit);
    const char *names[] = {"stderr", "stdout"};
    for (size_t i = 0; i < 2; i++) {
        PyObject *f = PySys_GetObject(names[i]); /* borrowed */
        PyObject *fr = f && f != Py_None ? PyObject_CallMethod(f, "flush", NULL) : NULL;
        Py_XDECREF(fr);
        PyErr_Clear();
    }
    p4j_python_leave(&g);
}

static PyMethodDef exit_def = {"_callbacks_exit", mod_callbacks_exit, METH_NOARGS,
                               "Stops Java from calling Python (run at interpreter exit)."};

/* Used by py_natives.c. */
void *p4j_handle_new_owned(ClientObject *cl, PyObject *obj);
void p4j_handle_drop(void *h);

void *p4j_handle_new_owned(ClientObject *cl, PyObject *obj)
{
    p4j_pyhandle *h = handle_new(cl, obj);
    if (h)
        h->refs = 1;
    return h;
}

void p4j_handle_drop(void *h) { handle_unref(h); }

PyMethodDef p4j_callback_methods[] = {
    {"set_python_entry_point", mod_set_entry_point, METH_VARARGS,
     "set_python_entry_point(client, obj): Java's org.py4jni.PythonEntryPoint.get(Class[]) "
     "then returns `obj` as a proxy; None clears it if this client set it."},
    {"proxy_cache_size", mod_proxy_stats, METH_NOARGS,
     "Python objects that currently have a Java proxy (tests: no leak)."},
    {NULL, NULL, 0, NULL},
};

extern PyMethodDef p4j_native_methods[];

int p4j_callbacks_init(PyObject *module)
{
    if (PyModule_AddFunctions(module, p4j_callback_methods) < 0 ||
        PyModule_AddFunctions(module, p4j_native_methods) < 0)
        return -1;
    if (!(proxy_cache = PyDict_New()) || !(str_Java = PyUnicode_InternFromString("Java")) ||
        !(str_implements = PyUnicode_InternFromString("implements")))
        return -1;
    tstate_key_ok = pthread_key_create(&tstate_key, tstate_gone) == 0;
    gate_cond_init();
    if (pthread_atfork(NULL, NULL, gate_after_fork) != 0) {
        PyErr_SetString(PyExc_OSError, "py4jni: pthread_atfork failed");
        return -1;
    }
    p4j_cb_install(&hooks);
    p4j_jvm_on_java_exit(on_java_exit);
    /* Stop callbacks before the interpreter tears down (Java threads may outlive it). */
    return p4j_atexit_register(&exit_def);
}

int p4j_atexit_register(PyMethodDef *def)
{
    PyObject *fn = PyCFunction_New(def, NULL);
    PyObject *atexit = fn ? PyImport_ImportModule("atexit") : NULL;
    PyObject *r = atexit ? PyObject_CallMethod(atexit, "register", "O", fn) : NULL;
    Py_XDECREF(fn);
    Py_XDECREF(atexit);
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

