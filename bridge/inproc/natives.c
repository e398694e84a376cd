/* bridge/inproc/natives.c - Python-implemented native methods through libffi (see natives.h). */
#include "natives.h"

#include <ffi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "idtable.h"
#include "inproc_internal.h"
#include "jvm.h"

/* A target replaced by a later registration, waiting until no call can use it. */
typedef struct retired_target {
    struct retired_target *next;
    void *target;
} retired_target;

/* The closure of one native method (one per p4j_cb_method id, i.e. per Java method,
 * for the life of the process: Java may call its code at any time). Registering the
 * method again swaps `target`; the replaced target is given back (hooks.release) once
 * no call is in flight: a call counts itself in `inflight` before it reads `target`,
 * and `lock` serialises swaps and the draining of `retired`. */
typedef struct native_fn {
    const p4j_cb_method *m;
    void *target;              /* atomic; NULL: not bound (a failed registration) */
    long inflight;             /* atomic: calls between their count and their release */
    retired_target *retired;   /* under lock */
    pthread_mutex_t lock;
    ffi_cif cif;
    ffi_type *atypes[2 + P4J_CB_MAX_ARGS];
    ffi_closure *closure;
    void *code;
} native_fn;

static p4j_idtable closures; /* p4j_cb_method id -> native_fn */
static pthread_mutex_t closures_lock = PTHREAD_MUTEX_INITIALIZER;

/* Gives back the retired targets of `f` when no call is in flight. Takes f->lock. */
static void drain_retired(native_fn *f)
{
    pthread_mutex_lock(&f->lock);
    retired_target *list = NULL;
    /* Every target on the list was swapped out before this check; a call counted
     * after it reads a current target, and none counted before it is still running. */
    if (__atomic_load_n(&f->inflight, __ATOMIC_SEQ_CST) == 0) {
        list = f->retired;
        f->retired = NULL;
    }
    pthread_mutex_unlock(&f->lock);
    while (list) {
        retired_target *next = list->next;
        p4j_cb_target_release(list->target);
        free(list);
        list = next;
    }
}

/* libffi type of a descriptor letter (params use 's'/'j' for String/byte[]). */
static ffi_type *ffi_of(char letter)
{
    switch (letter) {
    case 'Z': return &ffi_type_uint8;
    case 'B': return &ffi_type_sint8;
    case 'C': return &ffi_type_uint16;
    case 'S': return &ffi_type_sint16;
    case 'I': return &ffi_type_sint32;
    case 'J': return &ffi_type_sint64;
    case 'F': return &ffi_type_float;
    case 'D': return &ffi_type_double;
    case 'V': return &ffi_type_void;
    default: return &ffi_type_pointer;
    }
}

/* Converts raw JNI argument `p` (pointer to the value) for parameter `slot` of `m`. */
static p4j_status raw_arg(JNIEnv *env, const p4j_cb_method *m, size_t slot, void *p,
                          p4j_value *out, p4j_error *err)
{
    char letter = m->params[slot];
    out->owned = NULL;
    out->ref.handle = out->ref.cls = NULL;
    switch (letter) {
    case 'Z': out->kind = P4J_BOOL; out->u.b = *(jboolean *)p != 0; return P4J_OK;
    case 'B': out->kind = P4J_INT; out->u.i = *(jbyte *)p; return P4J_OK;
    case 'S': out->kind = P4J_INT; out->u.i = *(jshort *)p; return P4J_OK;
    case 'I': out->kind = P4J_INT; out->u.i = *(jint *)p; return P4J_OK;
    case 'J': out->kind = P4J_LONG; out->u.l = *(jlong *)p; return P4J_OK;
    case 'F': out->kind = P4J_DOUBLE; out->u.d = p4j_float_as_printed(*(jfloat *)p); return P4J_OK;
    case 'D': out->kind = P4J_DOUBLE; out->u.d = *(jdouble *)p; return P4J_OK;
    case 'C':
        p4j_value_set_string(out, P4J_STRING, (jchar *)p, 1, P4J_ENC_UTF16); /* inline */
        return P4J_OK;
    default:
        return p4j_cb_ref_arg(env, m, slot, *(jobject *)p, out, err);
    }
}

/* The closure body: JNI calls it as the native method. */
static void native_entry(ffi_cif *cif, void *ret, void **args, void *user)
{
    (void)cif;
    native_fn *f = user;
    const p4j_cb_method *m = f->m;
    JNIEnv *env = *(JNIEnv **)args[0];
    jobject self = *(jobject *)args[1];
    p4j_jvm_adopt_env(env);
    p4j_value stack_vals[6], *vals = stack_vals; /* small frames: natives may nest */
    size_t n = 0;
    p4j_error err = {0};
    jvalue r = {0};
    bool no_method = false;
    __atomic_add_fetch(&f->inflight, 1, __ATOMIC_SEQ_CST);
    void *target = __atomic_load_n(&f->target, __ATOMIC_SEQ_CST);
    if (!target) {
        p4j_cb_throw(env, "py4jni: this native method has no Python implementation "
                          "(its registration failed)");
        goto out;
    }
    if (m->nparams + 1u > sizeof stack_vals / sizeof stack_vals[0] &&
        !(vals = malloc(sizeof *vals * (m->nparams + 1u)))) {
        p4j_cb_throw(env, "py4jni: out of memory");
        goto out;
    }
    /* No local frame: the conversions keep no local refs (the arguments are the
     * caller's), and a reference result is a local of this native call. */
    p4j_status st = P4J_OK;
    if (!(m->flags & P4J_CB_STATIC) &&
        (st = p4j_cb_ref_arg(env, m, P4J_CB_RECEIVER, self, &vals[n], &err)) == P4J_OK)
        n++;
    for (size_t i = 0; st == P4J_OK && i < m->nparams; i++) {
        if ((st = raw_arg(env, m, i, args[2 + i], &vals[n], &err)) == P4J_OK)
            n++;
    }
    if (st != P4J_OK) {
        p4j_cb_release_args(env, vals, n);
        if (!(*env)->ExceptionCheck(env))
            p4j_cb_throw(env, err.message);
        p4j_error_clear(NULL, &err);
        r.j = 0;
    } else if (p4j_cb_dispatch(env, target, m, vals, n, false, &r, &no_method) != P4J_OK) {
        r.j = 0;
    }
    if (vals != stack_vals)
        free(vals);
out:
    if (__atomic_sub_fetch(&f->inflight, 1, __ATOMIC_SEQ_CST) == 0 &&
        __atomic_load_n(&f->retired, __ATOMIC_RELAXED))
        drain_retired(f);
    switch (m->ret) {
    case 'V': break;
    case 'Z': *(ffi_arg *)ret = r.z; break;
    case 'B': *(ffi_sarg *)ret = r.b; break;
    case 'C': *(ffi_arg *)ret = r.c; break;
    case 'S': *(ffi_sarg *)ret = r.s; break;
    case 'I': *(ffi_sarg *)ret = r.i; break;
    case 'J': *(jlong *)ret = r.j; break;
    case 'F': *(jfloat *)ret = r.f; break;
    case 'D': *(jdouble *)ret = r.d; break;
    default: *(jobject *)ret = r.l; break;
    }
}

p4j_status p4j_natives_describe(const p4j_ref *cls, p4j_native_list **out, p4j_error *err)
{
    *out = NULL;
    JNIEnv *env = p4j_jvm_env(err);
    if (!env)
        return P4J_ERROR;
    if ((*env)->PushLocalFrame(env, 16) != 0)
        return p4j_jvm_capture_exception(env, err);
    p4j_status st = P4J_ERROR;
    p4j_native_list *list = NULL;
    jobjectArray arr = p4j_cb_describe_natives(env, (jclass)cls->handle, err);
    if (!arr)
        goto done;
    jsize n = (*env)->GetArrayLength(env, arr);
    list = calloc(1, sizeof *list);
    if (!list || !(list->methods = calloc((size_t)n + 1, sizeof *list->methods))) {
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        goto done;
    }
    for (jsize i = 0; i < n; i++) {
        jobject pm = (*env)->GetObjectArrayElement(env, arr, i);
        const p4j_cb_method *m = pm ? p4j_cb_method_of(env, pm, err) : NULL;
        if (pm)
            (*env)->DeleteLocalRef(env, pm);
        if (!m)
            goto done;
        list->methods[list->n++] = m;
    }
    *out = list;
    list = NULL;
    st = P4J_OK;
done:
    p4j_natives_list_free(list);
    (*env)->PopLocalFrame(env, NULL);
    return st;
}

void p4j_natives_list_free(p4j_native_list *list)
{
    if (!list)
        return;
    free(list->methods);
    free(list);
}

/* Builds the closure of `m`, bound to no target yet. NULL with err set. */
static native_fn *closure_new(const p4j_cb_method *m, p4j_error *err)
{
    native_fn *f = calloc(1, sizeof *f);
    if (!f) {
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        return NULL;
    }
    f->m = m;
    pthread_mutex_init(&f->lock, NULL);
    f->atypes[0] = &ffi_type_pointer; /* JNIEnv*           */
    f->atypes[1] = &ffi_type_pointer; /* jclass or jobject */
    for (size_t i = 0; i < m->nparams; i++)
        f->atypes[2 + i] = ffi_of(m->params[i]);
    if (ffi_prep_cif(&f->cif, FFI_DEFAULT_ABI, 2u + m->nparams, ffi_of(m->ret), f->atypes) != FFI_OK)
        goto fail;
    f->closure = ffi_closure_alloc(sizeof(ffi_closure), &f->code);
    if (!f->closure)
        goto fail;
    if (ffi_prep_closure_loc(f->closure, &f->cif, native_entry, f, f->code) != FFI_OK) {
        ffi_closure_free(f->closure);
        goto fail;
    }
    return f;
fail:
    pthread_mutex_destroy(&f->lock);
    free(f);
    p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: libffi cannot build a closure for %s%s",
                  m->name, m->sig);
    return NULL;
}

/* The process-lifetime closure of `m` (made on first use). NULL with err set. */
static native_fn *closure_of(const p4j_cb_method *m, p4j_error *err)
{
    native_fn *f = p4j_idtable_get(&closures, (uint32_t)m->id);
    if (f)
        return f;
    pthread_mutex_lock(&closures_lock);
    if (!(f = p4j_idtable_get(&closures, (uint32_t)m->id)) && (f = closure_new(m, err)) &&
        p4j_idtable_put(&closures, (uint32_t)m->id, f) != f) {
        ffi_closure_free(f->closure);
        pthread_mutex_destroy(&f->lock);
        free(f);
        f = NULL;
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    }
    pthread_mutex_unlock(&closures_lock);
    return f;
}

/* Makes `target` the implementation behind `f`; the one it replaces is retired. */
static void closure_bind(native_fn *f, void *target)
{
    retired_target *old = malloc(sizeof *old);
    pthread_mutex_lock(&f->lock);
    void *prev = __atomic_exchange_n(&f->target, target, __ATOMIC_SEQ_CST);
    if (prev && old) {
        old->target = prev;
        old->next = f->retired;
        __atomic_store_n(&f->retired, old, __ATOMIC_RELAXED);
        old = NULL;
    }
    pthread_mutex_unlock(&f->lock);
    free(old); /* no previous target (or, out of memory, the old one is kept forever) */
    drain_retired(f);
}

p4j_status p4j_natives_bind(const p4j_ref *cls, const p4j_native_list *list,
                            const size_t *which, void *const *targets, size_t n,
                            p4j_error *err)
{
    JNIEnv *env = p4j_jvm_env(err);
    if (!env)
        return P4J_ERROR;
    JNINativeMethod *regs = calloc(n + 1, sizeof *regs);
    native_fn **fns = calloc(n + 1, sizeof *fns);
    p4j_status st = P4J_ERROR;
    if (!regs || !fns) {
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (which[i] >= list->n) {
            p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: bad native method index");
            goto done;
        }
        const p4j_cb_method *m = list->methods[which[i]];
        if (!(fns[i] = closure_of(m, err)))
            goto done;
        regs[i].name = (char *)m->name;
        regs[i].signature = (char *)m->sig;
        regs[i].fnPtr = fns[i]->code;
    }
    /* Closures that Java may now call are bound to nothing yet: they throw until the
     * targets are set below (a registration is not atomic in HotSpot either). */
    if ((*env)->RegisterNatives(env, (jclass)cls->handle, regs, (jint)n) != 0) {
        if (p4j_jvm_capture_exception(env, err) == P4J_OK)
            p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: RegisterNatives failed");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        closure_bind(fns[i], targets[i]);
    st = P4J_OK;
done:
    free(regs);
    free(fns);
    return st;
}
