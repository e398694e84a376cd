/* perf/floor.c: the physical-limit row of the benchmark (FLOOR).
 *
 * The same work as scenarios M1, M2a, M2b, M4, LAT-N, X7-N and X8-N, done from C
 * through JNI alone, no Python: what any bridge built on JNI can at best approach.
 *   M1    CallStaticLongMethod(System.currentTimeMillis)
 *   M2a   sb.append(42): CallObjectMethodA(append(int)) on one StringBuilder, then
 *         DeleteLocalRef of the result (setLength(0) after each batch)
 *   M2b   sb.append("hello"): NewStringUTF("hello") + CallObjectMethodA(append(String))
 *         + DeleteLocalRef of both (the bridge makes a String from Python text each call)
 *   M4    new StringBuilder(): NewObjectA + NewGlobalRef + DeleteLocalRef, then
 *         DeleteGlobalRef (a bridge keeps a global ref while Python holds the object)
 *   LAT-N a String of N ASCII chars + CallStaticIntMethodA(Objects.hashCode) +
 *         DeleteLocalRef, N in 16, 256, 4096, 16384, 65536. The String is made the
 *         quickest way JNI offers for the size: NewString (UTF-16) under 512 chars;
 *         from 512, NewByteArray + SetByteArrayRegion + new String(byte[], ISO_8859_1)
 *         (Java keeps Latin-1 bytes as they are, where NewString's UTF-16 is narrowed)
 *   X7-N  bb.array() on a ByteBuffer.allocate(N) made once, then malloc a C buffer and
 *         GetByteArrayRegion the contents into it (a bridge making a bytes object)
 *   X8-N  NewByteArray(N) + SetByteArrayRegion from a C buffer, then
 *         ByteArrayOutputStream.write(byte[], int, int) and reset()
 *
 * libjvm is found at run time and loaded with dlopen: --libjvm PATH, else $P4J_LIBJVM,
 * else $JAVA_HOME/lib/server/libjvm.so, else from the real path of `java` on PATH.
 * JVM options: none beyond the JDK defaults (plus -Xrs, as an embedded JVM should use);
 * extra ones after `--jvm-opt`.
 *
 * Two modes:
 *   p4j_floor [--rounds R] [--round-ms MS]   warm up, calibrate batches of about MS ms,
 *       run R interleaved rounds of every scenario and print JSON (round means in ns per
 *       call, their median, min and max).
 *   p4j_floor --serve   line protocol for perf/bench.py, which interleaves the floor with
 *       the Python backends round by round. Prints "ready <json>" once the JVM is up,
 *       then answers each "run <scenario> <calls>" with "ok <elapsed ns>" or
 *       "err <message>"; "quit" (or end of input) exits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <jni.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef jint(JNICALL *create_vm_fn)(JavaVM **, void **, void *);

enum { MAX_JVM_OPTS = 32, N_SIZES = 6, N_LAT = 5 };
/* X7/X8 sizes, as perf/scenarios.py's SIZES_BYTES */
static const int SIZES[N_SIZES] = {1024, 16384, 262144, 1 << 20, 16 << 20, 64 << 20};
static const char *SIZE_NAMES[N_SIZES] = {"1k", "16k", "256k", "1M", "16M", "64M"};
/* LAT sizes, as perf/scenarios.py's SIZES_LAT */
static const int LAT_SIZES[N_LAT] = {16, 256, 4096, 16384, 65536};

/* Everything the measured loops touch, resolved once by floor_setup. */
typedef struct {
    JavaVM *vm;
    JNIEnv *env;
    jclass system_cls;
    jmethodID current_time_millis;
    jmethodID bb_array;
    jobject bb[N_SIZES]; /* global refs: ByteBuffer.allocate(SIZES[i]) */
    jmethodID baos_write;
    jmethodID baos_reset;
    jobject baos; /* global ref: ByteArrayOutputStream(largest size) */
    unsigned char *payload; /* SIZES[N_SIZES-1] bytes sent by X8 */
    jclass sb_cls;          /* global ref: java.lang.StringBuilder */
    jmethodID sb_init, sb_append_int, sb_append_str, sb_set_length;
    jobject sb;             /* global ref: the StringBuilder of M2a/M2b */
    jclass objects_cls;     /* global ref: java.util.Objects */
    jmethodID objects_hash;
    jchar *text;            /* LAT_SIZES[N_LAT-1] ASCII chars for LAT (UTF-16) */
    unsigned char *text8;   /* the same chars as Latin-1 bytes */
    jclass string_cls;      /* global ref: java.lang.String */
    jmethodID string_bytes; /* String(byte[], Charset) */
    jobject latin1;         /* global ref: ISO_8859_1 */
    volatile int64_t sink;  /* keeps results alive so no loop is optimised away */
    char java_version[64];
    char vm_name[128];
    char gc_names[256];
    char libjvm[PATH_MAX];
} Floor;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Writes the path of libjvm.so into out; returns 0, or -1 when none is found. */
static int find_libjvm(const char *explicit_path, char *out, size_t n) {
    const char *env = getenv("P4J_LIBJVM");
    const char *home = getenv("JAVA_HOME");
    if (explicit_path && *explicit_path) {
        snprintf(out, n, "%s", explicit_path);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    if (env && *env && access(env, R_OK) == 0) {
        snprintf(out, n, "%s", env);
        return 0;
    }
    if (home && *home) {
        snprintf(out, n, "%s/lib/server/libjvm.so", home);
        if (access(out, R_OK) == 0) return 0;
        snprintf(out, n, "%s/jre/lib/amd64/server/libjvm.so", home);
        if (access(out, R_OK) == 0) return 0;
    }
    const char *path = getenv("PATH");
    if (!path) return -1;
    char *copy = strdup(path);
    int found = -1;
    for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && found;
         dir = strtok_r(NULL, ":", &save)) {
        char cand[PATH_MAX], real[PATH_MAX];
        snprintf(cand, sizeof cand, "%s/java", dir);
        if (access(cand, X_OK) != 0 || !realpath(cand, real)) continue;
        char *slash = strrchr(real, '/'); /* .../bin/java -> .../bin */
        if (slash) *slash = '\0';
        slash = strrchr(real, '/'); /* .../bin -> JDK home */
        if (slash) *slash = '\0';
        snprintf(out, n, "%.4000s/lib/server/libjvm.so", real);
        if (access(out, R_OK) == 0) found = 0;
    }
    free(copy);
    return found;
}

/* Copies String result of System.getProperty(name) into out (empty on failure). */
static void get_property(Floor *f, const char *name, char *out, size_t n) {
    JNIEnv *env = f->env;
    out[0] = '\0';
    jmethodID gp = (*env)->GetStaticMethodID(env, f->system_cls, "getProperty",
                                             "(Ljava/lang/String;)Ljava/lang/String;");
    jstring key = (*env)->NewStringUTF(env, name);
    jstring val = gp && key ? (*env)->CallStaticObjectMethod(env, f->system_cls, gp, key) : NULL;
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    if (val) {
        const char *s = (*env)->GetStringUTFChars(env, val, NULL);
        if (s) {
            snprintf(out, n, "%s", s);
            (*env)->ReleaseStringUTFChars(env, val, s);
        }
        (*env)->DeleteLocalRef(env, val);
    }
    if (key) (*env)->DeleteLocalRef(env, key);
}

/* Names of the garbage collectors in use, comma separated (as the report shows them). */
static void get_gc_names(Floor *f, char *out, size_t n) {
    JNIEnv *env = f->env;
    out[0] = '\0';
    jclass mf = (*env)->FindClass(env, "java/lang/management/ManagementFactory");
    jmethodID beans = mf ? (*env)->GetStaticMethodID(env, mf, "getGarbageCollectorMXBeans",
                                                     "()Ljava/util/List;")
                         : NULL;
    jobject list = beans ? (*env)->CallStaticObjectMethod(env, mf, beans) : NULL;
    jclass list_cls = (*env)->FindClass(env, "java/util/List");
    jclass bean_cls = (*env)->FindClass(env, "java/lang/management/MemoryManagerMXBean");
    if (list && list_cls && bean_cls && !(*env)->ExceptionCheck(env)) {
        jmethodID size = (*env)->GetMethodID(env, list_cls, "size", "()I");
        jmethodID get = (*env)->GetMethodID(env, list_cls, "get", "(I)Ljava/lang/Object;");
        jmethodID name = (*env)->GetMethodID(env, bean_cls, "getName", "()Ljava/lang/String;");
        jint count = (*env)->CallIntMethod(env, list, size);
        for (jint i = 0; i < count && !(*env)->ExceptionCheck(env); i++) {
            jobject bean = (*env)->CallObjectMethod(env, list, get, i);
            jstring s = bean ? (*env)->CallObjectMethod(env, bean, name) : NULL;
            if (s) {
                const char *c = (*env)->GetStringUTFChars(env, s, NULL);
                size_t used = strlen(out);
                snprintf(out + used, n - used, "%s%s", used ? ", " : "", c ? c : "?");
                if (c) (*env)->ReleaseStringUTFChars(env, s, c);
                (*env)->DeleteLocalRef(env, s);
            }
            if (bean) (*env)->DeleteLocalRef(env, bean);
        }
    }
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
}

/* Creates the JVM and resolves every class, method and object the loops use.
 * Returns 0, or -1 with a message in err. */
static int floor_setup(Floor *f, const char *libjvm_arg, const char **extra_opts, int n_extra,
                       char *err, size_t errn) {
    memset(f, 0, sizeof *f);
    if (find_libjvm(libjvm_arg, f->libjvm, sizeof f->libjvm) != 0) {
        snprintf(err, errn, "libjvm.so not found (set JAVA_HOME or P4J_LIBJVM, or put java on PATH)");
        return -1;
    }
    void *lib = dlopen(f->libjvm, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        snprintf(err, errn, "dlopen %.200s: %.200s", f->libjvm, dlerror());
        return -1;
    }
    create_vm_fn create = (create_vm_fn)dlsym(lib, "JNI_CreateJavaVM");
    if (!create) {
        snprintf(err, errn, "JNI_CreateJavaVM missing in %.400s", f->libjvm);
        return -1;
    }
    JavaVMOption opts[MAX_JVM_OPTS];
    int n_opts = 0;
    opts[n_opts++].optionString = (char *)"-Xrs";
    for (int i = 0; i < n_extra && n_opts < MAX_JVM_OPTS; i++)
        opts[n_opts++].optionString = (char *)extra_opts[i];
    JavaVMInitArgs args = {.version = JNI_VERSION_1_8, .nOptions = n_opts, .options = opts,
                           .ignoreUnrecognized = JNI_FALSE};
    if (create(&f->vm, (void **)&f->env, &args) != JNI_OK) {
        snprintf(err, errn, "JNI_CreateJavaVM failed");
        return -1;
    }
    JNIEnv *env = f->env;
    jclass bb_cls = (*env)->FindClass(env, "java/nio/ByteBuffer");
    jclass baos_cls = (*env)->FindClass(env, "java/io/ByteArrayOutputStream");
    jclass sys = (*env)->FindClass(env, "java/lang/System");
    if (!bb_cls || !baos_cls || !sys) {
        snprintf(err, errn, "FindClass failed");
        return -1;
    }
    f->system_cls = (*env)->NewGlobalRef(env, sys);
    f->current_time_millis = (*env)->GetStaticMethodID(env, sys, "currentTimeMillis", "()J");
    jmethodID allocate = (*env)->GetStaticMethodID(env, bb_cls, "allocate", "(I)Ljava/nio/ByteBuffer;");
    f->bb_array = (*env)->GetMethodID(env, bb_cls, "array", "()[B");
    jmethodID baos_init = (*env)->GetMethodID(env, baos_cls, "<init>", "(I)V");
    f->baos_write = (*env)->GetMethodID(env, baos_cls, "write", "([BII)V");
    f->baos_reset = (*env)->GetMethodID(env, baos_cls, "reset", "()V");
    if (!f->current_time_millis || !allocate || !f->bb_array || !baos_init || !f->baos_write ||
        !f->baos_reset) {
        snprintf(err, errn, "GetMethodID failed");
        return -1;
    }
    jclass sb_cls = (*env)->FindClass(env, "java/lang/StringBuilder");
    jclass objects = (*env)->FindClass(env, "java/util/Objects");
    if (!sb_cls || !objects) {
        snprintf(err, errn, "FindClass(StringBuilder, Objects) failed");
        return -1;
    }
    f->sb_cls = (*env)->NewGlobalRef(env, sb_cls);
    f->objects_cls = (*env)->NewGlobalRef(env, objects);
    f->sb_init = (*env)->GetMethodID(env, sb_cls, "<init>", "()V");
    f->sb_append_int = (*env)->GetMethodID(env, sb_cls, "append", "(I)Ljava/lang/StringBuilder;");
    f->sb_append_str = (*env)->GetMethodID(env, sb_cls, "append",
                                           "(Ljava/lang/String;)Ljava/lang/StringBuilder;");
    f->sb_set_length = (*env)->GetMethodID(env, sb_cls, "setLength", "(I)V");
    f->objects_hash = (*env)->GetStaticMethodID(env, objects, "hashCode", "(Ljava/lang/Object;)I");
    if (!f->sb_init || !f->sb_append_int || !f->sb_append_str || !f->sb_set_length ||
        !f->objects_hash) {
        snprintf(err, errn, "GetMethodID (StringBuilder, Objects) failed");
        return -1;
    }
    jobject sb = (*env)->NewObject(env, sb_cls, f->sb_init);
    if (!sb) {
        snprintf(err, errn, "new StringBuilder failed");
        return -1;
    }
    f->sb = (*env)->NewGlobalRef(env, sb);
    (*env)->DeleteLocalRef(env, sb);
    f->text = malloc(sizeof *f->text * LAT_SIZES[N_LAT - 1]);
    f->text8 = malloc(LAT_SIZES[N_LAT - 1]);
    for (int i = 0; i < LAT_SIZES[N_LAT - 1]; i++) f->text8[i] = f->text[i] = (jchar)('a' + i % 26);
    jclass charset = (*env)->FindClass(env, "java/nio/charset/Charset");
    jmethodID for_name = charset ? (*env)->GetStaticMethodID(
        env, charset, "forName", "(Ljava/lang/String;)Ljava/nio/charset/Charset;") : NULL;
    jstring cs_name = (*env)->NewStringUTF(env, "ISO-8859-1");
    jobject cs = for_name ? (*env)->CallStaticObjectMethod(env, charset, for_name, cs_name) : NULL;
    jclass string_cls = (*env)->FindClass(env, "java/lang/String");
    f->string_cls = string_cls ? (*env)->NewGlobalRef(env, string_cls) : NULL;
    f->string_bytes = string_cls ? (*env)->GetMethodID(env, string_cls, "<init>",
                                                       "([BLjava/nio/charset/Charset;)V")
                                 : NULL;
    if (!cs || !f->string_bytes || (*env)->ExceptionCheck(env)) {
        snprintf(err, errn, "ISO-8859-1 Charset or String(byte[], Charset) not found");
        return -1;
    }
    f->latin1 = (*env)->NewGlobalRef(env, cs);
    for (int i = 0; i < N_SIZES; i++) {
        jobject bb = (*env)->CallStaticObjectMethod(env, bb_cls, allocate, SIZES[i]);
        if (!bb) {
            snprintf(err, errn, "ByteBuffer.allocate(%d) failed", SIZES[i]);
            return -1;
        }
        f->bb[i] = (*env)->NewGlobalRef(env, bb);
        (*env)->DeleteLocalRef(env, bb);
    }
    jobject baos = (*env)->NewObject(env, baos_cls, baos_init, SIZES[N_SIZES - 1]);
    if (!baos) {
        snprintf(err, errn, "new ByteArrayOutputStream failed");
        return -1;
    }
    f->baos = (*env)->NewGlobalRef(env, baos);
    (*env)->DeleteLocalRef(env, baos);
    f->payload = malloc(SIZES[N_SIZES - 1]);
    for (int i = 0; i < SIZES[N_SIZES - 1]; i++) f->payload[i] = (unsigned char)(i * 31 + 7);
    get_property(f, "java.version", f->java_version, sizeof f->java_version);
    get_property(f, "java.vm.name", f->vm_name, sizeof f->vm_name);
    get_gc_names(f, f->gc_names, sizeof f->gc_names);
    return 0;
}

/* One op per scenario; each runs `calls` calls and returns 0, or -1 on a Java exception. */
static int run_m1(Floor *f, int size_idx, long calls) {
    (void)size_idx;
    JNIEnv *env = f->env;
    int64_t acc = 0;
    for (long i = 0; i < calls; i++) {
        acc += (*env)->CallStaticLongMethod(env, f->system_cls, f->current_time_millis);
        if ((*env)->ExceptionCheck(env)) return -1;
    }
    f->sink += acc;
    return 0;
}

static int run_m2a(Floor *f, int size_idx, long calls) {
    (void)size_idx;
    JNIEnv *env = f->env;
    jvalue arg = {.i = 42};
    for (long i = 0; i < calls; i++) {
        jobject r = (*env)->CallObjectMethodA(env, f->sb, f->sb_append_int, &arg);
        if (!r || (*env)->ExceptionCheck(env)) return -1;
        (*env)->DeleteLocalRef(env, r);
    }
    (*env)->CallVoidMethod(env, f->sb, f->sb_set_length, 0);
    return (*env)->ExceptionCheck(env) ? -1 : 0;
}

static int run_m2b(Floor *f, int size_idx, long calls) {
    (void)size_idx;
    JNIEnv *env = f->env;
    for (long i = 0; i < calls; i++) {
        jvalue arg = {.l = (*env)->NewStringUTF(env, "hello")};
        if (!arg.l) return -1;
        jobject r = (*env)->CallObjectMethodA(env, f->sb, f->sb_append_str, &arg);
        if (!r || (*env)->ExceptionCheck(env)) return -1;
        (*env)->DeleteLocalRef(env, r);
        (*env)->DeleteLocalRef(env, arg.l);
    }
    (*env)->CallVoidMethod(env, f->sb, f->sb_set_length, 0);
    return (*env)->ExceptionCheck(env) ? -1 : 0;
}

static int run_m4(Floor *f, int size_idx, long calls) {
    (void)size_idx;
    JNIEnv *env = f->env;
    for (long i = 0; i < calls; i++) {
        jobject local = (*env)->NewObjectA(env, f->sb_cls, f->sb_init, NULL);
        if (!local) return -1;
        jobject global = (*env)->NewGlobalRef(env, local);
        (*env)->DeleteLocalRef(env, local);
        (*env)->DeleteGlobalRef(env, global);
    }
    return 0;
}

static int run_lat(Floor *f, int size_idx, long calls) {
    JNIEnv *env = f->env;
    jsize n = LAT_SIZES[size_idx];
    int64_t acc = 0;
    for (long i = 0; i < calls; i++) {
        jvalue arg;
        if (n < 512) {
            arg.l = (*env)->NewString(env, f->text, n);
        } else {
            jbyteArray b = (*env)->NewByteArray(env, n);
            if (!b) return -1;
            (*env)->SetByteArrayRegion(env, b, 0, n, (const jbyte *)f->text8);
            arg.l = (*env)->NewObject(env, f->string_cls, f->string_bytes, b, f->latin1);
            (*env)->DeleteLocalRef(env, b);
        }
        if (!arg.l) return -1;
        acc += (*env)->CallStaticIntMethodA(env, f->objects_cls, f->objects_hash, &arg);
        if ((*env)->ExceptionCheck(env)) return -1;
        (*env)->DeleteLocalRef(env, arg.l);
    }
    f->sink += acc;
    return 0;
}

static int run_x7(Floor *f, int size_idx, long calls) {
    JNIEnv *env = f->env;
    jobject bb = f->bb[size_idx];
    int64_t acc = 0;
    for (long i = 0; i < calls; i++) {
        jbyteArray arr = (*env)->CallObjectMethod(env, bb, f->bb_array);
        if (!arr || (*env)->ExceptionCheck(env)) return -1;
        jsize len = (*env)->GetArrayLength(env, arr);
        jbyte *buf = malloc((size_t)len);
        (*env)->GetByteArrayRegion(env, arr, 0, len, buf);
        acc += buf[len - 1];
        free(buf);
        (*env)->DeleteLocalRef(env, arr);
    }
    f->sink += acc;
    return 0;
}

static int run_x8(Floor *f, int size_idx, long calls) {
    JNIEnv *env = f->env;
    jint n = SIZES[size_idx];
    for (long i = 0; i < calls; i++) {
        jbyteArray arr = (*env)->NewByteArray(env, n);
        if (!arr) return -1;
        (*env)->SetByteArrayRegion(env, arr, 0, n, (const jbyte *)f->payload);
        (*env)->CallVoidMethod(env, f->baos, f->baos_write, arr, 0, n);
        if ((*env)->ExceptionCheck(env)) return -1;
        (*env)->CallVoidMethod(env, f->baos, f->baos_reset);
        if ((*env)->ExceptionCheck(env)) return -1;
        (*env)->DeleteLocalRef(env, arr);
    }
    return 0;
}

typedef int (*run_fn)(Floor *, int, long);
typedef struct {
    char id[16];
    run_fn run;
    int size_idx;
} Scenario;

enum { N_SCENARIOS = 4 + N_LAT + 2 * N_SIZES };
static Scenario SCENARIOS[N_SCENARIOS];

static void init_scenarios(void) {
    int k = 0;
    SCENARIOS[k++] = (Scenario){"M1", run_m1, 0};
    SCENARIOS[k++] = (Scenario){"M2a", run_m2a, 0};
    SCENARIOS[k++] = (Scenario){"M2b", run_m2b, 0};
    SCENARIOS[k++] = (Scenario){"M4", run_m4, 0};
    for (int i = 0; i < N_LAT; i++) {
        Scenario s = {"", run_lat, i};
        snprintf(s.id, sizeof s.id, "LAT-%d", LAT_SIZES[i]);
        SCENARIOS[k++] = s;
    }
    for (int i = 0; i < N_SIZES; i++) {
        Scenario s = {"", run_x7, i};
        snprintf(s.id, sizeof s.id, "X7-%s", SIZE_NAMES[i]);
        SCENARIOS[k++] = s;
    }
    for (int i = 0; i < N_SIZES; i++) {
        Scenario s = {"", run_x8, i};
        snprintf(s.id, sizeof s.id, "X8-%s", SIZE_NAMES[i]);
        SCENARIOS[k++] = s;
    }
}

static const Scenario *find_scenario(const char *id) {
    for (int i = 0; i < N_SCENARIOS; i++)
        if (strcmp(SCENARIOS[i].id, id) == 0) return &SCENARIOS[i];
    return NULL;
}

/* Times `calls` calls of s; returns elapsed ns, or -1 when Java threw. The getppid()
 * around the run (outside the timed part) is the dump marker of
 * `perf/callgrind_calls.py --floor`: under callgrind each run is one dump of its own. */
static int64_t timed(Floor *f, const Scenario *s, long calls) {
    getppid();
    int64_t t0 = now_ns();
    int rc = s->run(f, s->size_idx, calls);
    int64_t t1 = now_ns();
    getppid();
    if (rc != 0) {
        if ((*f->env)->ExceptionCheck(f->env)) (*f->env)->ExceptionClear(f->env);
        return -1;
    }
    return t1 - t0;
}

static void print_info_json(const Floor *f) {
    printf("{\"java_version\": \"%s\", \"vm_name\": \"%s\", \"gc\": \"%s\", \"libjvm\": \"%s\"}",
           f->java_version, f->vm_name, f->gc_names, f->libjvm);
}

static int serve(Floor *f) {
    char line[256];
    printf("ready ");
    print_info_json(f);
    printf("\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        char id[64];
        long calls;
        if (strncmp(line, "quit", 4) == 0) break;
        if (sscanf(line, "run %63s %ld", id, &calls) != 2 || calls <= 0) {
            printf("err bad command\n");
        } else {
            const Scenario *s = find_scenario(id);
            if (!s) {
                printf("err unknown scenario %s\n", id);
            } else {
                int64_t ns = timed(f, s, calls);
                if (ns < 0)
                    printf("err Java exception in %s\n", id);
                else
                    printf("ok %lld\n", (long long)ns);
            }
        }
        fflush(stdout);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Standalone: the bench's round discipline in one process, JSON on stdout. */
static int standalone(Floor *f, int rounds, double round_ms) {
    long calls[N_SCENARIOS];
    double *means = calloc((size_t)N_SCENARIOS * rounds, sizeof *means);
    for (int i = 0; i < N_SCENARIOS; i++) { /* warm-up and calibration */
        const Scenario *s = &SCENARIOS[i];
        long n = 1;
        int64_t ns;
        for (;;) {
            ns = timed(f, s, n);
            if (ns < 0) return 1;
            if (ns >= round_ms * 1e6 / 5 || n >= (1L << 40)) break;
            n *= 2;
        }
        double per_call = (double)ns / n;
        timed(f, s, (long)(round_ms * 1e6 / per_call) + 1); /* one more warm-up batch */
        calls[i] = (long)(round_ms * 1e6 / per_call);
        if (calls[i] < 1) calls[i] = 1;
        if (calls[i] < 1000 && per_call < 1e6) calls[i] = 1000; /* as bench.py's MIN_CALLS */
    }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < N_SCENARIOS; i++) {
            int64_t ns = timed(f, &SCENARIOS[i], calls[i]);
            if (ns < 0) return 1;
            means[i * rounds + r] = (double)ns / calls[i];
        }
    printf("{\"info\": ");
    print_info_json(f);
    printf(", \"rounds\": %d, \"round_ms\": %g, \"unit\": \"ns per call\", \"results\": {", rounds,
           round_ms);
    for (int i = 0; i < N_SCENARIOS; i++) {
        double *m = &means[i * rounds];
        double sorted[rounds];
        memcpy(sorted, m, sizeof sorted);
        qsort(sorted, rounds, sizeof *sorted, cmp_double);
        double median = rounds % 2 ? sorted[rounds / 2]
                                   : (sorted[rounds / 2 - 1] + sorted[rounds / 2]) / 2;
        printf("%s\n  \"%s\": {\"calls_per_round\": %ld, \"median\": %.3f, \"min\": %.3f, "
               "\"max\": %.3f, \"rounds\": [",
               i ? "," : "", SCENARIOS[i].id, calls[i], median, sorted[0], sorted[rounds - 1]);
        for (int r = 0; r < rounds; r++) printf("%s%.3f", r ? ", " : "", m[r]);
        printf("]}");
    }
    printf("\n}}\n");
    free(means);
    return 0;
}

int main(int argc, char **argv) {
    int serve_mode = 0, rounds = 15;
    double round_ms = 100;
    const char *libjvm = NULL;
    const char *extra[MAX_JVM_OPTS];
    int n_extra = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--serve") == 0)
            serve_mode = 1;
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--round-ms") == 0 && i + 1 < argc)
            round_ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--libjvm") == 0 && i + 1 < argc)
            libjvm = argv[++i];
        else if (strcmp(argv[i], "--jvm-opt") == 0 && i + 1 < argc && n_extra < MAX_JVM_OPTS - 1)
            extra[n_extra++] = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--serve] [--rounds R] [--round-ms MS] [--libjvm PATH] "
                    "[--jvm-opt OPT]...\n",
                    argv[0]);
            return 2;
        }
    }
    if (rounds < 1) rounds = 1;
    init_scenarios();
    static Floor f;
    char err[512];
    if (floor_setup(&f, libjvm, extra, n_extra, err, sizeof err) != 0) {
        if (serve_mode)
            printf("fail %s\n", err);
        fprintf(stderr, "p4j_floor: %s\n", err);
        return 1;
    }
    int rc = serve_mode ? serve(&f) : standalone(&f, rounds, round_ms);
    fflush(stdout);
    _exit(rc); /* no DestroyJavaVM: nothing to flush, and it can wait on JVM threads */
}
