/* jni/include/jvm_signals.h - Ctrl-C into the main thread's Java call, and Java's
 * shutdown hooks on SIGINT/SIGTERM/SIGHUP left at their default action.
 *
 * With -Xrs HotSpot leaves SIGINT, SIGTERM and SIGHUP to the program. py4jni puts its
 * own handler over them (p4j_signals_install, p4j_signals_rearm) where it applies:
 *  - a signal whose disposition is a handler function (for SIGINT only; Python's own C
 *    handler, whatever Python-level handler it runs): py4jni's handler calls it, then,
 *    when the main thread is inside an interruptible Java call (p4j_signals_enter), a
 *    helper thread interrupts that call's Java thread (Thread.interrupt()), so that
 *    Java's waits return with InterruptedException and the Python handler runs;
 *  - a signal left at SIG_DFL: the helper thread runs Java's shutdown hooks (as a JVM
 *    does on SIGTERM), then the process ends by that signal (default action again);
 *  - SIG_IGN, and SIGTERM/SIGHUP handlers of the program: left alone.
 * The signal handler itself only stores flags and writes a byte to a pipe (async-signal
 * safe); every JNI call happens on the helper thread or on the main thread. Nothing here
 * knows of Python: the binding tells which thread is the main one by calling
 * p4j_signals_enter/leave on it alone.
 */
#ifndef P4J_JVM_SIGNALS_H
#define P4J_JVM_SIGNALS_H

#include <stdbool.h>

#include "client.h"

/* Starts the helper thread and installs the handlers (once per process, after the JVM
 * started with -Xrs; later calls do nothing). Any thread. */
p4j_status p4j_signals_install(p4j_error *err);

/* True once p4j_signals_install succeeded in this process. */
bool p4j_signals_active(void);

/* Looks at `sig` (SIGINT, SIGTERM or SIGHUP; others are ignored) again after the program
 * changed its disposition, and puts py4jni's handler over it where it applies. */
void p4j_signals_rearm(int sig);

/* Set by py4jni's SIGINT handler, on every SIGINT it forwards: a SIGINT arrived that a
 * Java call may not have been interrupted for. The binding clears it on the main thread
 * once the pending Python handlers ran (before a Java call); p4j_signals_enter reads it. */
extern int p4j_signals_owed;

/* Main thread only, around each Java call that may wait (the GIL released): a call of an
 * interruptible gateway (`interruptible`) makes the thread interruptible while it runs,
 * one of an opted-out gateway makes it uninterruptible while it runs (also inside a
 * callback of an interruptible call). p4j_signals_enter interrupts the call at once when
 * a SIGINT arrived since the binding ran the Python handlers (p4j_signals_owed);
 * p4j_signals_leave returns once no interrupt can land any more, and clears the thread's
 * interrupt status if an interrupt was delivered (Java may not have consumed it). */
void p4j_signals_enter(bool interruptible);
void p4j_signals_leave(bool interruptible);

/* HotSpot's signal chaining for SIGSEGV, SIGBUS, SIGILL and SIGFPE (jni/jsig.c):
 * p4j_jsig_prepare, before the JVM starts, makes py4jni's libjsig functions visible to
 * HotSpot; afterwards p4j_jsig_active says whether HotSpot took them. */
void p4j_jsig_prepare(void);
bool p4j_jsig_active(void);

/* What the program did to a chained signal's handler (p4j_jsig_adopt). */
typedef enum p4j_jsig_change {
    P4J_JSIG_CHANGED = 0,             /* signal.signal, faulthandler.enable: done      */
    P4J_JSIG_BEFORE_FAULTHANDLER = 1, /* faulthandler.enable is about to run           */
    P4J_JSIG_AFTER_FAULTHANDLER = 2,  /* faulthandler.disable ran                      */
} p4j_jsig_change;

/* After the program changed the handler of `sig` (any signal; only the chained ones
 * count): the handler now installed becomes the one HotSpot chains to, and HotSpot's is
 * installed again. Main thread or any; not from a signal handler. */
void p4j_jsig_adopt(int sig, p4j_jsig_change how);

#endif /* P4J_JVM_SIGNALS_H */
