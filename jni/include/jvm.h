/* jni/include/jvm.h - the one embedded JVM of this process.
 *
 * libjvm is loaded with dlopen (never linked). The JVM is created once per process and
 * never destroyed (DestroyJavaVM waits for non-daemon threads and cannot be undone); it
 * ends with the process. Threads attach as daemons on first use and detach when they
 * exit. Nothing here knows of Python.
 */
#ifndef P4J_JVM_H
#define P4J_JVM_H

#include <jni.h>
#include <stdbool.h>
#include <stddef.h>

#include "client.h"

typedef struct p4j_jvm_options {
    const char *libjvm_path;      /* explicit libjvm.so, or NULL to search       */
    const char *helper_jar;       /* py4jni-helper.jar (required)                */
    const char *classpath;        /* user classpath, ':'-separated, or NULL      */
    const char *const *options;   /* extra JVM options ("-Xmx1g"), or NULL       */
    size_t noptions;
    bool check_jni;               /* add -Xcheck:jni                             */
    bool keep_signals;            /* false (default): pass -Xrs so Ctrl-C reaches Python */
    bool join_running;            /* join the running JVM whatever its classpath and
                                     options (fails when none runs)               */
} p4j_jvm_options;

/* Creates the JVM with `opts`, or checks that the running one is compatible (same
 * helper jar and classpath). Thread-safe; returns P4J_OK once the JVM is usable.
 * A start that HotSpot refuses (also those it would end the process for, through its
 * abort/exit hooks) fails with HotSpot's message; every later call then fails too,
 * repeating it (a process cannot create a second JVM). */
p4j_status p4j_jvm_start(const p4j_jvm_options *opts, p4j_error *err);

/* Process exit. Python exiting normally calls p4j_jvm_run_shutdown_hooks (from an
 * atexit handler): it waits for Java's non-daemon threads as DestroyJavaVM would, but
 * bounded (org.py4jni.PythonExit.awaitThreads), then runs Java's shutdown hooks and
 * File.deleteOnExit without halting; the process then ends with Python's status. Java
 * ending the process (System.exit on any thread) runs the function set with
 * p4j_jvm_on_java_exit from a shutdown hook first. Whichever comes
 * first decides; the other then does nothing. Any thread; release the GIL around
 * p4j_jvm_run_shutdown_hooks (hooks may call Python). */
p4j_status p4j_jvm_run_shutdown_hooks(p4j_error *err);
void p4j_jvm_on_java_exit(void (*fn)(void));

/* For a signal whose default action ends the process (jvm_signals.h): runs Java's
 * shutdown hooks as p4j_jvm_run_shutdown_hooks does, but not the function of
 * p4j_jvm_on_java_exit (the signal skips Python's atexit handlers, as in Python), and
 * returns true; the caller then ends the process by the signal, and a
 * p4j_jvm_run_shutdown_hooks called meanwhile waits for that. Returns false, running
 * nothing, when an exit is under way already (it decides how the process ends). */
bool p4j_jvm_shutdown_for_signal(void);

/* Returns true once p4j_jvm_start has succeeded in this process. */
bool p4j_jvm_started(void);

/* Returns the calling thread's JNIEnv, attaching it as a daemon thread on first use.
 * Returns NULL with `err` set when there is no JVM, attaching failed, or this process
 * is a fork() child of the one that started the JVM. */
JNIEnv *p4j_jvm_env(p4j_error *err);

/* p4j_jvm_env for a caller with nothing to report: the JNIEnv, or NULL (the reason
 * dropped). */
JNIEnv *p4j_jvm_env_or_null(void);

/* The calling thread's JNIEnv when it is attached already, else NULL (never attaches). */
JNIEnv *p4j_jvm_env_attached(void);

/* Records `env` as the calling thread's JNIEnv when it has none yet: for native methods
 * called on threads the JVM attached itself (Java threads calling back into Python), so
 * that p4j_jvm_env neither re-attaches them nor detaches them at exit. */
void p4j_jvm_adopt_env(JNIEnv *env);

/* Drops the calling thread's recorded JNIEnv: for a thread the JVM attached and has since
 * detached (a Java thread's exit, whose thread-exit destructors may still release Java
 * references); p4j_jvm_env then attaches it anew, and detaches it at its exit. */
void p4j_jvm_forget_env(void);

/* Where this process's JVM start went: CLOCK_MONOTONIC time stamps in ns (the clock of
 * Python's time.monotonic_ns), 0 for a step not reached (or a JVM another library
 * started). Written once by the start, readable after p4j_jvm_start returned. */
typedef struct p4j_jvm_start_times {
    long long begin;         /* p4j_jvm_start entered                          */
    long long libjvm_loaded; /* dlopen(libjvm) returned                        */
    long long create_called; /* JNI_CreateJavaVM called (on its own thread)     */
    long long created;       /* JNI_CreateJavaVM returned                       */
    long long classes;       /* py4jni's class and method table resolved        */
    long long ready;         /* exit hook installed, creating thread joined     */
} p4j_jvm_start_times;
const p4j_jvm_start_times *p4j_jvm_start_times_get(void);

/* Returns the path of the libjvm that was loaded ("" before start). */
const char *p4j_jvm_libjvm_path(void);

/* Searches for libjvm.so: `explicit_path`, else $JAVA_HOME when set (and only there),
 * else the `java` on PATH.
 * Writes the found path into `out` (size `cap`) and returns true; on failure writes
 * the list of tried places into `out` and returns false. */
bool p4j_jvm_find_libjvm(const char *explicit_path, char *out, size_t cap);

/* Captures the pending Java exception into `err` (clearing it in the JVM).
 * org.py4jni.BridgeException becomes P4J_ERR_BRIDGE, anything else P4J_ERR_JAVA.
 * Returns P4J_ERROR; returns P4J_OK when no exception was pending. */
p4j_status p4j_jvm_capture_exception(JNIEnv *env, p4j_error *err);

/* As p4j_jvm_capture_exception; with `text` false a Java exception (P4J_ERR_JAVA) is
 * captured as its throwable alone: message and java_class stay NULL, which spares the
 * toString() and getName() calls when the caller reads the throwable only. */
p4j_status p4j_jvm_capture_exception_text(JNIEnv *env, p4j_error *err, bool text);

/* Returns true (with `err` filled) when a Java exception is pending. Call it after every
 * JNI call that can throw, before the next JNI call (-Xcheck:jni insists). */
static inline bool p4j_jvm_failed(JNIEnv *env, p4j_error *err)
{
    return (*env)->ExceptionCheck(env) && p4j_jvm_capture_exception(env, err) != P4J_OK;
}

/* For a JNI allocation whose NULL result is its failure signal (NewString, NewByteArray):
 * returns true (with `err` filled) when `made` is NULL. A non-NULL result guarantees
 * that no exception is pending (JNI specification; -Xcheck:jni asks for an
 * ExceptionCheck only after calls into Java), which spares the ExceptionCheck and its
 * VM transition on the hot path. */
static inline bool p4j_jvm_alloc_failed(JNIEnv *env, const void *made, p4j_error *err)
{
    if (__builtin_expect(made != NULL, 1))
        return false;
    if (p4j_jvm_capture_exception(env, err) == P4J_OK)
        p4j_error_set(err, P4J_ERR_MEMORY, "py4jni: a JNI allocation failed");
    return true;
}

/* Number of live JNI global references created through p4j_jvm_global_new. */
long p4j_jvm_global_count(void);

/* NewGlobalRef that counts (see p4j_jvm_global_count). Returns NULL for a NULL obj. */
jobject p4j_jvm_global_new(JNIEnv *env, jobject obj);

/* DeleteGlobalRef that counts. Safe for NULL. */
void p4j_jvm_global_delete(JNIEnv *env, jobject obj);

#endif /* P4J_JVM_H */
