/* bridge/inproc/inproc.c - the in-process transport: p4j_client_ops through JNI.
 *
 * The hot entry points (call, construct, field get/set) push no local frame: they
 * delete the local references they create one by one (hot_enter). The others run
 * inside one frame (p4j_inproc_enter) popped on their single exit path
 * (p4j_inproc_leave). Any thread may call (threads attach as daemons in p4j_jvm_env).
 */
#include "inproc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inproc_bulk.h"
#include "inproc_internal.h"
#include "jstrings.h"
#include "jvm_classes.h"

typedef struct inproc_client {
    struct p4j_client base;
    jobject default_view; /* global ref to the client's own JVMView (py4j's "rj") */
    uint64_t context_id;  /* the org.py4jni.CallContext its calls run for; 0: none */
} inproc_client;

/* The id of the CallContext the calling thread entered last (0: none), and
 * CallContext.restore(id), which makes a context the Java thread's (set once, by the
 * first p4j_inproc_set_context). */
__thread uint64_t p4j_thread_context __attribute__((tls_model("initial-exec")));
static jclass context_class;
static jmethodID context_restore;

p4j_status p4j_inproc_enter_context(JNIEnv *env, uint64_t id, p4j_error *err)
{
    jmethodID restore = __atomic_load_n(&context_restore, __ATOMIC_ACQUIRE);
    if (!restore) /* no context was ever set: every thread is in none */
        return P4J_OK;
    (*env)->CallStaticVoidMethod(env, context_class, restore, (jlong)id);
    if (p4j_jvm_capture_exception(env, err) != P4J_OK)
        return P4J_ERROR;
    p4j_thread_context = id;
    return P4J_OK;
}

/* Makes `c`'s context the calling thread's when it is another: the hot paths pay a
 * thread-local read and a compare. A failure leaves the thread as it was and fails
 * the call. */
static inline p4j_status context_for(JNIEnv *env, const p4j_client *c, p4j_error *err)
{
    uint64_t want = __atomic_load_n(&((const inproc_client *)c)->context_id, __ATOMIC_RELAXED);
    if (__builtin_expect(want == p4j_thread_context, 1))
        return P4J_OK;
    return p4j_inproc_enter_context(env, want, err);
}

/* CallContext.release(id): the context of a client that no longer has it. */
static void release_context(JNIEnv *env, uint64_t id)
{
    jmethodID release = id ? (*env)->GetStaticMethodID(env, context_class, "release", "(J)V")
                           : NULL;
    if (release)
        (*env)->CallStaticVoidMethod(env, context_class, release, (jlong)id);
    (*env)->ExceptionCheck(env); /* -Xcheck:jni: checked before the clear */
    (*env)->ExceptionClear(env);
}

p4j_status p4j_inproc_set_context(p4j_client *c, jobject context, p4j_error *err)
{
    JNIEnv *env = p4j_jvm_env(err);
    if (!env)
        return P4J_ERROR;
    if (!__atomic_load_n(&context_restore, __ATOMIC_ACQUIRE)) {
        jclass cls = (*env)->FindClass(env, "org/py4jni/CallContext");
        jmethodID m = cls ? (*env)->GetStaticMethodID(env, cls, "restore", "(J)V") : NULL;
        if (!m) {
            if (cls)
                (*env)->DeleteLocalRef(env, cls);
            return p4j_jvm_capture_exception(env, err) == P4J_OK
                       ? p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: no CallContext.restore")
                       : P4J_ERROR;
        }
        context_class = (jclass)p4j_jvm_global_new(env, cls);
        (*env)->DeleteLocalRef(env, cls);
        __atomic_store_n(&context_restore, m, __ATOMIC_RELEASE);
    }
    uint64_t id = 0;
    if (context) {
        jmethodID get_id = (*env)->GetMethodID(env, context_class, "id", "()J");
        if (!(*env)->IsInstanceOf(env, context, context_class))
            return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: not an org.py4jni.CallContext");
        id = get_id ? (uint64_t)(*env)->CallLongMethod(env, context, get_id) : 0;
        if (p4j_jvm_capture_exception(env, err) != P4J_OK)
            return P4J_ERROR;
    }
    inproc_client *ic = (inproc_client *)c;
    uint64_t old = __atomic_exchange_n(&ic->context_id, id, __ATOMIC_RELAXED);
    release_context(env, old);
    return P4J_OK;
}

static const p4j_client_ops inproc_ops;

bool p4j_client_is_inproc(const p4j_client *c) { return c && c->ops == &inproc_ops; }

JNIEnv *p4j_inproc_enter(p4j_client *c, p4j_value *out, jint capacity, p4j_error *err)
{
    if (out) {
        out->kind = P4J_NULL;
        out->owned = NULL;
        out->ref.handle = out->ref.cls = NULL;
    }
    if (c->closed) {
        p4j_error_set(err, P4J_ERR_CLOSED, "py4jni: the gateway has been shut down");
        return NULL;
    }
    JNIEnv *env = p4j_jvm_env(err);
    if (env && (*env)->PushLocalFrame(env, capacity) != 0) {
        p4j_jvm_capture_exception(env, err);
        return NULL;
    }
    if (env && context_for(env, c, err) != P4J_OK) {
        (*env)->PopLocalFrame(env, NULL);
        return NULL;
    }
    return env;
}

p4j_status p4j_inproc_leave(JNIEnv *env, p4j_status st)
{
    (*env)->PopLocalFrame(env, NULL);
    return st;
}

/* Returns the p4jj_class of `target` (an object, or a class when is_class), caching it. */
static p4jj_class *target_class(JNIEnv *env, const p4j_ref *target, bool is_class,
                               p4j_error *err)
{
    p4j_ref *t = (p4j_ref *)target; /* the cls slot is a cache the caller lends us */
    if (__builtin_expect(t->cls != NULL, 1))
        return t->cls;
    t->cls = is_class ? p4jj_class_get(env, (jclass)t->handle, err)
                      : p4jj_class_of(env, (jobject)t->handle, err);
    return t->cls;
}

static p4j_status null_target(p4j_error *err)
{
    return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: the target object is null");
}

/* The JVMView of `view` (the client's default one for none), or NULL with `err` set when
 * it is another object: JNI does not check the type a helper method declares. */
static jobject view_of(JNIEnv *env, p4j_client *c, const p4j_ref *view, p4j_error *err)
{
    if (!view || !view->handle)
        return ((inproc_client *)c)->default_view;
    if (!(*env)->IsInstanceOf(env, (jobject)view->handle, p4j_jc.JVMView)) {
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: the view is not a JVMView");
        return NULL;
    }
    return (jobject)view->handle;
}

/* Invokes `m` and stores the raw result in *rv (through CallerFrame when `m` is
 * caller-sensitive). */
static void invoke(JNIEnv *env, const p4jj_member *m, jclass cls, jobject obj,
                   const jvalue *a, jvalue *rv)
{
    if (__builtin_expect(m->via_frame != NULL, 0)) { /* caller-sensitive: a Java caller */
        p4jj_invoke_in_frame(env, m, obj, a, rv);
        return;
    }
    bool st = m->callstatic;
    switch ((p4j_rconv)m->rconv) {
    case RCONV_VOID:
        if (st) (*env)->CallStaticVoidMethodA(env, cls, m->mid, a);
        else (*env)->CallVoidMethodA(env, obj, m->mid, a);
        break;
#define P4J_INVOKE_CASE(L, ctype, field, Name)                                          \
    case RCONV_##L:                                                                     \
        rv->field = st ? (*env)->CallStatic##Name##MethodA(env, cls, m->mid, a)         \
                       : (*env)->Call##Name##MethodA(env, obj, m->mid, a);              \
        break;
        P4J_PRIM_TABLE(P4J_INVOKE_CASE)
#undef P4J_INVOKE_CASE
    default:
        rv->l = st ? (*env)->CallStaticObjectMethodA(env, cls, m->mid, a)
                   : (*env)->CallObjectMethodA(env, obj, m->mid, a);
        break;
    }
}

/* Prologue of the hot entry points (no local frame): resets `out`, checks the client
 * and the target and returns the env with the target's class in *pc. */
static JNIEnv *hot_enter(p4j_client *c, const p4j_ref *target, bool is_class, p4j_value *out,
                         p4jj_class **pc, p4j_error *err)
{
    out->kind = P4J_NULL;
    out->owned = NULL;
    out->ref.handle = out->ref.cls = NULL;
    if (__builtin_expect(c->closed, 0)) {
        p4j_error_set(err, P4J_ERR_CLOSED, "py4jni: the gateway has been shut down");
        return NULL;
    }
    JNIEnv *env = p4j_jvm_env(err);
    if (!env || context_for(env, c, err) != P4J_OK)
        return NULL;
    if (!target || !target->handle) {
        null_target(err);
        return NULL;
    }
    return (*pc = target_class(env, target, is_class, err)) ? env : NULL;
}

/* The Java part of a call whose member `m` (on class `pc`) is resolved: converts the
 * arguments, invokes, converts the result. No local frame: the references it creates
 * (converted arguments, an object result) are deleted one by one, cheaper than a frame. */
static inline __attribute__((always_inline)) p4j_status
call_member(JNIEnv *env, p4jj_class *pc, p4jj_member *m, const p4j_ref *target, unsigned flags,
            const p4j_value *args, size_t nargs, p4j_value *out, p4j_error *err)
{
    bool is_static = flags & P4J_CALL_STATIC;
    jvalue jargs[P4J_MAX_ARGS + 1], rv = {0};
    p4j_status st = nargs ? p4j_args_to_java(env, m, args, jargs, err) : P4J_OK;
    if (st != P4J_OK)
        return st; /* no reference left by the conversion */
    invoke(env, m, pc->cls, (jobject)target->handle, jargs, &rv);
    if ((*env)->ExceptionCheck(env)) {
        st = p4j_jvm_capture_exception_text(env, err, !(flags & P4J_CALL_NO_ERROR_TEXT));
    } else if (p4j_scalar_result((p4j_rconv)m->rconv, rv, out)) {
        /* done: a primitive or void result */
    } else if (m->rconv == RCONV_BYTES && rv.l) {
        /* the local reference itself, read and deleted by read_bytes on this thread */
        p4j_bytes_local(env, rv.l, out);
    } else if (m->rconv == RCONV_OBJECT && !is_static && rv.l &&
               (*env)->IsSameObject(env, rv.l, (jobject)target->handle)) {
        out->kind = P4J_SELF; /* spares a global ref and a Python object */
        (*env)->DeleteLocalRef(env, rv.l);
    } else {
        st = p4j_result_from_java(env, (p4j_rconv)m->rconv, m, rv, true, out, err);
        bool handed_over = st == P4J_OK && out->kind == P4J_BYTES &&
                           out->ref.cls == P4J_BYTES_LOCAL; /* an Object-typed byte[] */
        if (m->rconv >= RCONV_STRING && rv.l && !handed_over)
            (*env)->DeleteLocalRef(env, rv.l);
    }
    if (m->arg_refs)
        p4j_args_drop(env, m, jargs, nargs);
    return st;
}

/* String arguments longer than this (UTF-16 units or bytes) make any call a long one. */
#define SHORT_CALL_MAX_CHARS 65536

/* For P4J_CALL_LOCK_HELD: the member of kind `kind` of a call that may keep the caller's
 * lock (cached already, on the allowlist of bridge/inproc/inproc_short.c, short String arguments,
 * the thread attached, the target's class known), else NULL. Sets *penv to the thread's
 * env when it returns a member, and *found to the cached member of any other call (NULL
 * when not cached), so that the call does not look it up again. Calls no Java. */
static inline __attribute__((always_inline)) p4jj_member *
short_member(p4j_client *c, void **site, const p4j_ref *target, p4jj_member_kind kind,
             const char *name, size_t name_len, bool named, const p4j_value *args,
             size_t nargs, JNIEnv **penv, p4jj_member **found)
{
    *found = NULL;
    if (c->closed || !target || !target->handle || !target->cls ||
        !(*penv = p4j_jvm_env_attached()))
        return NULL;
    p4jj_member *m = p4jj_member_at(site, target->cls, kind, name, name_len, named, args, nargs);
    if (!m && (m = p4jj_member_peek(target->cls, kind, name, name_len, args, nargs)) && site)
        __atomic_store_n((p4jj_member **)site, m, __ATOMIC_RELEASE);
    *found = m;
    if (!m || !m->short_call)
        return NULL;
    for (size_t i = 0; i < nargs; i++)
        if (args[i].kind == P4J_STRING && args[i].u.s.len > SHORT_CALL_MAX_CHARS)
            return NULL;
    return m;
}

/* Hot path (call and call_at): the member at `site`, else looked up by name (resolved
 * in Java on a miss) and kept at `site`. With P4J_CALL_LOCK_HELD the caller's lock (the
 * GIL) is kept for a short call and released around any other. One path to
 * call_member, so that it is inlined: nested callbacks stack one frame per level. */
static p4j_status inproc_call_at(p4j_client *c, void **site, const p4j_ref *target,
                                 unsigned flags, const char *name, size_t name_len,
                                 const p4j_value *args, size_t nargs, p4j_value *out,
                                 p4j_error *err)
{
    void *saved = NULL;
    p4jj_member *m = NULL, *found = NULL;
    p4jj_class *pc = NULL;
    JNIEnv *env = NULL;
    p4j_status st = P4J_ERROR;
    if (flags & P4J_CALL_LOCK_HELD) {
        m = short_member(c, site, target,
                         flags & P4J_CALL_STATIC ? P4JJ_MEMBER_STATIC_METHOD : P4JJ_MEMBER_METHOD,
                         name, name_len, false, args, nargs, &env, &found);
        if (!m)
            saved = c->unlock();
    }
    if (m) { /* short: everything is known, no Java before the call itself */
        out->kind = P4J_NULL;
        out->owned = NULL;
        out->ref.handle = out->ref.cls = NULL;
        pc = target->cls;
    } else {
        bool is_static = flags & P4J_CALL_STATIC;
        if (!(env = hot_enter(c, target, is_static, out, &pc, err)))
            goto done;
        p4jj_member_kind kind = is_static ? P4JJ_MEMBER_STATIC_METHOD : P4JJ_MEMBER_METHOD;
        if (found && found->owner == pc) /* short_member's lookup, on the same class */
            m = found;
        else if (!(m = p4jj_member_at(site, pc, kind, name, name_len, false, args, nargs))) {
            if (!(m = p4jj_member_find(env, pc, kind, name, name_len, args, nargs, err)))
                goto done;
            if (site)
                __atomic_store_n((p4jj_member **)site, m, __ATOMIC_RELEASE);
        }
    }
    st = call_member(env, pc, m, target, flags, args, nargs, out, err);
done:
    if (saved)
        c->relock(saved);
    return st;
}

static p4j_status inproc_call(p4j_client *c, const p4j_ref *target, unsigned flags,
                              const char *name, size_t name_len, const p4j_value *args,
                              size_t nargs, p4j_value *out, p4j_error *err)
{
    return inproc_call_at(c, NULL, target, flags, name, name_len, args, nargs, out, err);
}

/* construct and construct_at: the constructor at `site`, else looked up (resolved in
 * Java on a miss) and kept there; the caller's lock kept for a short one (see
 * inproc_call_at). */
static p4j_status inproc_construct_at(p4j_client *c, void **site, const p4j_ref *cls,
                                      unsigned flags, const p4j_value *args, size_t nargs,
                                      p4j_value *out, p4j_error *err)
{
    void *saved = NULL;
    p4jj_member *m = NULL, *found = NULL;
    p4jj_class *pc = NULL;
    JNIEnv *env = NULL;
    p4j_status st = P4J_ERROR;
    if (flags & P4J_CALL_LOCK_HELD) {
        m = short_member(c, site, cls, P4JJ_MEMBER_CTOR, "<init>", 6, true, args, nargs,
                         &env, &found); /* a constructor's kind is its name */
        if (!m)
            saved = c->unlock();
    }
    if (m) {
        out->kind = P4J_NULL;
        out->owned = NULL;
        out->ref.handle = out->ref.cls = NULL;
        pc = cls->cls;
    } else {
        if (!(env = hot_enter(c, cls, true, out, &pc, err)))
            goto done;
        if (found && found->owner == pc) /* short_member's lookup, on the same class */
            m = found;
        else if (!(m = p4jj_member_at(site, pc, P4JJ_MEMBER_CTOR, "<init>", 6, true, args,
                                      nargs))) {
            if (!(m = p4jj_member_find(env, pc, P4JJ_MEMBER_CTOR, "<init>", 6, args, nargs,
                                       err)))
                goto done;
            if (site)
                __atomic_store_n((p4jj_member **)site, m, __ATOMIC_RELEASE);
        }
    }
    jvalue jargs[P4J_MAX_ARGS + 1];
    st = nargs ? p4j_args_to_java(env, m, args, jargs, err) : P4J_OK;
    if (st == P4J_OK) { /* (a failed conversion left no reference) */
        jobject obj = (*env)->NewObjectA(env, pc->cls, m->mid, jargs);
        if ((*env)->ExceptionCheck(env)) {
            st = p4j_jvm_capture_exception(env, err);
        } else {
            st = p4j_object_of_class(env, obj, pc, out, err);
            (*env)->DeleteLocalRef(env, obj);
        }
        if (m->arg_refs)
            p4j_args_drop(env, m, jargs, nargs);
    }
done:
    if (saved)
        c->relock(saved);
    return st;
}

static p4j_status inproc_construct(p4j_client *c, const p4j_ref *cls, const p4j_value *args,
                                   size_t nargs, p4j_value *out, p4j_error *err)
{
    return inproc_construct_at(c, NULL, cls, 0, args, nargs, out, err);
}

/* Finds the cached field `name` of `target`. */
static p4jj_member *find_field(JNIEnv *env, const p4j_ref *target, bool is_static,
                              const char *name, p4jj_class **pc, p4j_error *err)
{
    if (!target || !target->handle) {
        null_target(err);
        return NULL;
    }
    *pc = target_class(env, target, is_static, err);
    if (!*pc)
        return NULL;
    return p4jj_member_find(env, *pc, is_static ? P4JJ_MEMBER_STATIC_FIELD : P4JJ_MEMBER_FIELD,
                            name, strlen(name), NULL, 0, err);
}

static p4j_status inproc_field_get(p4j_client *c, const p4j_ref *target, unsigned flags,
                                   const char *name, p4j_value *out, p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    bool st = flags & P4J_CALL_STATIC;
    p4jj_class *pc = NULL;
    p4jj_member *m = find_field(env, target, st, name, &pc, err);
    if (!m)
        return p4j_inproc_leave(env, P4J_ERROR);
    jobject obj = (jobject)target->handle;
    jvalue rv = {0};
    switch ((p4j_rconv)m->rconv) {
#define P4J_GET_CASE(L, ctype, field, Name)                                                  \
    case RCONV_##L:                                                                          \
        rv.field = st ? (*env)->GetStatic##Name##Field(env, pc->cls, m->fid)                 \
                      : (*env)->Get##Name##Field(env, obj, m->fid);                          \
        break;
        P4J_PRIM_TABLE(P4J_GET_CASE)
#undef P4J_GET_CASE
    default:
        rv.l = st ? (*env)->GetStaticObjectField(env, pc->cls, m->fid)
                  : (*env)->GetObjectField(env, obj, m->fid);
        break;
    }
    p4j_status done = p4j_result_from_java(env, (p4j_rconv)m->rconv, NULL, rv, false, out, err);
    return p4j_inproc_leave(env, done);
}

static p4j_status inproc_field_set(p4j_client *c, const p4j_ref *target, unsigned flags,
                                   const char *name, const p4j_value *value, p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, NULL, 8, err);
    if (!env)
        return P4J_ERROR;
    bool st = flags & P4J_CALL_STATIC;
    p4jj_class *pc = NULL;
    p4jj_member *m = find_field(env, target, st, name, &pc, err);
    if (!m)
        return p4j_inproc_leave(env, P4J_ERROR);
    if (m->final)
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE,
                                        "py4jni: field %s is final and cannot be assigned", name));
    /* A one-argument plan for this value's kind against the field's type, checked as
     * method arguments are: the conversion must yield a value of the field's type. */
    p4jj_member plan = {.nargs = 1};
    plan.keys[0] = p4j_arg_key(value);
    plan.conv[0] = (uint8_t)p4j_conv_for(m->desc, plan.keys[0]);
    jclass vcls = plan.keys[0] == 'r' ? (*env)->GetObjectClass(env, (jobject)value->ref.handle)
                                      : NULL;
    if (p4j_check_conversion(env, (p4j_conv)plan.conv[0], plan.keys[0], vcls, m->ftype,
                             err) != P4J_OK) {
        char *tname = p4jj_class_name(env, m->ftype);
        char *vname = vcls ? p4jj_class_name(env, vcls) : NULL;
        if (value->kind == P4J_LONG && m->desc[0] && strchr("BSCI", m->desc[0]) && !m->desc[1])
            p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: cannot assign %lld to field %s of type "
                          "%s: out of the %s range", (long long)value->u.l, name,
                          tname ? tname : m->desc, tname ? tname : m->desc);
        else
            p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: cannot assign a %s%s%s%s to field %s of type %s",
                          p4j_key_python_name(plan.keys[0]), vname ? " (" : "", vname ? vname : "",
                          vname ? ")" : "", name, tname ? tname : m->desc);
        free(tname);
        free(vname);
        return p4j_inproc_leave(env, P4J_ERROR);
    }
    jvalue v;
    if (p4j_args_to_java(env, &plan, value, &v, err) != P4J_OK)
        return p4j_inproc_leave(env, P4J_ERROR);
    jobject obj = (jobject)target->handle;
    switch ((p4j_rconv)m->rconv) {
#define P4J_SET_CASE(L, ctype, field, Name)                                                  \
    case RCONV_##L:                                                                          \
        if (st) (*env)->SetStatic##Name##Field(env, pc->cls, m->fid, v.field);               \
        else (*env)->Set##Name##Field(env, obj, m->fid, v.field);                            \
        break;
        P4J_PRIM_TABLE(P4J_SET_CASE)
#undef P4J_SET_CASE
    default:
        if (v.l && m->ftype && !(*env)->IsInstanceOf(env, v.l, m->ftype))
            return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE,
                                            "py4jni: value of the wrong type for field %s (%s)",
                                            name, m->desc));
        if (st) (*env)->SetStaticObjectField(env, pc->cls, m->fid, v.l);
        else (*env)->SetObjectField(env, obj, m->fid, v.l);
        break;
    }
    return p4j_inproc_leave(env, p4j_jvm_capture_exception(env, err));
}

/* Sets `out` to a CLASS value for local class `cls`. */
static p4j_status class_value(JNIEnv *env, jclass cls, p4j_value *out, p4j_error *err)
{
    p4jj_class *pc = p4jj_class_get(env, cls, err);
    if (!pc)
        return P4J_ERROR;
    jstring name = (*env)->CallObjectMethod(env, cls, p4j_jc.Class_getName);
    if (p4j_jvm_failed(env, err))
        return P4J_ERROR;
    if (p4j_jstring_read(env, name, P4J_CLASS, out, err) != P4J_OK)
        return P4J_ERROR;
    out->ref.handle = p4j_jvm_global_new(env, cls);
    out->ref.cls = pc;
    return P4J_OK;
}

static p4j_status inproc_resolve(p4j_client *c, const p4j_ref *view, const char *name,
                                 p4j_value *out, p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    jobject jview = view_of(env, c, view, err);
    jstring jname = jview ? p4j_jstring_from_utf8(env, name, err) : NULL;
    if (!jname)
        return p4j_inproc_leave(env, P4J_ERROR);
    jclass cls = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_resolveClass,
                                                jview, jname);
    if ((*env)->ExceptionCheck(env))
        return p4j_inproc_leave(env, p4j_jvm_capture_exception(env, err));
    if (!cls) {
        out->kind = P4J_PACKAGE;
        return p4j_inproc_leave(env, P4J_OK);
    }
    return p4j_inproc_leave(env, class_value(env, cls, out, err));
}

static p4j_status inproc_static_member(p4j_client *c, const p4j_ref *cls, const char *name,
                                       p4j_value *out, p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    if (!cls || !cls->handle)
        return p4j_inproc_leave(env, null_target(err));
    jstring jname = p4j_jstring_from_utf8(env, name, err);
    if (!jname)
        return p4j_inproc_leave(env, P4J_ERROR);
    jint kind = (*env)->CallStaticIntMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_staticMemberKind,
                                            (jclass)cls->handle, jname);
    if ((*env)->ExceptionCheck(env))
        return p4j_inproc_leave(env, p4j_jvm_capture_exception(env, err));
    switch ((p4jj_static_kind)kind) {
    case P4JJ_STATIC_FIELD:
        (*env)->PopLocalFrame(env, NULL);
        return inproc_field_get(c, cls, P4J_CALL_STATIC, name, out, err);
    case P4JJ_STATIC_METHOD:
        out->kind = P4J_METHOD;
        return p4j_inproc_leave(env, P4J_OK);
    case P4JJ_STATIC_CLASS: {
        jclass nested = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge,
                                                       p4j_jc.Bridge_nestedClass,
                                                       (jclass)cls->handle, jname);
        if (p4j_jvm_failed(env, err))
            return p4j_inproc_leave(env, P4J_ERROR);
        if (!nested)
            return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE, "no nested class %s", name));
        return p4j_inproc_leave(env, class_value(env, nested, out, err));
    }
    case P4JJ_STATIC_NONE:
    default:
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE,
                                        "py4jni: no public static member %s", name));
    }
}

static p4j_status inproc_view_new(p4j_client *c, const char *name, p4j_value *out,
                                  p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    jstring jname = p4j_jstring_from_utf8(env, name ? name : "", err);
    if (!jname)
        return p4j_inproc_leave(env, P4J_ERROR);
    jobject view = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_newView, jname);
    if (p4j_jvm_failed(env, err))
        return p4j_inproc_leave(env, P4J_ERROR);
    out->kind = P4J_REF;
    out->ref.handle = p4j_jvm_global_new(env, view);
    return p4j_inproc_leave(env, P4J_OK);
}

static p4j_status inproc_view_import(p4j_client *c, const p4j_ref *view, const char *pattern,
                                     bool remove, p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, NULL, 8, err);
    if (!env)
        return P4J_ERROR;
    jobject jview = view_of(env, c, view, err);
    jstring jpat = jview ? p4j_jstring_from_utf8(env, pattern, err) : NULL;
    if (!jpat)
        return p4j_inproc_leave(env, P4J_ERROR);
    if (remove)
        (*env)->CallBooleanMethod(env, jview, p4j_jc.JVMView_removeImport, jpat);
    else
        (*env)->CallVoidMethod(env, jview, p4j_jc.JVMView_addImport, jpat);
    return p4j_inproc_leave(env, p4j_jvm_capture_exception(env, err));
}

/* Stores a String returned by a helper call into `out`. */
static p4j_status string_out(JNIEnv *env, jstring s, p4j_value *out, p4j_error *err)
{
    if ((*env)->ExceptionCheck(env))
        return p4j_jvm_capture_exception(env, err);
    if (!s) {
        out->kind = P4J_NULL;
        return P4J_OK;
    }
    return p4j_jstring_read(env, s, P4J_STRING, out, err);
}

static p4j_status inproc_dir(p4j_client *c, const p4j_ref *target, p4j_dir_kind kind,
                             p4j_value *out, p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    jobject t = target && target->handle ? (jobject)target->handle
                                         : ((inproc_client *)c)->default_view;
    jstring s = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_dir, t,
                                               (jchar)kind);
    return p4j_inproc_leave(env, string_out(env, s, out, err));
}

static p4j_status inproc_help(p4j_client *c, const p4j_ref *target, bool is_class,
                              const char *pattern, bool short_name, p4j_value *out,
                              p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    if (!target || !target->handle)
        return p4j_inproc_leave(env, null_target(err));
    jstring jpat = NULL;
    if (pattern && !(jpat = p4j_jstring_from_utf8(env, pattern, err)))
        return p4j_inproc_leave(env, P4J_ERROR);
    jstring s = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_help,
                                               (jobject)target->handle, (jboolean)is_class,
                                               jpat, (jboolean)short_name);
    return p4j_inproc_leave(env, string_out(env, s, out, err));
}

static p4j_status inproc_read_bytes(p4j_client *c, const p4j_value *v, uint8_t *dst,
                                    p4j_error *err)
{
    (void)c; /* reading a result already made is allowed even after shutdown */
    JNIEnv *env = p4j_jvm_env(err);
    if (!env)
        return P4J_ERROR;
    jbyteArray arr = (jbyteArray)v->ref.handle;
    if (!arr)
        return P4J_OK;
    if (dst && v->u.bytes.len)
        (*env)->GetByteArrayRegion(env, arr, 0, (jsize)v->u.bytes.len, (jbyte *)dst);
    if (v->ref.cls == P4J_BYTES_LOCAL)
        (*env)->DeleteLocalRef(env, arr);
    else
        p4j_jvm_global_delete(env, arr);
    ((p4j_value *)v)->ref.handle = NULL;
    return P4J_OK;
}

static p4j_status inproc_stack_trace(p4j_client *c, const p4j_ref *throwable, p4j_value *out,
                                     p4j_error *err)
{
    JNIEnv *env = p4j_inproc_enter(c, out, 8, err);
    if (!env)
        return P4J_ERROR;
    if (!throwable || !throwable->handle)
        return p4j_inproc_leave(env, null_target(err));
    if (!(*env)->IsInstanceOf(env, (jobject)throwable->handle, p4j_jc.Throwable))
        return p4j_inproc_leave(env, p4j_error_set(err, P4J_ERR_BRIDGE,
                                                   "py4jni: the object is not a Throwable"));
    jstring s = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_stackTrace,
                                               (jobject)throwable->handle);
    return p4j_inproc_leave(env, string_out(env, s, out, err));
}

static void inproc_release(p4j_client *c, p4j_ref *ref)
{
    (void)c; /* refs stay valid while the JVM lives: release them even after shutdown */
    if (!ref->handle)
        return;
    JNIEnv *env = p4j_jvm_env_or_null();
    if (env)
        p4j_jvm_global_delete(env, (jobject)ref->handle);
    ref->handle = NULL;
}

static p4j_status inproc_dup(p4j_client *c, const p4j_ref *ref, p4j_ref *out, p4j_error *err)
{
    (void)c;
    JNIEnv *env = p4j_jvm_env(err);
    if (!env)
        return P4J_ERROR;
    out->handle = p4j_jvm_global_new(env, (jobject)ref->handle);
    out->cls = ref->cls;
    return P4J_OK;
}

static void inproc_shutdown(p4j_client *c) { c->closed = 1; }

static void inproc_destroy(p4j_client *c)
{
    inproc_client *ic = (inproc_client *)c;
    p4j_error ignored = {0};
    JNIEnv *env = ic->context_id ? p4j_jvm_env(&ignored) : NULL;
    if (env)
        release_context(env, ic->context_id);
    p4j_error_clear(NULL, &ignored);
    p4j_ref view = {.handle = ic->default_view};
    inproc_release(c, &view);
    free(ic);
}

/* In-process refs are JNI global refs: the id text is the handle's address in hex. */
static void inproc_ref_id(p4j_client *c, const p4j_ref *ref, char *buf, size_t cap)
{
    (void)c;
    if (ref->handle)
        snprintf(buf, cap, "o%lx", (unsigned long)(uintptr_t)ref->handle);
    else
        snprintf(buf, cap, "null");
}

static const p4j_client_ops inproc_ops = {
    .name = "inproc",
    .caps = P4J_CAP_SHARED_REFS | P4J_CAP_CLASS_ARG | P4J_CAP_CALLBACKS | P4J_CAP_NATIVES |
            P4J_CAP_BUFFERS | P4J_CAP_LOCK_HELD,
    .call = inproc_call,
    .call_at = inproc_call_at,
    .construct_at = inproc_construct_at,
    .construct = inproc_construct,
    .field_get = inproc_field_get,
    .field_set = inproc_field_set,
    .resolve = inproc_resolve,
    .static_member = inproc_static_member,
    .view_new = inproc_view_new,
    .view_import = inproc_view_import,
    .dir = inproc_dir,
    .help = inproc_help,
    .read_bytes = inproc_read_bytes,
    .stack_trace = inproc_stack_trace,
    .release = inproc_release,
    .dup = inproc_dup,
    .shutdown = inproc_shutdown,
    .destroy = inproc_destroy,
    .ref_id = inproc_ref_id,
    /* bulk operations for collections and arrays (inproc_bulk.h) */
    .cursor_open = p4j_inproc_cursor_open,
    .cursor_next = p4j_inproc_cursor_next,
    .collection_new = p4j_inproc_collection_new,
    .array_info = p4j_inproc_array_info,
    .array_read = p4j_inproc_array_read,
    .array_write = p4j_inproc_array_write,
    .array_new = p4j_inproc_array_new,
};

p4j_status p4j_inproc_client_new(const p4j_jvm_options *opts, p4j_client **out,
                                 p4j_error *err)
{
    *out = NULL;
    if (p4j_jvm_start(opts, err) != P4J_OK)
        return P4J_ERROR;
    p4j_set_float_printer(p4j_jvm_floats_as_printed); /* py4j's float digits: the JVM's */
    JNIEnv *env = p4j_jvm_env(err);
    if (!env)
        return P4J_ERROR;
    inproc_client *ic = calloc(1, sizeof *ic);
    if (!ic)
        return p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    ic->base.ops = &inproc_ops;
    /* a view of its own, as each py4j server has: imports end with the client */
    jstring name = (*env)->NewStringUTF(env, "default");
    jobject view = name ? (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge,
                                                         p4j_jc.Bridge_newView, name)
                        : NULL;
    if (name)
        (*env)->DeleteLocalRef(env, name);
    if (p4j_jvm_failed(env, err) || !view) {
        free(ic);
        return err->kind ? P4J_ERROR
                         : p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: no default JVM view");
    }
    ic->default_view = p4j_jvm_global_new(env, view);
    (*env)->DeleteLocalRef(env, view);
    *out = &ic->base;
    return P4J_OK;
}
