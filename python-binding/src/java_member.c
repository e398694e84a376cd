/* python-binding/src/java_member.c - JavaMember: a Java method bound to an object or a
 * class. Any attribute of a JavaObject that its Python type does not define is a
 * JavaMember (py4j's rule); calling it converts the arguments, releases the GIL around
 * one transport call and converts the result. JavaMember objects are recycled through
 * a free list so `obj.method(...)` allocates nothing on the steady state.
 */
#include "objects.h"

JavaMemberObject *p4jpy_member_freelist[P4JPY_MEMBER_FREELIST_MAX];
int p4jpy_member_freelist_len;

PyObject *p4jpy_member_new(PyObject *owner, PyObject *name, unsigned flags)
{
    Py_ssize_t len;
    const char *cname = PyUnicode_AsUTF8AndSize(name, &len);
    if (!cname)
        return NULL;
    if (__builtin_expect(!PyUnicode_CHECK_INTERNED(name), 0) &&
        p4jpy_check_member_name(name, cname, len) < 0)
        return NULL;
    return p4jpy_member_new_checked(owner, name, flags, cname, len);
}

static void member_dealloc(PyObject *self)
{
    JavaMemberObject *m = (JavaMemberObject *)self;
    if (m->cached)
        PyObject_GC_UnTrack(self);
    Py_CLEAR(m->owner);
    Py_CLEAR(m->name);
    if (P4JPY_FREELISTS && p4jpy_member_freelist_len < P4JPY_MEMBER_FREELIST_MAX &&
        Py_TYPE(self) == &JavaMemberType)
        p4jpy_member_freelist[p4jpy_member_freelist_len++] = m;
    else
        PyObject_GC_Del(self);
}

static int member_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((JavaMemberObject *)self)->owner);
    return 0;
}

/* The client, target ref and last call site of a member's owner. */
static void member_target(JavaMemberObject *m, ClientObject **cl, p4j_ref **ref,
                          void ***last_site)
{
    if (P4J_IS_JAVACLASS(m->owner)) {
        *cl = ((JavaClassObject *)m->owner)->client;
        *ref = &((JavaClassObject *)m->owner)->ref;
        *last_site = &((JavaClassObject *)m->owner)->last_site;
    } else {
        *cl = ((JavaObject *)m->owner)->client;
        *ref = &((JavaObject *)m->owner)->ref;
        *last_site = &((JavaObject *)m->owner)->sites[((uintptr_t)m->name >> 4) & 3];
    }
}

static PyObject *call_failed(ClientObject *cl, p4j_error *err, const p4j_ref *ref,
                             JavaMemberObject *m)
{
    char id[300];
    /* py4j's dir() lists every name called on an object, a failed one too (the others
     * are in the reflective list) */
    if (!P4J_IS_JAVACLASS(m->owner) && p4jpy_jobject_note_method((JavaObject *)m->owner, m->name) < 0)
        PyErr_Clear();
    if (m->flags & P4J_CALL_STATIC)
        snprintf(id, sizeof id, "z:%s", PyUnicode_AsUTF8(((JavaClassObject *)m->owner)->fqn));
    else
        p4j_ref_id(cl, ref, id, sizeof id);
    return p4j_raise_call(cl, err, id, m->cname);
}

PyObject *p4jpy_member_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                           PyObject *kwnames)
{
    JavaMemberObject *m = (JavaMemberObject *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
        PyErr_Format(PyExc_TypeError, "Java method %U takes no keyword arguments", m->name);
        return NULL;
    }
    ClientObject *cl;
    p4j_ref *ref;
    void **last_site;
    member_target(m, &cl, &ref, &last_site);
    if (!P4JPY_LOAD(ref->handle)) { /* detach() may clear it on another thread */
        p4jpy_raise_detached();
        return NULL;
    }
    p4j_argpack pack;
    if (p4jpy_call_args(cl, args, n, &pack) < 0)
        return NULL;
    /* The call reads its own copy of the target, pinned: a detach() on another thread
     * meanwhile parks the handle until this call returns (see jobject_detach). */
    JavaObject *pinned = P4J_IS_JAVACLASS(m->owner) ? NULL : (JavaObject *)m->owner;
#ifdef Py_GIL_DISABLED
    p4j_ref target = {P4JPY_LOAD(ref->handle), P4JPY_LOAD(ref->cls)};
    if (pinned && !p4jpy_pin_copy(pinned, &target)) { /* detached by another thread */
        if (n)
            p4j_args_release(&pack);
        p4jpy_raise_detached();
        return NULL;
    }
#else
    p4j_ref target = *ref;
    if (pinned)
        p4j_pin(pinned);
#endif
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    p4j_client *c = cl->c;
    unsigned flags = m->flags | P4J_CALL_NO_ERROR_TEXT;
    if (c->unlock && c->ops->call_at) { /* the transport releases the GIL itself,
                                           except for a short call */
        if (!P4JPY_LOAD(m->site)) /* obj.method(...) makes a new JavaMember each time */
            P4JPY_STORE(m->site, P4JPY_LOAD(*last_site));
        st = c->ops->call_at(c, &m->site, &target, flags | P4J_CALL_LOCK_HELD, m->cname,
                             (size_t)m->cname_len, pack.vals, (size_t)n, &out, &err);
        void *now = __atomic_load_n(&m->site, __ATOMIC_ACQUIRE);
        if (P4JPY_LOAD(*last_site) != now) /* shared by the threads calling the owner: */
            P4JPY_STORE(*last_site, now);   /* written only when it changes            */
    } else {
        Py_BEGIN_ALLOW_THREADS
        st = c->ops->call(c, &target, flags, m->cname, (size_t)m->cname_len, pack.vals,
                          (size_t)n, &out, &err);
        Py_END_ALLOW_THREADS
    }
    if (n)
        p4j_args_release(&pack);
    p4jpy_keep_cls(ref, target.handle, target.cls); /* keep the class lookup of the call */
    if (pinned)
        p4j_unpin(pinned);
    if (st != P4J_OK)
        return call_failed(cl, &err, &target, m);
    if (out.kind == P4J_SELF)
        return P4J_BASE_CHECKED(Py_NewRef(m->owner));
    if (out.kind == P4J_LONG && !out.owned) /* the common scalars, without the switch */
        return P4J_BASE_CHECKED(p4j_long_new(out.u.l));
    if (out.kind == P4J_INT && !out.owned)
        return P4J_BASE_CHECKED(p4j_long_new(out.u.i));
    return P4J_BASE_CHECKED(p4j_value_to_py(cl, &out));
}

static PyObject *member_repr(PyObject *self)
{
    JavaMemberObject *m = (JavaMemberObject *)self;
    return PyUnicode_FromFormat("<JavaMember %U of %R>", m->name, m->owner);
}

static PyObject *member_get_name(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(((JavaMemberObject *)self)->name);
}

static PyObject *member_get_container(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(((JavaMemberObject *)self)->owner);
}

static PyObject *member_get_doc(PyObject *self, void *closure)
{
    (void)closure;
    JavaMemberObject *m = (JavaMemberObject *)self;
    return p4jpy_help_doc(m->owner, m->name, "A Java method.");
}

static PyGetSetDef member_getset[] = {
    {"__doc__", member_get_doc, NULL, "py4j's help page of this method's overloads.", NULL},
    {"name", member_get_name, NULL, "The Java method name.", NULL},
    {"container", member_get_container, NULL, "The object or class the method belongs to.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* py4j's JavaMember.stream(*args): py4jni.java_gateway._member_stream does it. */
static PyObject *member_stream(PyObject *self, PyObject *args)
{
    PyObject *mod = PyImport_ImportModule("py4jni.java_gateway");
    PyObject *fn = mod ? PyObject_GetAttrString(mod, "_member_stream") : NULL;
    Py_XDECREF(mod);
    if (!fn)
        return NULL;
    PyObject *full = PyTuple_New(PyTuple_GET_SIZE(args) + 1);
    PyObject *r = NULL;
    if (full) {
        PyTuple_SET_ITEM(full, 0, Py_NewRef(self));
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++)
            PyTuple_SET_ITEM(full, i + 1, Py_NewRef(PyTuple_GET_ITEM(args, i)));
        r = PyObject_Call(fn, full, NULL);
        Py_DECREF(full);
    }
    Py_DECREF(fn);
    return r;
}

static PyMethodDef member_methods[] = {
    {"stream", member_stream, METH_VARARGS,
     "stream($self, /, *args)\n--\n\n"
     "Calls the method with py4j's binary protocol (socket mode); returns a guard whose "
     "read() gives the bytes of the ReadableByteChannel it returned."},
    {NULL, NULL, 0, NULL},
};

/* py4j's JavaMember(name, container, target_id, gateway_client): what
 * py4jni.java_gateway._member_from_parts makes of them (a JavaMember of `container`, or
 * of the object or class `target_id` names). Calls of a member never come here. */
static PyObject *member_new_py(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)type;
    static char *kwlist[] = {"name", "container", "target_id", "gateway_client", NULL};
    PyObject *name, *container, *target_id, *client;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO:JavaMember", kwlist, &name, &container,
                                     &target_id, &client))
        return NULL;
    PyObject *mod = PyImport_ImportModule("py4jni.java_gateway");
    PyObject *fn = mod ? PyObject_GetAttrString(mod, "_member_from_parts") : NULL;
    Py_XDECREF(mod);
    if (!fn)
        return NULL;
    PyObject *r = PyObject_CallFunctionObjArgs(fn, name, container, target_id, client, NULL);
    Py_DECREF(fn);
    return r;
}

PyTypeObject JavaMemberType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "py4jni._py4jni.JavaMember",
    .tp_doc = "JavaMember(name, container, target_id, gateway_client)\n--\n\n"
              "A Java method bound to an object or class; calling it calls Java "
              "(one transport call; arguments converted as py4j does).",
    .tp_basicsize = sizeof(JavaMemberObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_vectorcall_offset = offsetof(JavaMemberObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = member_new_py,
    .tp_dealloc = member_dealloc,
    .tp_traverse = member_traverse,
    .tp_repr = member_repr,
    .tp_methods = member_methods,
    .tp_getset = member_getset,
};
