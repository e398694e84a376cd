/* jni/jvm_signals.c - Ctrl-C into the main thread's Java call; Java's shutdown hooks on a
 * SIGINT/SIGTERM/SIGHUP left at its default action (see jvm_signals.h). Process signals,
 * that is: py4j's Signal (a receiver mechanism) is python-binding/py4jni/signals.py.
 *
 * The main thread's call window is one atomic word, `window`: a sequence number (one
 * more for each window the main thread opens) and a state in the low two bits:
 *   IDLE  not in an interruptible Java call        (main thread sets it)
 *   IN    in one                                    (main thread sets it)
 *   BUSY  an interrupt of the thread is being sent  (the sender sets it, from IN or HIT)
 *   HIT   in one, and interrupted at least once     (the sender sets it, from BUSY)
 * Only the main thread leaves IN/HIT for IDLE, and only once no sender is BUSY, so no
 * interrupt lands outside its window. The SIGINT handler passes the word it saw to the
 * helper, which interrupts only that same window (a later call of the main thread,
 * started after Python's handler ran, is not hit by a slow helper). A SIGINT sets
 * p4j_signals_owed (seq_cst) before it reads the word, and the main thread stores IN
 * before it reads p4j_signals_owed: either the handler sees the window or the main
 * thread sees the SIGINT (and interrupts its call itself).
 */
#include "jvm_signals.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "jvm.h"

enum { IDLE = 0, IN = 1, BUSY = 2, HIT = 3 };
#define STATE(w) ((w) & 3u)
#define SEQ(w) ((w) & ~3u)

/* What the handler tells the helper (one atomic pipe write): a SIGINT to forward as an
 * interrupt of `window` (the word it saw), or a default-action signal's shutdown. */
typedef struct note {
    int shutdown; /* 0: interrupt; else the signal to shut down for */
    unsigned window;
} note_t;

int p4j_signals_owed;
static unsigned window;
static int active;           /* install succeeded */
static pid_t owner_pid;      /* the process that installed: a fork() child only chains */
static int note_fd = -1;     /* write end of the helper's pipe (non-blocking) */
static int wait_fd = -1;     /* read end (the helper's) */
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

/* Thread, resolved at install: global ref and method IDs. */
static jclass thread_cls;
static jmethodID thread_interrupt, thread_interrupted, thread_current;
static jobject main_thread;  /* global ref to the main thread's java.lang.Thread */

/* Main thread only (the binding calls enter/leave there alone). */
static int main_interruptible; /* interruptible calls under way on the main thread */
static int main_plain;         /* opted-out calls under way on the main thread */

/* The disposition each handled signal had before py4jni's: two slots per signal, the
 * handler reads the one `slot` names, p4j_signals_rearm writes the other then flips. */
static const int handled[] = {SIGINT, SIGTERM, SIGHUP};
#define NHANDLED (sizeof handled / sizeof handled[0])
static struct sigaction before[NHANDLED][2];
static int slot[NHANDLED];

static int index_of(int sig)
{
    for (size_t i = 0; i < NHANDLED; i++)
        if (handled[i] == sig)
            return (int)i;
    return -1;
}

static bool is_default(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

/* Calls the handler `sa` describes (a function, never SIG_DFL or SIG_IGN). */
static void call_before(const struct sigaction *sa, int sig, siginfo_t *info, void *ctx)
{
    if (sa->sa_flags & SA_SIGINFO)
        sa->sa_sigaction(sig, info, ctx);
    else if (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN)
        sa->sa_handler(sig);
}

/* Writes one note to the helper's pipe (async-signal-safe). */
static void note(int shutdown, unsigned w)
{
    note_t n = {.shutdown = shutdown, .window = w};
    ssize_t r;
    do
        r = write(note_fd, &n, sizeof n); /* a full pipe drops it: the helper is behind */
    while (r < 0 && errno == EINTR);
}

/* The handler: async-signal-safe calls only (write, getpid, sigaction, raise). */
static void on_signal(int sig, siginfo_t *info, void *ctx)
{
    int saved_errno = errno;
    int i = index_of(sig);
    if (i >= 0) {
        const struct sigaction *sa = &before[i][__atomic_load_n(&slot[i], __ATOMIC_ACQUIRE)];
        bool dfl = is_default(sa);
        if (getpid() != owner_pid) { /* a fork() child: what the signal did before us */
            if (dfl) {
                struct sigaction d;
                memset(&d, 0, sizeof d);
                d.sa_handler = SIG_DFL;
                sigaction(sig, &d, NULL);
                raise(sig); /* delivered (default action) when this handler returns */
            } else {
                call_before(sa, sig, info, ctx);
            }
        } else if (dfl) {
            note(sig, 0);
        } else {
            call_before(sa, sig, info, ctx);
            if (sig == SIGINT) {
                __atomic_store_n(&p4j_signals_owed, 1, __ATOMIC_SEQ_CST);
                note(0, __atomic_load_n(&window, __ATOMIC_SEQ_CST));
            }
        }
    }
    errno = saved_errno;
}

static bool is_ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_signal;
}

/* Puts on_signal over `sig` where it applies; install_lock held. */
static void rearm_locked(int sig)
{
    int i = index_of(sig);
    struct sigaction cur;
    if (i < 0 || sigaction(sig, NULL, &cur) != 0 || is_ours(&cur))
        return;
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
        return; /* ignored: stays ignored (also across exec) */
    bool dfl = is_default(&cur);
    if (!dfl && sig != SIGINT)
        return; /* the program's own SIGTERM/SIGHUP handler */
    int next = 1 - __atomic_load_n(&slot[i], __ATOMIC_RELAXED);
    before[i][next] = cur;
    __atomic_store_n(&slot[i], next, __ATOMIC_RELEASE);
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_signal;
    ours.sa_mask = cur.sa_mask;
    /* the flags of the handler we chain to (Python's: SA_ONSTACK, no SA_RESTART, so
     * that a blocking system call returns EINTR and Python runs its handler) */
    ours.sa_flags = SA_SIGINFO | (dfl ? SA_ONSTACK : cur.sa_flags & (SA_ONSTACK | SA_RESTART));
    sigaction(sig, &ours, NULL);
}

void p4j_signals_rearm(int sig)
{
    if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&install_lock);
    rearm_locked(sig);
    pthread_mutex_unlock(&install_lock);
}

bool p4j_signals_active(void) { return __atomic_load_n(&active, __ATOMIC_ACQUIRE) != 0; }

/* Interrupts the main thread's Java call if window `seen` is still open (IN or HIT) and
 * no other sender is at it: any thread. */
static void interrupt_main(JNIEnv *env, unsigned seen)
{
    unsigned w = __atomic_load_n(&window, __ATOMIC_SEQ_CST);
    for (;;) {
        if (SEQ(w) != SEQ(seen) || (STATE(w) != IN && STATE(w) != HIT))
            return; /* closed since, or a sender is interrupting it now */
        if (__atomic_compare_exchange_n(&window, &w, SEQ(w) | BUSY, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            break;
    }
    (*env)->CallVoidMethod(env, main_thread, thread_interrupt);
    (*env)->ExceptionCheck(env); /* -Xcheck:jni: checked before the clear */
    (*env)->ExceptionClear(env);
    __atomic_store_n(&window, SEQ(w) | HIT, __ATOMIC_SEQ_CST);
}

/* Ends the process by `sig` with its default action (after Java's shutdown hooks). */
static void die_by(int sig)
{
    struct sigaction d;
    memset(&d, 0, sizeof d);
    d.sa_handler = SIG_DFL;
    sigaction(sig, &d, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached: the default action of sig ends the process */
}

/* The helper thread: all signals blocked, attached to the JVM (as a daemon) on first
 * use; forwards SIGINT as an interrupt, runs the shutdown for a default-action signal. */
static void *helper_main(void *unused)
{
    (void)unused;
    for (;;) {
        note_t n;
        ssize_t r = read(wait_fd, &n, sizeof n); /* whole notes: writes of one are atomic */
        if (r < 0 && errno == EINTR)
            continue;
        if (r != (ssize_t)sizeof n)
            return NULL;
        if (n.shutdown) {
            if (p4j_jvm_shutdown_for_signal())
                die_by(n.shutdown);
            continue; /* an exit is under way: it decides how the process ends */
        }
        JNIEnv *env = p4j_jvm_env_or_null();
        if (env && __atomic_load_n(&main_thread, __ATOMIC_ACQUIRE))
            interrupt_main(env, n.window);
    }
}

/* Resolves java.lang.Thread's methods; false (err set) when missing. */
static bool resolve_thread(JNIEnv *env, p4j_error *err)
{
    jclass cls = (*env)->FindClass(env, "java/lang/Thread");
    if (cls) {
        thread_interrupt = (*env)->GetMethodID(env, cls, "interrupt", "()V");
        thread_interrupted = thread_interrupt
                                 ? (*env)->GetStaticMethodID(env, cls, "interrupted", "()Z")
                                 : NULL;
        thread_current = thread_interrupted
                             ? (*env)->GetStaticMethodID(env, cls, "currentThread",
                                                         "()Ljava/lang/Thread;")
                             : NULL;
    }
    if (p4j_jvm_failed(env, err) || !thread_current) {
        if (cls)
            (*env)->DeleteLocalRef(env, cls);
        return err->kind ? false
                         : (p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: java.lang.Thread "
                                          "lacks interrupt/interrupted/currentThread"), false);
    }
    thread_cls = (jclass)(*env)->NewGlobalRef(env, cls);
    (*env)->DeleteLocalRef(env, cls);
    return thread_cls != NULL;
}

p4j_status p4j_signals_install(p4j_error *err)
{
    pthread_mutex_lock(&install_lock);
    p4j_status st = P4J_OK;
    if (active)
        goto done;
    JNIEnv *env = p4j_jvm_env(err);
    if (!env || !resolve_thread(env, err)) {
        st = P4J_ERROR;
        goto done;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        st = p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: pipe for the signal helper: %s",
                           strerror(errno));
        goto done;
    }
    fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    wait_fd = fds[0];
    note_fd = fds[1];
    owner_pid = getpid();
    pthread_attr_t attr;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the helper inherits a full mask */
    pthread_t t;
    int rc = pthread_create(&t, &attr, helper_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        close(fds[0]);
        close(fds[1]);
        wait_fd = note_fd = -1;
        st = p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: cannot start the signal helper: %s",
                           strerror(rc));
        goto done;
    }
    __atomic_store_n(&active, 1, __ATOMIC_RELEASE);
    for (size_t i = 0; i < NHANDLED; i++)
        rearm_locked(handled[i]);
done:
    pthread_mutex_unlock(&install_lock);
    return st;
}

/* Records the main thread's java.lang.Thread (main thread, once); false on failure. */
static bool main_thread_known(void)
{
    if (__builtin_expect(main_thread != NULL, 1))
        return true;
    JNIEnv *env = p4j_jvm_env_or_null();
    if (!env)
        return false;
    jobject t = (*env)->CallStaticObjectMethod(env, thread_cls, thread_current);
    if ((*env)->ExceptionCheck(env) || !t) {
        (*env)->ExceptionClear(env);
        return false;
    }
    jobject g = (*env)->NewGlobalRef(env, t);
    (*env)->DeleteLocalRef(env, t);
    __atomic_store_n(&main_thread, g, __ATOMIC_RELEASE);
    return g != NULL;
}

/* The main thread becomes interruptible (its innermost call is an interruptible one). */
static void open_window(void)
{
    if (!main_thread_known())
        return;
    unsigned w = SEQ(__atomic_load_n(&window, __ATOMIC_RELAXED) + 4u) | IN;
    __atomic_store_n(&window, w, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&p4j_signals_owed, __ATOMIC_SEQ_CST)) {
        /* a SIGINT since the binding ran the Python handlers: its handler is pending and
         * the signal may have come before this window opened */
        __atomic_store_n(&p4j_signals_owed, 0, __ATOMIC_SEQ_CST);
        JNIEnv *env = p4j_jvm_env_attached();
        if (env)
            interrupt_main(env, w);
    }
}

/* The main thread stops being interruptible; clears an interrupt that was delivered. */
static void close_window(void)
{
    unsigned w = __atomic_load_n(&window, __ATOMIC_SEQ_CST);
    for (;;) {
        if (STATE(w) == IDLE)
            return;
        if (STATE(w) == BUSY) { /* a sender is in Thread.interrupt(): wait for it */
            sched_yield();
            w = __atomic_load_n(&window, __ATOMIC_SEQ_CST);
            continue;
        }
        if (__atomic_compare_exchange_n(&window, &w, SEQ(w) | IDLE, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            break;
    }
    if (STATE(w) == HIT) { /* Thread.interrupted(): the status Java did not consume */
        JNIEnv *env = p4j_jvm_env_attached();
        if (env) {
            (*env)->CallStaticBooleanMethod(env, thread_cls, thread_interrupted);
            (*env)->ExceptionCheck(env);
            (*env)->ExceptionClear(env);
        }
    }
}

void p4j_signals_enter(bool interruptible)
{
    if (interruptible) {
        if (main_interruptible++ == 0 && main_plain == 0)
            open_window();
    } else if (main_plain++ == 0 && main_interruptible > 0) {
        close_window();
    }
}

void p4j_signals_leave(bool interruptible)
{
    if (interruptible) {
        if (--main_interruptible == 0 && main_plain == 0)
            close_window();
    } else if (--main_plain == 0 && main_interruptible > 0) {
        open_window();
    }
}
