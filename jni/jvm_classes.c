/* jni/jvm_classes.c - resolves the cached class/method table (see jvm_classes.h). */
#include "jvm_classes.h"

#include "jvm.h"

p4j_jclasses p4j_jc;

p4j_status p4j_classes_init(JNIEnv *env, p4j_error *err)
{
    jclass local;
#define P4J_CLASS_RESOLVE(field, name)                                              \
    local = (*env)->FindClass(env, name);                                           \
    if (!local) {                                                                   \
        (*env)->ExceptionClear(env);                                                \
        return p4j_error_set(err, P4J_ERR_BRIDGE,                                   \
                             "py4jni start-up: class %s not found (is the helper "  \
                             "jar on the class path?)", name);                      \
    }                                                                               \
    p4j_jc.field = (jclass)p4j_jvm_global_new(env, local);                          \
    (*env)->DeleteLocalRef(env, local);
    P4J_CLASS_TABLE(P4J_CLASS_RESOLVE)
#undef P4J_CLASS_RESOLVE

#define P4J_METHOD_RESOLVE(field, cls, is_static, name, sig)                            \
    p4j_jc.field = (is_static) ? (*env)->GetStaticMethodID(env, p4j_jc.cls, name, sig)  \
                               : (*env)->GetMethodID(env, p4j_jc.cls, name, sig);       \
    if (!p4j_jc.field) {                                                                \
        (*env)->ExceptionClear(env);                                                    \
        return p4j_error_set(err, P4J_ERR_BRIDGE,                                       \
                             "py4jni start-up: method %s.%s%s not found (helper jar "   \
                             "out of date?)", #cls, name, sig);                         \
    }
    P4J_METHOD_TABLE(P4J_METHOD_RESOLVE)
#undef P4J_METHOD_RESOLVE
    return P4J_OK;
}
