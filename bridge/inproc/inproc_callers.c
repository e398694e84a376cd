/* bridge/inproc/inproc_callers.c - a Java caller for caller-sensitive methods.
 *
 * A caller-sensitive JDK method (Logger.getLogger, Class.forName, setAccessible, ...)
 * asks the JVM for the class that called it; called by JNI from a thread with no Java
 * frame it finds none. Such methods are decided once, when resolved (p4jj_caller_plan,
 * asking org.py4jni.Bridge.callerSensitive), and called through
 * org.py4jni.CallerFrame, whose Method.invoke makes CallerFrame their caller, as
 * py4j's server's classes are under py4j. Every other method keeps the direct JNI call.
 */
#include <pthread.h>
#include <stdbool.h>

#include "fault.h"
#include "inproc_internal.h"
#include "jvm.h"
#include "jvm_classes.h"

/* CallerFrame's invoke<R> methods, one per result kind: X(field, "name", "result"). */
#define P4J_FRAME_TABLE(X)                  \
    X(invokeV, "invokeV", "V")              \
    X(invokeZ, "invokeZ", "Z")              \
    X(invokeB, "invokeB", "B")              \
    X(invokeC, "invokeC", "C")              \
    X(invokeS, "invokeS", "S")              \
    X(invokeI, "invokeI", "I")              \
    X(invokeJ, "invokeJ", "J")              \
    X(invokeF, "invokeF", "F")              \
    X(invokeD, "invokeD", "D")              \
    X(invokeL, "invokeL", "Ljava/lang/Object;")

#define P4J_FRAME_ARGS "(Ljava/lang/reflect/Method;Ljava/lang/Object;[Ljava/lang/Object;)"

static struct {
    jclass CallerFrame;
#define P4J_FRAME_FIELD(field, name, ret) jmethodID field;
    P4J_FRAME_TABLE(P4J_FRAME_FIELD)
#undef P4J_FRAME_FIELD
} frame;
static int frame_ready;
static pthread_mutex_t frame_lock = PTHREAD_MUTEX_INITIALIZER;

/* Resolves CallerFrame's class and methods once (on the first caller-sensitive method,
 * so that start-up does not load the class). Any thread. */
static p4j_status frame_resolve(JNIEnv *env, p4j_error *err)
{
    if (__atomic_load_n(&frame_ready, __ATOMIC_ACQUIRE))
        return P4J_OK;
    static const p4j_row rows[] = {
        P4J_CLASS_ROW(frame, CallerFrame, "org/py4jni/CallerFrame")
#define P4J_FRAME_ROW(field, name, ret) \
        P4J_METHOD_ROW(frame, field, CallerFrame, 1, name, P4J_FRAME_ARGS ret)
        P4J_FRAME_TABLE(P4J_FRAME_ROW)
#undef P4J_FRAME_ROW
    };
    pthread_mutex_lock(&frame_lock);
    p4j_status st = P4J_OK;
    if (!frame_ready &&
        (st = p4j_rows_resolve(env, rows, sizeof rows / sizeof *rows, "py4jni CallerFrame",
                               err)) == P4J_OK)
        __atomic_store_n(&frame_ready, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&frame_lock);
    return st;
}

p4j_status p4jj_caller_plan(JNIEnv *env, p4jj_member *m, jobject member, p4j_error *err)
{
    jobject via = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_callerSensitive,
                                                 member);
    if (p4j_jvm_capture_exception(env, err) != P4J_OK)
        return P4J_ERROR;
    if (!via)
        return P4J_OK;
    p4j_status st = P4J_FAULT("caller.plan")
                        ? p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: injected fault caller.plan")
                        : frame_resolve(env, err);
    if (st == P4J_OK && !(m->via_frame = p4j_jvm_global_new(env, via)))
        st = p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    (*env)->DeleteLocalRef(env, via);
    if (st == P4J_OK)
        m->short_call = false; /* a call through Java is never a short one */
    return st;
}

/* Boxes primitive argument `a` of conversion `conv` into a new local ref; on failure
 * an exception is pending. */
static jobject box(JNIEnv *env, p4j_conv conv, jvalue a)
{
    switch (conv) {
    case CONV_Z: return (*env)->CallStaticObjectMethod(env, p4j_jc.Boolean, p4j_jc.Boolean_valueOf, a.z);
    case CONV_B: return (*env)->CallStaticObjectMethod(env, p4j_jc.Byte, p4j_jc.Byte_valueOf, a.b);
    case CONV_C: return (*env)->CallStaticObjectMethod(env, p4j_jc.Character, p4j_jc.Character_valueOf, a.c);
    case CONV_S: return (*env)->CallStaticObjectMethod(env, p4j_jc.Short, p4j_jc.Short_valueOf, a.s);
    case CONV_I: return (*env)->CallStaticObjectMethod(env, p4j_jc.Integer, p4j_jc.Integer_valueOf, a.i);
    case CONV_J: return (*env)->CallStaticObjectMethod(env, p4j_jc.Long, p4j_jc.Long_valueOf, a.j);
    case CONV_F: return (*env)->CallStaticObjectMethod(env, p4j_jc.Float, p4j_jc.Float_valueOf, a.f);
    default: return (*env)->CallStaticObjectMethod(env, p4j_jc.Double, p4j_jc.Double_valueOf, a.d);
    }
}

void p4jj_invoke_in_frame(JNIEnv *env, const p4jj_member *m, jobject obj, const jvalue *a,
                          jvalue *rv)
{
    if ((*env)->PushLocalFrame(env, 4) != 0)
        return; /* OutOfMemoryError pending */
    jobject result = NULL;
    jobjectArray args = (*env)->NewObjectArray(env, m->nargs, p4j_jc.Object, NULL);
    if (!args)
        goto done;
    for (size_t i = 0; i < m->nargs; i++) {
        bool prim = m->conv[i] <= CONV_D; /* CONV_Z .. CONV_D: a primitive parameter */
        jobject arg = prim ? box(env, (p4j_conv)m->conv[i], a[i]) : a[i].l;
        if (prim && (*env)->ExceptionCheck(env))
            goto done;
        (*env)->SetObjectArrayElement(env, args, (jsize)i, arg);
        if (prim)
            (*env)->DeleteLocalRef(env, arg);
    }
    jvalue fa[3] = {{.l = m->via_frame}, {.l = m->callstatic ? NULL : obj}, {.l = args}};
    jclass fc = frame.CallerFrame;
    switch ((p4j_rconv)m->rconv) {
    case RCONV_VOID: (*env)->CallStaticVoidMethodA(env, fc, frame.invokeV, fa); break;
#define P4J_FRAME_CASE(L, ctype, field, Name)                                      \
    case RCONV_##L: rv->field = (*env)->CallStatic##Name##MethodA(env, fc, frame.invoke##L, fa); \
        break;
        P4J_PRIM_TABLE(P4J_FRAME_CASE)
#undef P4J_FRAME_CASE
    default: result = (*env)->CallStaticObjectMethodA(env, fc, frame.invokeL, fa); break;
    }
done:
    result = (*env)->PopLocalFrame(env, result);
    if (m->rconv >= RCONV_STRING)
        rv->l = result;
}
