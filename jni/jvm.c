/* jni/jvm.c - creating the one JVM, attaching threads, capturing exceptions. */
#include "jvm.h"
#include "jvm_signals.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"
#include "jvm_classes.h"

typedef jint (*create_vm_fn)(JavaVM **, void **, void *);
typedef jint (*created_vms_fn)(JavaVM **, jsize, jsize *);

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static JavaVM *the_vm;
static volatile int vm_ready;      /* set (release) once classes are resolved */
static volatile int forked_child;  /* set in a fork() child: the JVM there is dead */
static char libjvm_path[PATH_MAX];
static char *started_classpath;    /* -Djava.class.path the JVM was created with */
static char *started_options;      /* the other options it was created with, joined */
static pthread_key_t detach_key;
static long global_count;
static char *start_failure;        /* why JNI_CreateJavaVM failed: no second try */
static p4j_jvm_start_times times;  /* written by the one start, under start_lock */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

const p4j_jvm_start_times *p4j_jvm_start_times_get(void) { return &times; }

/* JNI_CreateJavaVM runs on a thread of its own (the `java` launcher does the same).
 * HotSpot ends the process from some start failures (-Xmx1k, an agent that does not
 * load): it calls the "abort" (or "exit") hook first, on the creating thread, and
 * exit(1) when the hook returns. Our hook ends only that thread (pthread_exit), whose
 * join then reports the failure with what HotSpot printed (the "vfprintf" hook keeps
 * a copy while the JVM starts). The half-started JVM is never used again. */
static pthread_t creator;
static volatile int creating;      /* JNI_CreateJavaVM is running on `creator` */
static char start_text[2048];      /* HotSpot's output during the start (creator only) */
static size_t start_len;

static bool on_creator(void)
{
    return __atomic_load_n(&creating, __ATOMIC_ACQUIRE) && pthread_equal(pthread_self(), creator);
}

/* HotSpot's printing: passed through, and copied while the JVM starts. */
static jint JNICALL vm_vfprintf(FILE *f, const char *fmt, va_list ap)
{
    if (on_creator() && start_len < sizeof start_text - 1) {
        va_list copy;
        va_copy(copy, ap);
        int n = vsnprintf(start_text + start_len, sizeof start_text - start_len, fmt, copy);
        va_end(copy);
        if (n > 0)
            start_len = start_len + (size_t)n < sizeof start_text - 1
                            ? start_len + (size_t)n : sizeof start_text - 1;
    }
    return vfprintf(f, fmt, ap);
}

static void JNICALL vm_abort_hook(void)
{
    if (on_creator())
        pthread_exit(NULL); /* a failed start: only the creating thread ends */
    /* otherwise a fatal error: HotSpot ends the process */
}

static void JNICALL vm_exit_hook(jint code)
{
    (void)code;
    if (on_creator())
        pthread_exit(NULL);
    /* otherwise System.exit / Runtime.halt: the process exits with `code` */
}

static p4j_status exit_hook_install(JNIEnv *env, p4j_error *err);
static void warmup_begin(void);

typedef struct create_job {
    create_vm_fn create;
    JavaVMInitArgs *args;
    jint rc;
    bool returned;      /* JNI_CreateJavaVM returned (false: the hook ended the thread) */
    bool ready;         /* created, classes resolved, creator detached */
    p4j_error *err;
} create_job;

static void *create_main(void *p)
{
    create_job *job = p;
    JNIEnv *env = NULL;
    times.create_called = now_ns();
    job->rc = job->create(&the_vm, (void **)&env, job->args);
    times.created = now_ns();
    __atomic_store_n(&creating, 0, __ATOMIC_RELEASE);
    job->returned = true;
    if (job->rc == JNI_OK) {
        if (p4j_classes_init(env, job->err) == P4J_OK) {
            times.classes = now_ns();
            job->ready = exit_hook_install(env, job->err) == P4J_OK;
            if (job->ready)
                warmup_begin();
        }
        (*the_vm)->DetachCurrentThread(the_vm); /* callers attach on first use */
    }
    return NULL;
}

/* What HotSpot printed, without surrounding newlines and spaces; "" when nothing. */
static const char *start_output(void)
{
    start_text[start_len] = '\0';
    while (start_len && (start_text[start_len - 1] == '\n' || start_text[start_len - 1] == ' '))
        start_text[--start_len] = '\0';
    const char *t = start_text;
    while (*t == '\n' || *t == ' ')
        t++;
    return t;
}

/* ------------------------------------------------------------------ exit */

enum { RUNNING = 0, PYTHON_EXITING = 1, JAVA_EXITING = 2, SIGNAL_EXITING = 3 };
static int exit_phase;              /* atomic: who ends the process, once decided */
static void (*java_exit_fn)(void);  /* the binding's: Python's atexit handlers */

void p4j_jvm_on_java_exit(void (*fn)(void)) { __atomic_store_n(&java_exit_fn, fn, __ATOMIC_RELEASE); }

/* org.py4jni.PythonExit.atJavaExit: a shutdown hook, so Java is ending the process
 * (System.exit) unless Python is exiting and ran the hooks itself. */
static void JNICALL at_java_exit(JNIEnv *env, jclass unused)
{
    (void)unused;
    p4j_jvm_adopt_env(env);
    int expected = RUNNING;
    if (!__atomic_compare_exchange_n(&exit_phase, &expected, JAVA_EXITING, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return;
    void (*fn)(void) = __atomic_load_n(&java_exit_fn, __ATOMIC_ACQUIRE);
    if (fn)
        fn();
}

/* Adds the PythonExit shutdown hook. */
static p4j_status exit_hook_install(JNIEnv *env, p4j_error *err)
{
    static const JNINativeMethod m = {"atJavaExit", "()V", (void *)at_java_exit};
    jclass cls = (*env)->FindClass(env, "org/py4jni/PythonExit");
    if (!cls) {
        (*env)->ExceptionClear(env);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: class org/py4jni/PythonExit not "
                             "found (helper jar out of date?)");
    }
    jmethodID install = (*env)->GetStaticMethodID(env, cls, "install", "()V");
    if (install && (*env)->RegisterNatives(env, cls, &m, 1) == 0)
        (*env)->CallStaticVoidMethod(env, cls, install);
    bool failed = p4j_jvm_failed(env, err);
    (*env)->DeleteLocalRef(env, cls);
    if (failed)
        return P4J_ERROR;
    return install ? P4J_OK : p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: no PythonExit.install");
}

/* Clears a pending exception (-Xcheck:jni: checked before the clear); true if one was. */
static bool drop_exception(JNIEnv *env)
{
    bool pending = (*env)->ExceptionCheck(env);
    (*env)->ExceptionClear(env);
    return pending;
}

/* RuntimeMXBean.getInputArguments() lists every JavaVMOption HotSpot was given, so the
 * three hook options of create_vm too ("vfprintf", "abort", "exit"), which no `java`
 * command line takes: a program that starts a JVM with its own input arguments would
 * pass them on. The list VMManagementImpl keeps (its private vmArgs, read once and
 * cached) is replaced by one without them; JNI may write a private field of a module
 * that does not open its package. Initialising java.management costs tens of
 * milliseconds, so this runs on the warm-up thread, never on the start's path. Any
 * failure leaves the list as it is (a JDK without that field). */
static void hide_hook_options(JNIEnv *env)
{
    if ((*env)->PushLocalFrame(env, 16) != 0) {
        drop_exception(env);
        return;
    }
    static const char *const hooks[] = {"vfprintf", "abort", "exit"};
    jclass helper = (*env)->FindClass(env, "sun/management/ManagementFactoryHelper");
    jmethodID get_vm = helper ? (*env)->GetStaticMethodID(env, helper, "getVMManagement",
                                                          "()Lsun/management/VMManagement;")
                              : NULL;
    jobject vm = get_vm ? (*env)->CallStaticObjectMethod(env, helper, get_vm) : NULL;
    jclass impl = vm && !drop_exception(env) ? (*env)->GetObjectClass(env, vm) : NULL;
    jfieldID field = impl ? (*env)->GetFieldID(env, impl, "vmArgs", "Ljava/util/List;") : NULL;
    jmethodID args_of = field ? (*env)->GetMethodID(env, impl, "getVmArguments",
                                                    "()Ljava/util/List;") : NULL;
    jobject args = args_of ? (*env)->CallObjectMethod(env, vm, args_of) : NULL;
    jclass list_cls = args && !drop_exception(env) ? (*env)->FindClass(env, "java/util/ArrayList")
                                                   : NULL;
    jclass colls = list_cls ? (*env)->FindClass(env, "java/util/Collections") : NULL;
    jmethodID make = colls ? (*env)->GetMethodID(env, list_cls, "<init>", "(Ljava/util/Collection;)V")
                           : NULL;
    jmethodID remove = make ? (*env)->GetMethodID(env, list_cls, "remove", "(Ljava/lang/Object;)Z")
                            : NULL;
    jmethodID frozen = remove ? (*env)->GetStaticMethodID(
                                    env, colls, "unmodifiableList",
                                    "(Ljava/util/List;)Ljava/util/List;") : NULL;
    jobject copy = frozen ? (*env)->NewObject(env, list_cls, make, args) : NULL;
    for (size_t i = 0; copy && !drop_exception(env) && i < sizeof hooks / sizeof hooks[0]; i++) {
        jstring hook = (*env)->NewStringUTF(env, hooks[i]);
        if (hook)
            (*env)->CallBooleanMethod(env, copy, remove, hook); /* the first: ours */
    }
    jobject list = copy && !drop_exception(env)
                       ? (*env)->CallStaticObjectMethod(env, colls, frozen, copy) : NULL;
    if (list && !drop_exception(env))
        (*env)->SetObjectField(env, vm, field, list);
    drop_exception(env);
    (*env)->PopLocalFrame(env, NULL);
}

/* Calls static void method `name`() of class `cls` (JNI name); a missing class or method
 * or a throwable only skips it (optional work: the warm-up, the wait at exit). */
static void call_static_quietly(JNIEnv *env, const char *cls, const char *name)
{
    jclass c = (*env)->FindClass(env, cls);
    jmethodID m = c ? (*env)->GetStaticMethodID(env, c, name, "()V") : NULL;
    if (m)
        (*env)->CallStaticVoidMethod(env, c, m);
    drop_exception(env);
    if (c)
        (*env)->DeleteLocalRef(env, c);
}

/* The warm-up thread: attached as a daemon, it runs org.py4jni.StartWarmup.run (opens
 * the class path, loads the first call's reflection) unless `warm` is NULL, takes the
 * hook options out of the input arguments (hide_hook_options) and detaches. */
static void *warmup_main(void *warm)
{
    JNIEnv *env = NULL;
    if ((*the_vm)->AttachCurrentThreadAsDaemon(the_vm, (void **)&env, NULL) != JNI_OK)
        return NULL;
    if (warm)
        call_static_quietly(env, "org/py4jni/StartWarmup", "run");
    hide_hook_options(env);
    (*the_vm)->DetachCurrentThread(the_vm);
    return NULL;
}

/* Starts the warm-up on a detached native thread (a pthread_create on this path, no
 * Java thread start); PY4JNI_START_WARMUP=0 leaves StartWarmup out (the input
 * arguments are still cleaned); optional: failures are ignored.
 * The thread blocks asynchronous signals (HotSpot unblocks what it needs when the
 * thread attaches), so that Ctrl-C and the like reach Python's threads. */
static void warmup_begin(void)
{
    const char *knob = getenv("PY4JNI_START_WARMUP");
    bool warm = !(knob && strcmp(knob, "0") == 0); /* hide_hook_options runs either way */
    pthread_attr_t attr;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_create(&t, &attr, warmup_main, warm ? (void *)&warmup_begin : NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

/* java.lang.Shutdown.shutdown(): what DestroyJavaVM runs once the last non-daemon
 * thread ended (application hooks, File.deleteOnExit) without halting. JNI calls it
 * although it is package-private; it does not wait for non-daemon threads
 * (await_java_threads does, bounded, when Python exits). */
static p4j_status java_shutdown(p4j_error *err)
{
    JNIEnv *env = p4j_jvm_env(err);
    if (!env)
        return P4J_ERROR;
    jclass cls = (*env)->FindClass(env, "java/lang/Shutdown");
    jmethodID run = cls ? (*env)->GetStaticMethodID(env, cls, "shutdown", "()V") : NULL;
    if (run)
        (*env)->CallStaticVoidMethod(env, cls, run);
    bool failed = p4j_jvm_failed(env, err);
    if (cls)
        (*env)->DeleteLocalRef(env, cls);
    if (failed)
        return P4J_ERROR;
    return run ? P4J_OK
               : p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: java.lang.Shutdown.shutdown() "
                               "not found in this JVM");
}

/* org.py4jni.PythonExit.awaitThreads(): waits, bounded, for the non-daemon threads Java
 * code started, as DestroyJavaVM waits for them (a framework's asynchronous close still
 * deleting its files). A failure only skips the wait. */
static void await_java_threads(void)
{
    JNIEnv *env = p4j_jvm_env_or_null();
    if (!env)
        return;
    call_static_quietly(env, "org/py4jni/PythonExit", "awaitThreads");
}

p4j_status p4j_jvm_run_shutdown_hooks(p4j_error *err)
{
    int expected = RUNNING;
    if (!p4j_jvm_started() || forked_child)
        return P4J_OK; /* no JVM here */
    if (!__atomic_compare_exchange_n(&exit_phase, &expected, PYTHON_EXITING, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        if (expected == SIGNAL_EXITING) /* a signal's shutdown ends the process */
            for (;;)
                pause();
        return P4J_OK; /* Java is ending the process and runs them */
    }
    await_java_threads();
    return java_shutdown(err);
}

bool p4j_jvm_shutdown_for_signal(void)
{
    int expected = RUNNING;
    if (!p4j_jvm_started() || forked_child ||
        !__atomic_compare_exchange_n(&exit_phase, &expected, SIGNAL_EXITING, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return false;
    p4j_error err = {0};
    java_shutdown(&err); /* a hook's failure does not keep the process alive */
    p4j_error_clear(NULL, &err);
    return true;
}

/* Runs JNI_CreateJavaVM with `args` on a new thread; on failure records why. */
static p4j_status create_on_thread(create_vm_fn create, JavaVMInitArgs *args, p4j_error *err)
{
    create_job job = {.create = create, .args = args, .err = err};
    p4j_jsig_prepare(); /* HotSpot chains its fault signals to the program's handlers */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8u << 20);
    start_len = 0;
    __atomic_store_n(&creating, 1, __ATOMIC_RELEASE);
    int rc = pthread_create(&creator, &attr, create_main, &job);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        __atomic_store_n(&creating, 0, __ATOMIC_RELEASE);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: cannot start a thread to create "
                             "the JVM: %s", strerror(rc));
    }
    pthread_join(creator, NULL);
    __atomic_store_n(&creating, 0, __ATOMIC_RELEASE);
    if (job.ready)
        return P4J_OK;
    if (job.returned && job.rc == JNI_OK)
        return P4J_ERROR; /* the classes: err is set */
    const char *said = start_output();
    if (job.returned)
        p4j_error_set(err, P4J_ERR_BRIDGE, "JNI_CreateJavaVM failed (code %d): %s",
                      (int)job.rc, *said ? said : "check the JVM options");
    else
        p4j_error_set(err, P4J_ERR_BRIDGE, "the JVM could not start: %s",
                      *said ? said : "(HotSpot gave no message)");
    the_vm = NULL;
    start_failure = strdup(err->message ? err->message : "?");
    return P4J_ERROR;
}

/* initial-exec: one %fs-relative load on the hot path instead of __tls_get_addr */
static __thread JNIEnv *tls_env __attribute__((tls_model("initial-exec")));

static void on_fork_child(void) { forked_child = 1; tls_env = NULL; }

/* Thread-exit destructor: detach threads we attached. */
static void detach_thread(void *unused)
{
    (void)unused;
    if (the_vm && !forked_child)
        (*the_vm)->DetachCurrentThread(the_vm);
}

bool p4j_jvm_started(void) { return __atomic_load_n(&vm_ready, __ATOMIC_ACQUIRE) != 0; }

const char *p4j_jvm_libjvm_path(void) { return libjvm_path; }

long p4j_jvm_global_count(void) { return __atomic_load_n(&global_count, __ATOMIC_RELAXED); }

jobject p4j_jvm_global_new(JNIEnv *env, jobject obj)
{
    if (!obj || P4J_FAULT("jvm.global_new"))
        return NULL;
    jobject g = (*env)->NewGlobalRef(env, obj);
    if (g)
        __atomic_add_fetch(&global_count, 1, __ATOMIC_RELAXED);
    return g;
}

void p4j_jvm_global_delete(JNIEnv *env, jobject obj)
{
    if (!obj)
        return;
    (*env)->DeleteGlobalRef(env, obj);
    __atomic_sub_fetch(&global_count, 1, __ATOMIC_RELAXED);
}

static bool try_path(const char *path, char *out, size_t cap, size_t *used)
{
    if (access(path, R_OK) == 0) {
        snprintf(out, cap, "%s", path);
        return true;
    }
    int n = snprintf(out + *used, cap - *used, "%s%s", *used ? ", " : "", path);
    if (n > 0 && (size_t)n < cap - *used)
        *used += (size_t)n;
    return false;
}

/* Tries <home>/lib/server/libjvm.so and the JDK 8 layout under jre/. */
static bool try_home(const char *home, char *out, size_t cap, size_t *used)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/lib/server/libjvm.so", home);
    if (try_path(path, out, cap, used))
        return true;
    snprintf(path, sizeof path, "%s/jre/lib/amd64/server/libjvm.so", home);
    return try_path(path, out, cap, used);
}

static bool java_home_from_path(char *home, size_t cap)
{
    const char *path = getenv("PATH");
    if (!path)
        return false;
    char *copy = strdup(path), *save = NULL;
    bool found = false;
    for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
        char cand[PATH_MAX], real[PATH_MAX];
        snprintf(cand, sizeof cand, "%s/java", dir);
        if (access(cand, X_OK) != 0 || !realpath(cand, real))
            continue;
        char *slash = strrchr(real, '/'); /* .../bin/java -> ... */
        if (slash) *slash = '\0';
        slash = strrchr(real, '/');
        if (slash) *slash = '\0';
        snprintf(home, cap, "%s", real);
        found = true;
    }
    free(copy);
    return found;
}

bool p4j_jvm_find_libjvm(const char *explicit_path, char *out, size_t cap)
{
    char tried[2048] = "";
    size_t used = 0;
    if (explicit_path && *explicit_path) {
        /* a bare file name is dlopen's to find (LD_LIBRARY_PATH, the loader's cache) */
        if (!strchr(explicit_path, '/') || try_path(explicit_path, out, cap, &(size_t){0}))
            return snprintf(out, cap, "%s", explicit_path), true;
        return snprintf(out, cap, "libjvm not found at the given path %s", explicit_path), false;
    }
    const char *jh = getenv("JAVA_HOME");
    if (jh && *jh) { /* set: it is the user's choice, never silently passed over */
        if (try_home(jh, out, cap, &used))
            return true;
        snprintf(tried, sizeof tried, "%s", out);
        snprintf(out, cap, "libjvm.so not found: JAVA_HOME is set to %s, which holds no JVM "
                 "(tried %s). Point JAVA_HOME at a JDK or JRE, unset it to use the java "
                 "on PATH, or pass libjvm=.", jh, tried);
        return false;
    }
    char home[PATH_MAX];
    if (java_home_from_path(home, sizeof home) && try_home(home, out, cap, &used))
        return true;
    /* `out` accumulated the tried paths while searching; rebuild the message. */
    snprintf(tried, sizeof tried, "%s", used ? out : "(no JAVA_HOME, no java on PATH)");
    snprintf(out, cap, "libjvm.so not found; tried: %s. Set JAVA_HOME or pass libjvm=.",
             tried);
    return false;
}

static char *join_classpath(const p4j_jvm_options *o)
{
    char *cp = NULL;
    if (o->classpath && *o->classpath) {
        if (asprintf(&cp, "-Djava.class.path=%s:%s", o->helper_jar, o->classpath) < 0)
            cp = NULL;
    } else if (asprintf(&cp, "-Djava.class.path=%s", o->helper_jar) < 0) {
        cp = NULL;
    }
    return cp;
}

/* Joins the options that shape the JVM (besides the classpath) for comparison. */
static char *join_options(const p4j_jvm_options *o)
{
    size_t len = 32;
    for (size_t i = 0; i < o->noptions; i++)
        len += strlen(o->options[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    strcpy(s, o->keep_signals ? "" : "-Xrs");
    if (o->check_jni)
        strcat(s, " -Xcheck:jni");
    for (size_t i = 0; i < o->noptions; i++) {
        strcat(s, " ");
        strcat(s, o->options[i]);
    }
    return s;
}

static p4j_status create_vm(const p4j_jvm_options *o, char *cp, p4j_error *err)
{
    times.begin = now_ns();
    char found[PATH_MAX + 2048];
    if (!p4j_jvm_find_libjvm(o->libjvm_path, found, sizeof found))
        return p4j_error_set(err, P4J_ERR_BRIDGE, "%s", found);
    void *lib = dlopen(found, RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "cannot load %s: %s", found, dlerror());
    times.libjvm_loaded = now_ns();
    create_vm_fn create = (create_vm_fn)dlsym(lib, "JNI_CreateJavaVM");
    created_vms_fn created = (created_vms_fn)dlsym(lib, "JNI_GetCreatedJavaVMs");
    if (!create || !created)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "%s is not a JVM: it has no "
                             "JNI_CreateJavaVM (libjvm= names a libjvm.so)", found);
    size_t plen = strnlen(found, sizeof libjvm_path - 1);
    memcpy(libjvm_path, found, plen);
    libjvm_path[plen] = '\0';

    JNIEnv *env = NULL;
    jsize nvms = 0;
    if (created(&the_vm, 1, &nvms) == JNI_OK && nvms > 0) {
        /* Another library started a JVM in this process: share it. */
        if ((*the_vm)->AttachCurrentThreadAsDaemon(the_vm, (void **)&env, NULL) != JNI_OK)
            return p4j_error_set(err, P4J_ERR_BRIDGE, "cannot attach to the existing JVM");
    } else {
        size_t n = 0, cap = o->noptions + 7;
        JavaVMOption *opts = calloc(cap, sizeof *opts);
        if (!opts)
            return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        /* The hooks first: HotSpot reads options in order, and reports bad ones. */
        opts[n].optionString = "vfprintf";
        opts[n++].extraInfo = (void *)vm_vfprintf;
        opts[n].optionString = "abort";
        opts[n++].extraInfo = (void *)vm_abort_hook;
        opts[n].optionString = "exit";
        opts[n++].extraInfo = (void *)vm_exit_hook;
        opts[n++].optionString = cp;
        if (!o->keep_signals)
            opts[n++].optionString = "-Xrs";
        if (o->check_jni)
            opts[n++].optionString = "-Xcheck:jni";
        for (size_t i = 0; i < o->noptions; i++)
            opts[n++].optionString = (char *)o->options[i];
        JavaVMInitArgs args = {.version = JNI_VERSION_1_8, .nOptions = (jint)n,
                               .options = opts, .ignoreUnrecognized = JNI_FALSE};
        p4j_status st = create_on_thread(create, &args, err);
        free(opts);
        if (st != P4J_OK)
            return st;
    }
    if (env) { /* a JVM another library started: this thread is attached to it */
        tls_env = env;
        if (p4j_classes_init(env, err) != P4J_OK || exit_hook_install(env, err) != P4J_OK)
            return P4J_ERROR;
    }
    pthread_key_create(&detach_key, detach_thread);
    pthread_atfork(NULL, NULL, on_fork_child);
    times.ready = now_ns();
    return P4J_OK;
}

p4j_status p4j_jvm_start(const p4j_jvm_options *o, p4j_error *err)
{
    if (!o->helper_jar || !*o->helper_jar)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: the helper jar path is required");
    char *cp = join_classpath(o), *opts = join_options(o);
    if (!cp || !opts) {
        free(cp);
        free(opts);
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    p4j_status st = P4J_OK;
    pthread_mutex_lock(&start_lock);
    if (forked_child) {
        st = p4j_error_set(err, P4J_ERR_BRIDGE,
                           "py4jni: this process was forked after the JVM started; the JVM "
                           "cannot run in a fork child (use multiprocessing's 'spawn')");
    } else if (start_failure) {
        st = p4j_error_set(err, P4J_ERR_BRIDGE,
                           "py4jni: the JVM failed to start in this process and cannot be "
                           "started again (a process holds one JVM); the first start "
                           "failed with: %s", start_failure);
        free(cp);
        free(opts);
    } else if (vm_ready && o->join_running) {
        free(cp);
        free(opts);
    } else if (o->join_running) {
        st = p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: no JVM runs in this process to join");
        free(cp);
        free(opts);
    } else if (vm_ready) {
        /* A later gateway joins the JVM; it may leave the options out (no extra
         * options, defaults otherwise) but may not ask for different ones. */
        bool default_opts = o->noptions == 0 && !o->check_jni && !o->keep_signals;
        if (strcmp(cp, started_classpath) != 0)
            st = p4j_error_set(err, P4J_ERR_BRIDGE,
                               "py4jni: the JVM of this process is already running with "
                               "%s; a process holds one JVM, so a second gateway must use "
                               "the same classpath", started_classpath);
        else if (!default_opts && strcmp(opts, started_options) != 0)
            st = p4j_error_set(err, P4J_ERR_BRIDGE,
                               "py4jni: the JVM of this process is already running with "
                               "options [%s]; a second gateway cannot ask for [%s]",
                               started_options, opts);
        free(cp);
        free(opts);
    } else if ((st = create_vm(o, cp, err)) == P4J_OK) {
        started_classpath = cp;
        started_options = opts;
        __atomic_store_n(&vm_ready, 1, __ATOMIC_RELEASE);
    } else {
        free(cp);
        free(opts);
    }
    pthread_mutex_unlock(&start_lock);
    return st;
}

/* A thread attached through JNI starts without a context class loader (its Thread
 * object copies its own, still unset); the `java` launcher gives its main thread the
 * system class loader, and libraries rely on it (Spark's task deserialization, Scala
 * reflection, ServiceLoader users). Gives this newly attached thread that loader;
 * failures leave it as it was (exceptions cleared). */
static void give_context_loader(JNIEnv *env)
{
    jclass thread = (*env)->FindClass(env, "java/lang/Thread");
    jclass loader = thread ? (*env)->FindClass(env, "java/lang/ClassLoader") : NULL;
    jmethodID current = loader ? (*env)->GetStaticMethodID(
        env, thread, "currentThread", "()Ljava/lang/Thread;") : NULL;
    jmethodID set = current ? (*env)->GetMethodID(
        env, thread, "setContextClassLoader", "(Ljava/lang/ClassLoader;)V") : NULL;
    jmethodID system = loader && set ? (*env)->GetStaticMethodID(
        env, loader, "getSystemClassLoader", "()Ljava/lang/ClassLoader;") : NULL;
    jobject me = system ? (*env)->CallStaticObjectMethod(env, thread, current) : NULL;
    jobject scl = me && !(*env)->ExceptionCheck(env)
                      ? (*env)->CallStaticObjectMethod(env, loader, system) : NULL;
    if (scl && !(*env)->ExceptionCheck(env))
        (*env)->CallVoidMethod(env, me, set, scl);
    (*env)->ExceptionCheck(env); /* -Xcheck:jni: checked before the clear */
    (*env)->ExceptionClear(env);
    if (scl)
        (*env)->DeleteLocalRef(env, scl);
    if (me)
        (*env)->DeleteLocalRef(env, me);
    if (loader)
        (*env)->DeleteLocalRef(env, loader);
    if (thread)
        (*env)->DeleteLocalRef(env, thread);
}

JNIEnv *p4j_jvm_env_attached(void) { return tls_env; }

/* p4j_jvm_env for a thread not attached yet (out of line, so that the attached case
 * saves no registers). */
static __attribute__((noinline)) JNIEnv *attach_current(p4j_error *err)
{
    JNIEnv *env = NULL;
    if (forked_child) {
        p4j_error_set(err, P4J_ERR_BRIDGE,
                      "py4jni: this process was forked after the JVM started; the JVM "
                      "cannot run in a fork child (use multiprocessing's 'spawn')");
        return NULL;
    }
    if (!p4j_jvm_started()) {
        p4j_error_set(err, P4J_ERR_CLOSED, "py4jni: no JVM is running in this process");
        return NULL;
    }
    if (P4J_FAULT("jvm.attach") ||
        (*the_vm)->AttachCurrentThreadAsDaemon(the_vm, (void **)&env, NULL) != JNI_OK) {
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: cannot attach this thread to the JVM");
        return NULL;
    }
    tls_env = env;
    pthread_setspecific(detach_key, (void *)1); /* arms detach_thread at thread exit */
    give_context_loader(env);
    return env;
}

JNIEnv *p4j_jvm_env(p4j_error *err)
{
    JNIEnv *env = tls_env;
    return __builtin_expect(env != NULL, 1) ? env : attach_current(err);
}

JNIEnv *p4j_jvm_env_or_null(void)
{
    JNIEnv *env = tls_env;
    if (__builtin_expect(env != NULL, 1))
        return env;
    p4j_error ignored = {0};
    env = attach_current(&ignored);
    p4j_error_clear(NULL, &ignored);
    return env;
}

void p4j_jvm_forget_env(void) { tls_env = NULL; }

void p4j_jvm_adopt_env(JNIEnv *env)
{
    if (__builtin_expect(tls_env == NULL, 0))
        tls_env = env; /* the JVM attached this thread: no detach at exit from us */
}

/* Returns a malloc'd UTF-8 copy of a Java string (NULL for a NULL string). */
static char *utf8_of(JNIEnv *env, jstring s)
{
    if (!s)
        return NULL;
    /* Modified UTF-8 differs from UTF-8 only for NUL and supplementary characters;
     * messages are for humans, and the throwable itself stays available. */
    const char *chars = (*env)->GetStringUTFChars(env, s, NULL);
    char *copy = chars ? strdup(chars) : NULL;
    if (chars)
        (*env)->ReleaseStringUTFChars(env, s, chars);
    return copy;
}

p4j_status p4j_jvm_capture_exception(JNIEnv *env, p4j_error *err)
{
    return p4j_jvm_capture_exception_text(env, err, true);
}

p4j_status p4j_jvm_capture_exception_text(JNIEnv *env, p4j_error *err, bool text)
{
    jthrowable t = (*env)->ExceptionOccurred(env);
    if (!t)
        return P4J_OK;
    (*env)->ExceptionClear(env);
    bool bridge = (*env)->IsInstanceOf(env, t, p4j_jc.BridgeException);
    free(err->message);
    err->message = NULL;
    err->kind = bridge ? P4J_ERR_BRIDGE : P4J_ERR_JAVA;
    if (bridge || text) {
        jstring msg = (*env)->CallObjectMethod(env, t, bridge ? p4j_jc.Throwable_getMessage
                                                              : p4j_jc.Object_toString);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            msg = NULL;
        }
        char *chars = utf8_of(env, msg);
        if (msg)
            (*env)->DeleteLocalRef(env, msg);
        err->message = chars ? chars : strdup("(no message)"); /* ownership moves to err */
    }
    if (!bridge) {
        free(err->java_class);
        err->java_class = NULL;
        if (text) {
            jclass cls = (*env)->GetObjectClass(env, t);
            jstring name = (*env)->CallObjectMethod(env, cls, p4j_jc.Class_getName);
            if ((*env)->ExceptionCheck(env)) {
                (*env)->ExceptionClear(env);
                name = NULL;
            }
            err->java_class = utf8_of(env, name);
            if (name)
                (*env)->DeleteLocalRef(env, name);
            (*env)->DeleteLocalRef(env, cls);
        }
        err->throwable.handle = p4j_jvm_global_new(env, t);
        err->throwable.cls = NULL;
    }
    (*env)->DeleteLocalRef(env, t);
    return P4J_ERROR;
}
