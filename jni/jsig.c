/* jni/jsig.c - HotSpot's signal chaining for the signals it uses for itself (SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE: implicit null checks, safepoint polls), in a process whose
 * program changes their handlers after the JVM started (faulthandler.enable/disable,
 * signal.signal). See jvm_signals.h.
 *
 * HotSpot chains to a program's handlers through the JDK's libjsig: at start-up it looks
 * up JVM_begin_signal_setting, JVM_end_signal_setting and JVM_get_signal_action with
 * dlsym(RTLD_DEFAULT) and, when found, asks JVM_get_signal_action(sig) for the handler
 * to call for a signal that is not its own. libjsig itself must be preloaded (it
 * interposes sigaction); an interpreter already running cannot get it. So py4jni
 * provides the three functions (this extension is made global before the JVM starts:
 * p4j_jsig_prepare) and keeps the other half itself: the program's handler of each
 * signal is what it installed last, and HotSpot's own handler stays installed. Python's
 * faulthandler and signal.signal go through py4jni/_os_signals.py, which calls
 * p4j_jsig_adopt after each change: the handler the change installed becomes the
 * program's (chained) one and HotSpot's is put back.
 *
 * A program's handler is called through chain_handler, which tells a nested signal of
 * the same kind (faulthandler dumps its traceback, then raises the signal again) to
 * HotSpot as unhandled, so HotSpot writes its error report and ends the process instead
 * of calling the handler again for ever. A program handler SIG_DFL is reported to
 * HotSpot as SIG_DFL: HotSpot treats the signal as a crash (hs_err), as without chaining.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "jvm_signals.h"

#define P4J_EXPORT __attribute__((visibility("default")))

static const int chained[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
#define NCHAINED (sizeof chained / sizeof chained[0])

static int active;                           /* HotSpot set its handlers through us */
static struct sigaction jvm_act[NCHAINED];   /* HotSpot's handlers, as it installed them */
/* The program's handler per signal: two slots, readers use the one `app_slot` names,
 * p4j_jsig_adopt writes the other, then flips (signal handlers read it at any time). */
static struct sigaction app_act[NCHAINED][2];
static int app_slot[NCHAINED];
static struct sigaction before_faulthandler[NCHAINED];
static struct sigaction dfl_act, ign_act, chain_act;
static __thread int chaining; /* this thread is in a program handler called for HotSpot */

static int index_of(int sig)
{
    for (size_t i = 0; i < NCHAINED; i++)
        if (chained[i] == sig)
            return (int)i;
    return -1;
}

static void *handler_of(const struct sigaction *sa)
{
    return sa->sa_flags & SA_SIGINFO ? (void *)sa->sa_sigaction : (void *)sa->sa_handler;
}

static const struct sigaction *app_of(int i)
{
    return &app_act[i][__atomic_load_n(&app_slot[i], __ATOMIC_ACQUIRE)];
}

static void set_app(int i, const struct sigaction *sa)
{
    int next = !__atomic_load_n(&app_slot[i], __ATOMIC_RELAXED);
    app_act[i][next] = *sa;
    __atomic_store_n(&app_slot[i], next, __ATOMIC_RELEASE);
}

/* The handler HotSpot calls for a signal that is not its own: the program's. */
static void chain_handler(int sig, siginfo_t *info, void *ctx)
{
    int i = index_of(sig);
    if (i < 0)
        return;
    const struct sigaction *app = app_of(i);
    chaining++;
    if (app->sa_flags & SA_SIGINFO)
        app->sa_sigaction(sig, info, ctx);
    else if (app->sa_handler != SIG_DFL && app->sa_handler != SIG_IGN)
        app->sa_handler(sig);
    chaining--;
}

P4J_EXPORT void JVM_begin_signal_setting(void)
{
    for (size_t i = 0; i < NCHAINED; i++) { /* the program's handlers before the JVM */
        struct sigaction cur;
        if (sigaction(chained[i], NULL, &cur) == 0)
            set_app((int)i, &cur);
    }
}

P4J_EXPORT void JVM_end_signal_setting(void)
{
    for (size_t i = 0; i < NCHAINED; i++)
        if (sigaction(chained[i], NULL, &jvm_act[i]) != 0)
            return;
    dfl_act.sa_handler = SIG_DFL;
    ign_act.sa_handler = SIG_IGN;
    chain_act.sa_sigaction = chain_handler;
    /* SA_NODEFER: a handler that raises the signal again reaches HotSpot at once (as
     * nested: reported unhandled), not after it returned */
    chain_act.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&chain_act.sa_mask);
    __atomic_store_n(&active, 1, __ATOMIC_RELEASE);
}

P4J_EXPORT struct sigaction *JVM_get_signal_action(int sig)
{
    int i = index_of(sig);
    if (i < 0 || !__atomic_load_n(&active, __ATOMIC_ACQUIRE))
        return NULL; /* HotSpot's own record of what was there before it */
    const struct sigaction *app = app_of(i);
    void *h = handler_of(app);
    if (chaining || h == (void *)SIG_DFL)
        return &dfl_act;
    if (h == (void *)SIG_IGN)
        return &ign_act;
    return &chain_act;
}

void p4j_jsig_prepare(void)
{
    Dl_info self;
    if (dladdr((void *)JVM_get_signal_action, &self) && self.dli_fname) {
        /* this library, made global: HotSpot's dlsym(RTLD_DEFAULT) finds the three */
        void *h = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
        (void)h; /* kept open: the library stays global for the process's life */
    }
}

bool p4j_jsig_active(void) { return __atomic_load_n(&active, __ATOMIC_ACQUIRE); }

void p4j_jsig_adopt(int sig, p4j_jsig_change how)
{
    int i = index_of(sig);
    if (i < 0 || !p4j_jsig_active())
        return;
    if (how == P4J_JSIG_BEFORE_FAULTHANDLER) {
        before_faulthandler[i] = *app_of(i);
        return;
    }
    struct sigaction cur;
    if (sigaction(sig, NULL, &cur) != 0)
        return;
    if (handler_of(&cur) == handler_of(&jvm_act[i])) {
        /* HotSpot's is in place: faulthandler.disable put back what it found when it
         * was enabled after the JVM started; the program's is again what it was then */
        if (how == P4J_JSIG_AFTER_FAULTHANDLER)
            set_app(i, &before_faulthandler[i]);
        return;
    }
    set_app(i, &cur);
    sigaction(sig, &jvm_act[i], NULL);
}
