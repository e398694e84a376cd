/* jni/jvm_classes.c - resolves the cached class/method table (see jvm_classes.h). */
#include "jvm_classes.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jvm.h"

p4j_jclasses p4j_jc;

/* A lookup that failed: `fmt` when Java says the class or member is missing
 * (NoClassDefFoundError, NoSuchMethodError, NoSuchFieldError...); any other throwable
 * (StackOverflowError, OutOfMemoryError: the lookup could not run) is the error, as it
 * is, so that it is not taken for a missing jar. */
static p4j_status not_found(JNIEnv *env, p4j_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static p4j_status not_found(JNIEnv *env, p4j_error *err, const char *fmt, ...)
{
    if ((*env)->ExceptionCheck(env) && p4j_jvm_capture_exception(env, err) != P4J_OK &&
        err->java_class && !strstr(err->java_class, "NoClassDefFound") &&
        !strstr(err->java_class, "ClassNotFound") && !strstr(err->java_class, "NoSuch"))
        return P4J_ERROR;
    if (err->throwable.handle)
        p4j_jvm_global_delete(env, (jobject)err->throwable.handle);
    err->throwable.handle = NULL;
    p4j_error_clear(NULL, err);
    (*env)->ExceptionClear(env);
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return p4j_error_set(err, P4J_ERR_BRIDGE, "%s", text);
}

p4j_status p4j_rows_resolve(JNIEnv *env, const p4j_row *rows, size_t n, const char *who,
                            p4j_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const p4j_row *r = &rows[i];
        if (r->kind == P4J_ROW_CLASS) {
            jclass local = (*env)->FindClass(env, r->name);
            if (!local)
                return not_found(env, err, "%s: class %s not found (is the helper jar on "
                                 "the class path, and current?)", who, r->name);
            *(jclass *)r->slot = (jclass)p4j_jvm_global_new(env, local);
            (*env)->DeleteLocalRef(env, local);
            continue;
        }
        jclass cls = *r->cls;
        bool method = r->kind == P4J_ROW_METHOD || r->kind == P4J_ROW_STATIC_METHOD;
        void *id;
        switch (r->kind) {
        case P4J_ROW_METHOD:
            id = (*env)->GetMethodID(env, cls, r->name, r->sig);
            break;
        case P4J_ROW_STATIC_METHOD:
            id = (*env)->GetStaticMethodID(env, cls, r->name, r->sig);
            break;
        case P4J_ROW_FIELD:
            id = (*env)->GetFieldID(env, cls, r->name, r->sig);
            break;
        default:
            id = (*env)->GetStaticFieldID(env, cls, r->name, r->sig);
            break;
        }
        if (!id)
            return not_found(env, err, "%s: %s %s.%s %s not found (helper jar out of "
                             "date?)", who, method ? "method" : "field", r->owner, r->name,
                             r->sig);
        if (method)
            *(jmethodID *)r->slot = (jmethodID)id;
        else
            *(jfieldID *)r->slot = (jfieldID)id;
    }
    return P4J_OK;
}

#define JC_CLASS_ROW(field, bin) P4J_CLASS_ROW(p4j_jc, field, bin)
#define JC_METHOD_ROW(field, c, st, nm, sg) P4J_METHOD_ROW(p4j_jc, field, c, st, nm, sg)
static const p4j_row jc_rows[] = {P4J_CLASS_TABLE(JC_CLASS_ROW) P4J_METHOD_TABLE(JC_METHOD_ROW)};

p4j_status p4j_classes_init(JNIEnv *env, p4j_error *err)
{
    return p4j_rows_resolve(env, jc_rows, sizeof jc_rows / sizeof *jc_rows, "py4jni start-up",
                            err);
}

static struct {
    jclass BigDecimal;
    jmethodID BigDecimal_new;
} decimal;
static int decimal_ready;
static pthread_mutex_t decimal_lock = PTHREAD_MUTEX_INITIALIZER;

p4j_status p4j_jc_decimal(JNIEnv *env, jclass *cls, jmethodID *ctor, p4j_error *err)
{
    if (!__atomic_load_n(&decimal_ready, __ATOMIC_ACQUIRE)) {
        static const p4j_row rows[] = {
            P4J_CLASS_ROW(decimal, BigDecimal, "java/math/BigDecimal")
            P4J_METHOD_ROW(decimal, BigDecimal_new, BigDecimal, 0, "<init>",
                           "(Ljava/lang/String;)V")};
        pthread_mutex_lock(&decimal_lock);
        p4j_status st = P4J_OK;
        if (!decimal_ready &&
            (st = p4j_rows_resolve(env, rows, 2, "py4jni decimals", err)) == P4J_OK)
            __atomic_store_n(&decimal_ready, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&decimal_lock);
        if (st != P4J_OK)
            return st;
    }
    *cls = decimal.BigDecimal;
    if (ctor)
        *ctor = decimal.BigDecimal_new;
    return P4J_OK;
}
