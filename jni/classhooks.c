/* jni/classhooks.c - JVMTI class-file hooks (see classhooks.h). */
#include "classhooks.h"

#include <jvmti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static jvmtiEnv *jvmti;             /* under lock until installed, then read-only */
static bool installed;
static jclass hooks_class;          /* global ref to org/py4jni/ClassHooks */
static jmethodID transform_mid;     /* ClassHooks.transform(ClassLoader, String, byte[]) */
static char **targets;              /* armed internal names, under lock; NULL: disarmed */
static size_t ntargets;

static bool is_target(const char *name)
{
    bool hit = false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ntargets && !hit; i++)
        hit = strcmp(targets[i], name) == 0;
    pthread_mutex_unlock(&lock);
    return hit;
}

/* The ClassFileLoadHook: a target's class file goes through ClassHooks.transform; a
 * null result or a Java exception (cleared) leaves the class as it was. */
static void JNICALL on_class_file(jvmtiEnv *jv, JNIEnv *env, jclass redefined, jobject loader,
                                  const char *name, jobject domain, jint len,
                                  const unsigned char *data, jint *new_len,
                                  unsigned char **new_data)
{
    (void)redefined;
    (void)domain;
    if (!name || !is_target(name) || (*env)->PushLocalFrame(env, 8) != 0)
        return;
    jbyteArray in = (*env)->NewByteArray(env, len);
    jstring jname = in ? (*env)->NewStringUTF(env, name) : NULL;
    jbyteArray out = NULL;
    if (jname) {
        (*env)->SetByteArrayRegion(env, in, 0, len, (const jbyte *)data);
        out = (*env)->CallStaticObjectMethod(env, hooks_class, transform_mid, loader, jname, in);
    }
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env); /* a transform bug: say it, keep the class */
        out = NULL;
    }
    if (out) {
        jint n = (*env)->GetArrayLength(env, out);
        unsigned char *buf = NULL;
        if ((*jv)->Allocate(jv, n, &buf) == JVMTI_ERROR_NONE) {
            (*env)->GetByteArrayRegion(env, out, 0, n, (jbyte *)buf);
            *new_len = n;
            *new_data = buf;
        }
    }
    (*env)->PopLocalFrame(env, NULL);
}

static void throw_state(JNIEnv *env, const char *what, jvmtiError e)
{
    char *name = NULL;
    (*jvmti)->GetErrorName(jvmti, e, &name);
    char msg[256];
    snprintf(msg, sizeof msg, "py4jni: JVMTI %s failed: %s", what, name ? name : "?");
    if (name)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    jclass ise = (*env)->FindClass(env, "java/lang/IllegalStateException");
    if (ise)
        (*env)->ThrowNew(env, ise, msg);
}

/* ClassHooks.arm(String[]): the names the hook edits, and the hook enabled; null
 * disables it and forgets the names. */
static void JNICALL hooks_arm(JNIEnv *env, jclass unused, jobjectArray names)
{
    (void)unused;
    jsize n = names ? (*env)->GetArrayLength(env, names) : 0;
    char **list = n ? calloc((size_t)n, sizeof *list) : NULL;
    for (jsize i = 0; i < n && list; i++) {
        jstring s = (*env)->GetObjectArrayElement(env, names, i);
        const char *utf = s ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
        list[i] = utf ? strdup(utf) : strdup("");
        if (utf)
            (*env)->ReleaseStringUTFChars(env, s, utf);
        (*env)->DeleteLocalRef(env, s);
    }
    pthread_mutex_lock(&lock);
    char **old = targets;
    size_t nold = ntargets;
    targets = list;
    ntargets = list ? (size_t)n : 0;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < nold; i++)
        free(old[i]);
    free(old);
    jvmtiError e = (*jvmti)->SetEventNotificationMode(
        jvmti, names ? JVMTI_ENABLE : JVMTI_DISABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
    if (e != JVMTI_ERROR_NONE)
        throw_state(env, "SetEventNotificationMode", e);
}

/* ClassHooks.retransform(Class[]). */
static void JNICALL hooks_retransform(JNIEnv *env, jclass unused, jobjectArray classes)
{
    (void)unused;
    jsize n = (*env)->GetArrayLength(env, classes);
    jclass *list = calloc(n ? (size_t)n : 1, sizeof *list);
    if (!list)
        return;
    for (jsize i = 0; i < n; i++)
        list[i] = (*env)->GetObjectArrayElement(env, classes, i);
    jvmtiError e = (*jvmti)->RetransformClasses(jvmti, n, list);
    for (jsize i = 0; i < n; i++)
        (*env)->DeleteLocalRef(env, list[i]);
    free(list);
    if (e != JVMTI_ERROR_NONE)
        throw_state(env, "RetransformClasses", e);
}

/* ClassHooks.staticField(Class, String, String). */
static jobject JNICALL hooks_static_field(JNIEnv *env, jclass unused, jclass owner, jstring name,
                                          jstring sig)
{
    (void)unused;
    const char *n = (*env)->GetStringUTFChars(env, name, NULL);
    const char *s = n ? (*env)->GetStringUTFChars(env, sig, NULL) : NULL;
    jobject value = NULL;
    if (s) {
        jfieldID f = (*env)->GetStaticFieldID(env, owner, n, s);
        if (f)
            value = (*env)->GetStaticObjectField(env, owner, f);
        (*env)->ReleaseStringUTFChars(env, sig, s);
    }
    if (n)
        (*env)->ReleaseStringUTFChars(env, name, n);
    return value;
}

/* ClassHooks.findLoaded(ClassLoader, String). */
static jobject JNICALL hooks_find_loaded(JNIEnv *env, jclass unused, jobject loader, jstring name)
{
    (void)unused;
    jclass cl = (*env)->FindClass(env, "java/lang/ClassLoader");
    jmethodID m = cl ? (*env)->GetMethodID(env, cl, "findLoadedClass",
                                           "(Ljava/lang/String;)Ljava/lang/Class;") : NULL;
    return m ? (*env)->CallObjectMethod(env, loader, m, name) : NULL;
}

static const JNINativeMethod natives[] = {
    {"arm", "([Ljava/lang/String;)V", (void *)hooks_arm},
    {"retransform", "([Ljava/lang/Class;)V", (void *)hooks_retransform},
    {"staticField", "(Ljava/lang/Class;Ljava/lang/String;Ljava/lang/String;)Ljava/lang/Object;",
     (void *)hooks_static_field},
    {"findLoaded", "(Ljava/lang/ClassLoader;Ljava/lang/String;)Ljava/lang/Class;",
     (void *)hooks_find_loaded},
};

static p4j_status install_locked(JNIEnv *env, p4j_error *err)
{
    JavaVM *vm = NULL;
    if ((*env)->GetJavaVM(env, &vm) != 0 ||
        (*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: this JVM grants no JVMTI environment");
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_retransform_classes = 1;
    caps.can_generate_all_class_hook_events = 1;
    jvmtiError e = (*jvmti)->AddCapabilities(jvmti, &caps);
    if (e != JVMTI_ERROR_NONE)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: JVMTI refuses class retransformation "
                             "in a running JVM (error %d)", (int)e);
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ClassFileLoadHook = on_class_file;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: JVMTI SetEventCallbacks failed");
    jclass cls = (*env)->FindClass(env, "org/py4jni/ClassHooks");
    if (!cls) {
        (*env)->ExceptionClear(env);
        return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: class org/py4jni/ClassHooks not found "
                             "(helper jar out of date?)");
    }
    transform_mid = (*env)->GetStaticMethodID(
        env, cls, "transform", "(Ljava/lang/ClassLoader;Ljava/lang/String;[B)[B");
    if (!transform_mid || (*env)->RegisterNatives(env, cls, natives,
                                                  (jint)(sizeof natives / sizeof *natives)) != 0) {
        (*env)->DeleteLocalRef(env, cls);
        return p4j_jvm_capture_exception(env, err) == P4J_OK
                   ? p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: ClassHooks' natives not bound")
                   : P4J_ERROR;
    }
    hooks_class = (*env)->NewGlobalRef(env, cls);
    (*env)->DeleteLocalRef(env, cls);
    installed = true;
    return P4J_OK;
}

p4j_status p4j_classhooks_install(p4j_error *err)
{
    JNIEnv *env = p4j_jvm_env(err);
    if (!env)
        return P4J_ERROR;
    pthread_mutex_lock(&lock);
    p4j_status st = installed ? P4J_OK : install_locked(env, err);
    pthread_mutex_unlock(&lock);
    return st;
}
