/* jni/natives.c - Python-implemented native methods through libffi (see natives.h). */
#include "natives.h"

#include <ffi.h>
#include <stdlib.h>
#include <string.h>

#include "inproc_internal.h"
#include "jvm.h"

/* One bound native method. Never freed (Java may call it at any time). */
typedef struct native_fn {
    const p4j_cb_method *m;
    void *target;
    ffi_cif cif;
    ffi_type *atypes[2 + P4J_CB_MAX_ARGS];
    ffi_closure *closure;
    void *code;
} native_fn;

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
    if (m->nparams + 1u > sizeof stack_vals / sizeof stack_vals[0] &&
        !(vals = malloc(sizeof *vals * (m->nparams + 1u)))) {
        p4j_cb_throw(env, "py4jni: out of memory");
        return;
    }
    p4j_error err = {0};
    jvalue r = {0};
    bool no_method = false;
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
    } else if (p4j_cb_dispatch(env, f->target, m, vals, n, false, &r, &no_method) != P4J_OK) {
        r.j = 0;
    }
    if (vals != stack_vals)
        free(vals);
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

/* Builds the closure of `m` calling `target`. NULL with err set. */
static native_fn *closure_new(const p4j_cb_method *m, void *target, p4j_error *err)
{
    native_fn *f = calloc(1, sizeof *f);
    if (!f) {
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        return NULL;
    }
    f->m = m;
    f->target = target;
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
    free(f);
    p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: libffi cannot build a closure for %s%s",
                  m->name, m->sig);
    return NULL;
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
    size_t built = 0;
    if (!regs || !fns) {
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        goto done;
    }
    for (; built < n; built++) {
        if (which[built] >= list->n) {
            p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: bad native method index");
            goto done;
        }
        const p4j_cb_method *m = list->methods[which[built]];
        if (!(fns[built] = closure_new(m, targets[built], err)))
            goto done;
        regs[built].name = (char *)m->name;
        regs[built].signature = (char *)m->sig;
        regs[built].fnPtr = fns[built]->code;
    }
    if ((*env)->RegisterNatives(env, (jclass)cls->handle, regs, (jint)n) != 0) {
        /* Some methods may be bound already: their closures must stay. */
        if (p4j_jvm_capture_exception(env, err) == P4J_OK)
            p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: RegisterNatives failed");
        built = 0;
        goto done;
    }
    st = P4J_OK;
    built = 0; /* the closures belong to the JVM's bindings now */
done:
    for (size_t i = 0; i < built; i++) {
        ffi_closure_free(fns[i]->closure);
        free(fns[i]);
    }
    free(regs);
    free(fns);
    return st;
}
