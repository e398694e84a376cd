/* python-binding/src/interrupts.c - the binding's side of Ctrl-C into Java calls
 * (process signals, jni/include/jvm_signals.h; py4j's Signal, a receiver mechanism, is
 * py4jni/signals.py): which thread is Python's main thread (the one that runs
 * signal handlers), the Java call window around the GIL release of the in-process
 * client's calls (where a thread coming back while Python exits waits for the
 * interpreter to stop it), and the pending Python handlers run before a Java call that
 * may wait and before a Java error is raised. Python's signal.signal tells the C side about
 * every change through _signal_changed (py4jni/_os_signals.py).
 */
#include <stdint.h>
#include <time.h>

#include "binding.h"
#include "jvm_signals.h"

static PyThreadState *main_ts;   /* the main thread's state once seen; written there only */
static unsigned long main_ident; /* its thread ident (set by _signals_install) */
static int main_known;           /* main_ident is set */

/* Whether `ts` (the calling thread's state) is the main thread's; records it when first
 * seen. Any thread, with or without the GIL. */
static inline bool is_main(PyThreadState *ts)
{
    PyThreadState *m = __atomic_load_n(&main_ts, __ATOMIC_RELAXED);
    if (m)
        return ts == m;
    if (!__atomic_load_n(&main_known, __ATOMIC_ACQUIRE) ||
        PyThread_get_thread_ident() != main_ident)
        return false;
    __atomic_store_n(&main_ts, ts, __ATOMIC_RELAXED);
    return true;
}

/* The saved thread state, a low bit set when the call window was entered, saying how
 * (thread states are aligned; the transport passes `saved` back unread). */
#define ENTERED_INTERRUPTIBLE 1u
#define ENTERED_PLAIN 2u
#define ENTERED (ENTERED_INTERRUPTIBLE | ENTERED_PLAIN)

static inline void *unlock_as(bool interruptible)
{
    PyThreadState *ts = PyEval_SaveThread();
    if (__builtin_expect(!is_main(ts), 1))
        return ts;
    p4j_signals_enter(interruptible);
    return (void *)((uintptr_t)ts | (interruptible ? ENTERED_INTERRUPTIBLE : ENTERED_PLAIN));
}

void *p4jpy_unlock_interruptible(void) { return unlock_as(true); }
void *p4jpy_unlock_plain(void) { return unlock_as(false); }

/* The thread that began the exit (p4jpy_exit_begin), or NULL. */
static PyThreadState *exit_ts;

void p4jpy_exit_begin(void)
{
    __atomic_store_n(&exit_ts, PyThreadState_Get(), __ATOMIC_RELAXED);
}

/* Without the GIL: waits until the interpreter is finalising, at most P4JPY_EXIT_PARK_MS
 * (an atexit handler that runs later may join this thread). */
static void park_until_finalizing(void)
{
    const struct timespec tick = {0, 1000000};
    for (int ms = 0; ms < P4JPY_EXIT_PARK_MS && !p4jpy_finalizing(); ms++)
        nanosleep(&tick, NULL);
}

void p4jpy_relock(void *saved)
{
    uintptr_t s = (uintptr_t)saved;
    if (__builtin_expect(s & ENTERED, 0))
        p4j_signals_leave(s & ENTERED_INTERRUPTIBLE);
    PyThreadState *ts = (PyThreadState *)(s & ~(uintptr_t)ENTERED);
    PyThreadState *exiting = __atomic_load_n(&exit_ts, __ATOMIC_RELAXED);
    if (__builtin_expect(exiting != NULL, 0) && ts != exiting)
        park_until_finalizing();
    PyEval_RestoreThread(ts);
}

int p4jpy_signals_run_handlers(void)
{
    if (!is_main(PyThreadState_Get()))
        return 0; /* p4j_signals_owed stays for the main thread */
    __atomic_store_n(&p4j_signals_owed, 0, __ATOMIC_SEQ_CST);
    return PyErr_CheckSignals();
}

/* ---- Ctrl-C during a socket wait ----------------------------------------------- */

/* Why this thread's socket waits were abandoned (a signal handler's exception, or the
 * KeyboardInterrupt / SystemExit a pinned-thread callback raised), until raised
 * (intr_exc); once raised inside a callback, kept for the waits below it (intr_below).
 * GIL held to touch either. */
static __thread PyObject *intr_exc;
static __thread PyObject *intr_below;
__thread int p4jpy_command_depth;

/* Restores exception `exc` (stolen) as the current one. */
static void restore_exc(PyObject *exc)
{
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
}

/* A pending call (main thread): raises the kept exception nobody raised yet. */
static int raise_kept(void *arg)
{
    (void)arg;
    PyObject *exc = intr_exc;
    if (!exc)
        return 0;
    intr_exc = NULL;
    restore_exc(exc);
    return -1;
}

void p4jpy_interrupt_keep(void)
{
    PyObject *xt, *xv, *xtb;
    PyErr_Fetch(&xt, &xv, &xtb);
    PyErr_NormalizeException(&xt, &xv, &xtb);
    if (xv && xtb)
        PyException_SetTraceback(xv, xtb);
    Py_XDECREF(xt);
    Py_XDECREF(xtb);
    if (!xv)
        return;
    bool queued = intr_exc != NULL;
    Py_XSETREF(intr_exc, xv);
    if (!queued) /* raised by whoever waits below, else at the next bytecode */
        Py_AddPendingCall(raise_kept, NULL);
}

int p4jpy_socket_interrupted(void *ctx)
{
    (void)ctx;
    p4j_gil g;
    if (p4j_python_enter(&g) < 0)
        return 0; /* Python is exiting: no handler runs any more */
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb); /* a release from a destructor may run while one unwinds */
    int stop = 0;
    int rc = __atomic_load_n(&main_known, __ATOMIC_ACQUIRE) ? p4jpy_signals_run_handlers()
                                                            : PyErr_CheckSignals();
    if (rc < 0) {
        p4jpy_interrupt_keep();
        stop = intr_exc != NULL;
    }
    PyErr_Restore(et, ev, tb);
    p4j_python_leave(&g);
    return stop;
}

int p4jpy_interrupt_raise(void)
{
    PyObject *exc = intr_exc ? intr_exc : intr_below; /* owned by its slot */
    if (!exc)
        return 0;
    if (exc == intr_exc)
        intr_exc = NULL;
    else
        intr_below = NULL;
    if (p4jpy_command_depth > 0) /* the waits below this callback raise it too */
        Py_XSETREF(intr_below, Py_NewRef(exc));
    else /* the outermost call: nothing waits below */
        Py_CLEAR(intr_below);
    restore_exc(exc);
    return 1;
}

/* Records `ident` as the main thread's (once; 0: unknown yet). */
static void main_is(unsigned long ident)
{
    if (ident && !__atomic_load_n(&main_known, __ATOMIC_ACQUIRE)) {
        main_ident = ident;
        __atomic_store_n(&main_known, 1, __ATOMIC_RELEASE);
    }
}

/* _signals_install(main_ident): the JVM runs with -Xrs; `main_ident` is Python's main
 * thread (threading.main_thread().ident), 0 when not known. */
static PyObject *mod_signals_install(PyObject *mod, PyObject *arg)
{
    (void)mod;
    unsigned long ident = PyLong_AsUnsignedLong(arg);
    if (ident == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    p4j_error err = {0};
    if (p4j_signals_install(&err) != P4J_OK) {
        PyErr_SetString(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_RuntimeError,
                        err.message ? err.message : "py4jni: cannot install signal handlers");
        p4j_error_clear(NULL, &err);
        return NULL;
    }
    main_is(ident); /* only now: is_main (and the call window) needs the helper */
    Py_RETURN_NONE;
}

/* _signal_changed(signalnum, ident): signal.signal changed this signal's disposition,
 * on the thread `ident` (the main thread: signal.signal works nowhere else). */
static PyObject *mod_signal_changed(PyObject *mod, PyObject *args)
{
    (void)mod;
    int sig;
    unsigned long ident;
    if (!PyArg_ParseTuple(args, "ik:_signal_changed", &sig, &ident))
        return NULL;
    if (p4j_signals_active())
        main_is(ident);
    p4j_signals_rearm(sig);
    Py_RETURN_NONE;
}

/* _jsig_adopt(signalnum, how): the program changed this signal's handler (how: 0
 * signal.signal or faulthandler.enable done, 1 faulthandler.enable about to run, 2
 * faulthandler.disable done); HotSpot's fault handlers stay first (jni/jsig.c). */
static PyObject *mod_jsig_adopt(PyObject *mod, PyObject *args)
{
    (void)mod;
    int sig, how;
    if (!PyArg_ParseTuple(args, "ii:_jsig_adopt", &sig, &how))
        return NULL;
    if (how < P4J_JSIG_CHANGED || how > P4J_JSIG_AFTER_FAULTHANDLER) {
        PyErr_SetString(PyExc_ValueError, "_jsig_adopt: how is 0, 1 or 2");
        return NULL;
    }
    p4j_jsig_adopt(sig, (p4j_jsig_change)how);
    Py_RETURN_NONE;
}

static PyObject *mod_jsig_active(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyBool_FromLong(p4j_jsig_active());
}

static PyMethodDef signal_methods[] = {
    {"_jsig_adopt", mod_jsig_adopt, METH_VARARGS,
     "_jsig_adopt(signalnum, how): the program changed this signal's handler (how 0: "
     "done; 1: faulthandler.enable about to run; 2: faulthandler.disable done); HotSpot's "
     "SIGSEGV/SIGBUS/SIGILL/SIGFPE handlers stay installed and chain to the program's."},
    {"_jsig_active", mod_jsig_active, METH_NOARGS,
     "_jsig_active(): True when HotSpot chains its fault signals through py4jni."},
    {"_signals_install", mod_signals_install, METH_O,
     "_signals_install(main_ident): puts py4jni's SIGINT/SIGTERM/SIGHUP handlers in place "
     "(once; the JVM runs with -Xrs); main_ident is Python's main thread."},
    {"_signal_changed", mod_signal_changed, METH_VARARGS,
     "_signal_changed(signalnum, thread_ident): signal.signal changed this signal's "
     "disposition on the main thread."},
    {NULL, NULL, 0, NULL},
};

int p4jpy_signals_init(PyObject *module)
{
    return PyModule_AddFunctions(module, signal_methods);
}
