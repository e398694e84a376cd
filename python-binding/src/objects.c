/* python-binding/src/objects.c - JavaObject, JavaClass, JavaMember and Namespace (the
 * base of the Python name spaces such as JavaGateway and JVMView: names cached in the
 * instance are read at C speed, a miss calls self._resolve(name)).
 *
 * Any attribute of a JavaObject that its Python type does not define is a JavaMember
 * (py4j's rule); calling it converts the arguments, releases the GIL around one
 * transport call and converts the result. JavaMember objects are recycled through a
 * free list so `obj.method(...)` allocates nothing on the steady state.
 */
#include <string.h>

#include "binding.h"

int p4j_check_open(ClientObject *cl)
{
    if (cl->c->closed) {
        PyErr_SetString(p4j_reg.Py4JError, "py4jni: the gateway has been shut down");
        return -1;
    }
    return 0;
}

static int is_dunder(PyObject *name)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(name);
    return len > 4 && PyUnicode_READ_CHAR(name, 0) == '_' && PyUnicode_READ_CHAR(name, 1) == '_' &&
           PyUnicode_READ_CHAR(name, len - 1) == '_' && PyUnicode_READ_CHAR(name, len - 2) == '_';
}

/* Looks `name` up in the instance __dict__ of `self`: 1 with a new reference in *out,
 * 0 when absent (or no __dict__), -1 with an exception. */
static int instance_dict_get(PyObject *self, PyObject *name, PyObject **out)
{
    PyObject **dictptr = _PyObject_GetDictPtr(self);
    if (!dictptr || !*dictptr)
        return 0;
#ifdef Py_GIL_DISABLED /* another thread may replace the value meanwhile */
    return PyDict_GetItemRef(P4JPY_LOAD(*dictptr), name, out);
#endif
    *out = PyDict_GetItemWithError(*dictptr, name);
    if (*out)
        return Py_INCREF(*out), 1;
    return PyErr_Occurred() ? -1 : 0;
}

static int jobject_note_method(JavaObject *o, PyObject *name);

/* ---------------------------------------------------------------- JavaMember */

/* The free lists are shared by every thread: free-threaded builds allocate instead. */
#ifdef Py_GIL_DISABLED
#define P4JPY_FREELISTS 0
#else
#define P4JPY_FREELISTS 1
#endif
#define MEMBER_FREELIST_MAX 64
static JavaMemberObject *member_freelist[MEMBER_FREELIST_MAX];
static int member_freelist_len;

static PyObject *member_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames);

/* Refuses a Java member name holding NUL (Java would see it cut there): 0, or -1 with
 * Py4JError. Callers skip interned names: Python interns the identifiers of code
 * (obj.name), which cannot hold NUL; getattr(obj, s) passes s itself. */
static __attribute__((noinline, cold)) int check_member_name(PyObject *name, const char *cname,
                                                             Py_ssize_t len)
{
    if (!memchr(cname, 0, (size_t)len))
        return 0;
    PyErr_Format(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_ValueError,
                 "py4jni: a Java member name cannot hold NUL: %R", name);
    return -1;
}

/* A JavaMember for `name`, whose NUL check the caller made (or was not needed). */
static inline __attribute__((always_inline)) PyObject *
member_new_checked(PyObject *owner, PyObject *name, unsigned flags, const char *cname,
                   Py_ssize_t len)
{
    JavaMemberObject *m;
    if (P4JPY_FREELISTS && member_freelist_len > 0) {
        m = member_freelist[--member_freelist_len];
        _Py_NewReference((PyObject *)m);
    } else {
        m = PyObject_GC_New(JavaMemberObject, &JavaMemberType);
        if (!m)
            return NULL;
    }
    m->cached = 0;
    Py_INCREF(owner);
    Py_INCREF(name);
    m->owner = owner;
    m->name = name;
    m->cname = cname;
    m->cname_len = len;
    m->flags = flags;
    m->vectorcall = member_vectorcall;
    m->site = NULL;
    return (PyObject *)m;
}

/* p4jpy_member_new for an interned compact ASCII `name` (its characters are its UTF-8;
 * no NUL check: see check_member_name). */
static PyObject *member_new_interned(PyObject *owner, PyObject *name)
{
    return member_new_checked(owner, name, 0, (const char *)((PyASCIIObject *)name + 1),
                              PyUnicode_GET_LENGTH(name));
}

PyObject *p4jpy_member_new(PyObject *owner, PyObject *name, unsigned flags)
{
    Py_ssize_t len;
    const char *cname = PyUnicode_AsUTF8AndSize(name, &len);
    if (!cname)
        return NULL;
    if (__builtin_expect(!PyUnicode_CHECK_INTERNED(name), 0) &&
        check_member_name(name, cname, len) < 0)
        return NULL;
    return member_new_checked(owner, name, flags, cname, len);
}

static void member_dealloc(PyObject *self)
{
    JavaMemberObject *m = (JavaMemberObject *)self;
    if (m->cached)
        PyObject_GC_UnTrack(self);
    Py_CLEAR(m->owner);
    Py_CLEAR(m->name);
    if (P4JPY_FREELISTS && member_freelist_len < MEMBER_FREELIST_MAX &&
        Py_TYPE(self) == &JavaMemberType)
        member_freelist[member_freelist_len++] = m;
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
    if (!P4J_IS_JAVACLASS(m->owner) && jobject_note_method((JavaObject *)m->owner, m->name) < 0)
        PyErr_Clear();
    if (m->flags & P4J_CALL_STATIC)
        snprintf(id, sizeof id, "z:%s", PyUnicode_AsUTF8(((JavaClassObject *)m->owner)->fqn));
    else
        p4j_ref_id(cl, ref, id, sizeof id);
    return p4j_raise_call(cl, err, id, m->cname);
}

static PyObject *member_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
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
    if (!ref->handle) {
        PyErr_SetString(p4j_reg.Py4JError, "py4jni: this Java object was detached");
        return NULL;
    }
    p4j_argpack pack;
    pack.vals = NULL; /* no arguments: no pack to make and release */
    if (n && p4j_args_from_py(cl, args, n, &pack) < 0)
        return NULL;
    if (P4JPY_SIGNALS_CATCH_UP() < 0) { /* a SIGINT just before: its handler raised */
        if (n)
            p4j_args_release(&pack);
        return NULL;
    }
    /* The call reads its own copy of the target, pinned: a detach() on another thread
     * meanwhile parks the handle until this call returns (see jobject_detach). */
    JavaObject *pinned = P4J_IS_JAVACLASS(m->owner) ? NULL : (JavaObject *)m->owner;
#ifdef Py_GIL_DISABLED
    p4j_ref target = {ref->handle, P4JPY_LOAD(ref->cls)};
    if (pinned && !p4jpy_pin_copy(pinned, &target)) { /* detached by another thread */
        if (n)
            p4j_args_release(&pack);
        PyErr_SetString(p4j_reg.Py4JError, "py4jni: this Java object was detached");
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
        P4JPY_STORE(*last_site, __atomic_load_n(&m->site, __ATOMIC_ACQUIRE)); /* may be shared */
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

/* py4j's __doc__: the help page of `target` (a JavaObject or JavaClass), restricted to
 * the overloads of `name` when given; `fallback` (the type's doc) when it fails. */
static PyObject *help_doc(PyObject *target, PyObject *name, const char *fallback)
{
    PyObject *client = PyObject_GetAttrString(target, "_gateway_client");
    PyObject *pattern = name ? PyUnicode_FromFormat("%U(*", name) : Py_NewRef(Py_None);
    PyObject *page = client && pattern
                         ? PyObject_CallMethod(client, "help", "OO", target, pattern)
                         : NULL;
    Py_XDECREF(client);
    Py_XDECREF(pattern);
    if (!page) {
        PyErr_Clear(); /* a closed gateway: introspection must not fail */
        return PyUnicode_FromString(fallback);
    }
    return page;
}

static PyObject *member_get_doc(PyObject *self, void *closure)
{
    (void)closure;
    JavaMemberObject *m = (JavaMemberObject *)self;
    return help_doc(m->owner, m->name, "A Java method.");
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

/* ---------------------------------------------------------------- JavaObject */

/* Plain JavaObjects are recycled like JavaMembers (objects made and dropped per call). */
#define JOBJECT_FREELIST_MAX 64
static JavaObject *jobject_freelist[JOBJECT_FREELIST_MAX];
static int jobject_freelist_len;

PyObject *p4j_wrap_ref(ClientObject *cl, p4j_kind kind, p4j_ref *ref)
{
    PyTypeObject *type = &JavaObjectType;
    if ((unsigned)kind < P4J_KIND_COUNT && p4j_reg.wrappers[kind])
        type = (PyTypeObject *)p4j_reg.wrappers[kind];
    JavaObject *o;
    if (P4JPY_FREELISTS && type == &JavaObjectType && jobject_freelist_len > 0) {
        o = jobject_freelist[--jobject_freelist_len];
        _Py_NewReference((PyObject *)o);
        o->weakreflist = NULL;
    } else if (type == &JavaObjectType) { /* GC-capable, untracked until it gains state */
        o = PyObject_GC_New(JavaObject, &JavaObjectType);
        if (o)
            o->weakreflist = NULL;
    } else {
        o = (JavaObject *)type->tp_alloc(type, 0);
    }
    if (!o) {
        cl->c->ops->release(cl->c, ref);
        return NULL;
    }
    Py_INCREF(cl);
    o->client = cl;
    o->ref = *ref;
    o->busy = 0;
    o->parked.handle = NULL;
    memset(o->sites, 0, sizeof o->sites);
    o->dict = NULL;
    o->methods = NULL;
    o->auto_field = -1;
    ref->handle = NULL;
    return (PyObject *)o;
}

/* Gives an exact JavaObject the type that holds per-object state (see JavaObject.dict):
 * same layout, GC-tracked from now on. Other types keep theirs. */
static void jobject_extend(JavaObject *o)
{
    P4JPY_LOCK_OBJ(o);
    if (Py_IS_TYPE((PyObject *)o, &JavaObjectType)) {
        Py_SET_TYPE((PyObject *)o, &JavaObjectExtType);
        if (!PyObject_GC_IsTracked((PyObject *)o))
            PyObject_GC_Track(o);
    }
    P4JPY_UNLOCK_OBJ();
}

/* Records `name` as a method of `o` (dir() lists it; auto_field asks no field again).
 * Returns 0, or -1 with an exception. */
static int jobject_note_method(JavaObject *o, PyObject *name)
{
#ifdef Py_GIL_DISABLED /* made once under the object's lock; the set locks itself */
    PyObject *methods;
    Py_BEGIN_CRITICAL_SECTION(o);
    if (!o->methods)
        P4JPY_STORE(o->methods, PySet_New(NULL));
    methods = Py_XNewRef(o->methods);
    Py_END_CRITICAL_SECTION();
    if (!methods)
        return -1;
    jobject_extend(o);
    int rc = PySet_Add(methods, name);
    Py_DECREF(methods);
    return rc;
#endif
    if (!o->methods) {
        if (!(o->methods = PySet_New(NULL)))
            return -1;
        jobject_extend(o);
    }
    return PySet_Add(o->methods, name);
}

/* The auto_field setting of `o`: its own once _auto_field was set, else the client's. */
static int jobject_auto_field(const JavaObject *o)
{
    return o->auto_field >= 0 ? o->auto_field : o->client->auto_field;
}

static int jobject_traverse(PyObject *self, visitproc visit, void *arg)
{
    JavaObject *o = (JavaObject *)self;
    Py_VISIT(o->dict);
    return 0;
}

static int jobject_clear(PyObject *self)
{
    Py_CLEAR(((JavaObject *)self)->dict);
    return 0;
}

/* Also the base deallocator of Python subclasses (JavaList, ...): subtype_dealloc has
 * already cleared their __dict__ and drops the type reference itself. */
static void jobject_dealloc(PyObject *self)
{
    JavaObject *o = (JavaObject *)self;
    PyObject_GC_UnTrack(self);
    if (o->weakreflist)
        PyObject_ClearWeakRefs(self);
    Py_CLEAR(o->dict);
    Py_CLEAR(o->methods);
    if (o->client) {
        if (o->ref.handle && !o->client->keep_dropped)
            o->client->c->ops->release(o->client->c, &o->ref);
        if (o->parked.handle) /* not expected: a pinned object is referenced by its call */
            o->client->c->ops->release(o->client->c, &o->parked);
        Py_CLEAR(o->client);
    }
    if (P4JPY_FREELISTS &&
        (Py_IS_TYPE(self, &JavaObjectType) || Py_IS_TYPE(self, &JavaObjectExtType)) &&
        jobject_freelist_len < JOBJECT_FREELIST_MAX) {
        Py_SET_TYPE(self, &JavaObjectType);
        jobject_freelist[jobject_freelist_len++] = o;
    } else {
        Py_TYPE(self)->tp_free(self);
    }
}

/* Returns the Client argument of JavaObject(...)/JavaClass(...), or NULL with TypeError. */
static ClientObject *client_arg(PyObject *client)
{
    if (!PyObject_TypeCheck(client, &ClientType)) {
        PyErr_SetString(PyExc_TypeError,
                        "gateway_client must be a py4jni gateway client (gateway._gateway_client)");
        return NULL;
    }
    return (ClientObject *)client;
}

/* py4j's JavaObject(target_id, gateway_client): the exception being passed to
 * get_return_value, else what py4jni.java_gateway resolves for the id. */
static PyObject *jobject_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)type;
    static char *kwlist[] = {"target_id", "gateway_client", NULL};
    PyObject *id, *client;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "UO:JavaObject", kwlist, &id, &client))
        return NULL;
    ClientObject *cl = client_arg(client);
    if (!cl)
        return NULL;
    PyObject *pending = P4JPY_LOAD(cl->pending);
    if (pending) {
#ifdef Py_GIL_DISABLED
        PyObject *o;
        int found = PyDict_GetItemRef(pending, id, &o);
        if (found)
            return found > 0 ? o : NULL;
#else
        PyObject *o = PyDict_GetItemWithError(pending, id);
        if (o)
            return Py_NewRef(o);
        if (PyErr_Occurred())
            return NULL;
#endif
    }
    if (!p4j_reg.object_from_id) {
        PyErr_SetString(PyExc_TypeError, "py4jni: JavaObject(id, client) needs the py4jni package");
        return NULL;
    }
    return PyObject_CallFunctionObjArgs(p4j_reg.object_from_id, id, client, NULL);
}

/* True when `name` is an interned ASCII str whose first character is not '_' (other
 * names take the slow path, which decides the same for them). No attribute
 * that JavaObjectType defines or inherits from object has such a name, and a static
 * type cannot gain one (immutable), so on a plain JavaObject it is always a Java
 * member; interned (as the names of code are), it holds no NUL (see
 * check_member_name). */
static int plain_member_name(PyObject *name)
{
    /* compact ASCII, as identifiers are: the first character follows the header */
    return PyUnicode_CheckExact(name) && PyUnicode_CHECK_INTERNED(name) &&
           PyUnicode_IS_COMPACT_ASCII(name) && PyUnicode_GET_LENGTH(name) > 0 &&
           ((const char *)((PyASCIIObject *)name + 1))[0] != '_';
}

/* jobject_getattro's path for every name but a plain JavaObject's plain member (kept
 * out of line so the fast path's function stays small). */
static __attribute__((noinline)) PyObject *jobject_getattro_slow(PyObject *self, PyObject *name)
{
    PyTypeObject *type = Py_TYPE(self);
    if (_PyType_Lookup(type, name))
        return PyObject_GenericGetAttr(self, name);
    if (type != &JavaObjectType) {
        PyObject *v;
        int found = instance_dict_get(self, name, &v);
        if (found)
            return found > 0 ? v : NULL;
    }
    if (!PyUnicode_Check(name) || is_dunder(name))
        return PyObject_GenericGetAttr(self, name);
    JavaObject *o = (JavaObject *)self;
    if (jobject_auto_field(o)) { /* py4j: a field wins over a method; a name once found
                                    to be a method is not asked again */
        PyObject *methods = P4JPY_LOAD(o->methods); /* made once, kept until dealloc */
        int known = methods ? PySet_Contains(methods, name) : 0;
        if (known < 0)
            return NULL;
        if (!known) {
            PyObject *v = PyObject_CallMethod((PyObject *)o->client, "field_get", "OO", self,
                                              name);
            if (v || !p4j_reg.Py4JError || !PyErr_ExceptionMatches(p4j_reg.Py4JError))
                return v;
            PyErr_Clear();
            if (jobject_note_method(o, name) < 0)
                return NULL;
        }
    }
    return p4jpy_member_new(self, name, 0);
}

static PyObject *jobject_getattro(PyObject *self, PyObject *name)
{
    if (Py_IS_TYPE(self, &JavaObjectType) && plain_member_name(name) &&
        !((JavaObject *)self)->client->auto_field)
        return member_new_interned(self, name);
    return jobject_getattro_slow(self, name);
}

/* Attributes set from Python live in a __dict__ made on the first one (py4j's Python
 * object takes any attribute); data descriptors of the type (_auto_field) keep their
 * setters. */
static int jobject_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    if (Py_IS_TYPE(self, &JavaObjectType) && value && PyUnicode_Check(name) &&
        !_PyType_Lookup(&JavaObjectType, name))
        jobject_extend((JavaObject *)self);
    return PyObject_GenericSetAttr(self, name, value);
}

/* Calls Java method `name` (an interned str) with no arguments on `self`. */
static PyObject *call0(PyObject *self, PyObject *name)
{
    PyObject *m = p4jpy_member_new(self, name, 0);
    if (!m)
        return NULL;
    PyObject *r = PyObject_Vectorcall(m, NULL, 0, NULL);
    Py_DECREF(m);
    return r;
}

/* Interned names of the java.lang.Object methods str(), hash() and == call, and of the
 * name spaces' resolver. */
static PyObject *name_toString, *name_hashCode, *name_equals, *name_resolve;

int p4j_objects_init(void)
{
    name_toString = PyUnicode_InternFromString("toString");
    name_hashCode = PyUnicode_InternFromString("hashCode");
    name_equals = PyUnicode_InternFromString("equals");
    name_resolve = PyUnicode_InternFromString("_resolve");
    JavaObjectExtType.tp_base = &JavaObjectType;
    if (PyType_Ready(&JavaObjectExtType) < 0)
        return -1;
    return name_toString && name_hashCode && name_equals && name_resolve ? 0 : -1;
}

static PyObject *jobject_str(PyObject *self)
{
    PyObject *r = call0(self, name_toString);
    if (r && r == Py_None) {
        Py_DECREF(r);
        return PyUnicode_FromString("null");
    }
    return r;
}

static PyObject *jobject_repr(PyObject *self)
{
    char id[64];
    JavaObject *o = (JavaObject *)self;
    p4j_ref_id(o->client, &o->ref, id, sizeof id);
    return PyUnicode_FromFormat("JavaObject id=%s", id);
}

static Py_hash_t jobject_hash(PyObject *self)
{
    PyObject *r = call0(self, name_hashCode);
    if (!r)
        return -1;
    Py_hash_t h = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    return h == -1 && !PyErr_Occurred() ? -2 : h;
}

static PyObject *jobject_richcompare(PyObject *self, PyObject *other, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !P4J_IS_JAVAOBJECT(other)) {
        if (op == Py_EQ || op == Py_NE)
            return PyBool_FromLong(op == Py_NE);
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *m = p4jpy_member_new(self, name_equals, 0);
    if (!m)
        return NULL;
    PyObject *r = PyObject_Vectorcall(m, &other, 1, NULL);
    Py_DECREF(m);
    if (r && op == Py_NE) {
        PyObject *neg = PyBool_FromLong(r == Py_False);
        Py_DECREF(r);
        return neg;
    }
    return r;
}

/* Splits a newline-separated name list into a Python list. */
static PyObject *lines_to_list(PyObject *text)
{
    if (!text || text == Py_None) {
        Py_XDECREF(text);
        return text ? PyList_New(0) : NULL;
    }
    PyObject *parts = PyUnicode_Splitlines(text, 0);
    Py_DECREF(text);
    return parts;
}

/* Calls the transport's dir on `ref` and returns a list of names. */
static PyObject *dir_names(ClientObject *cl, const p4j_ref *ref, p4j_dir_kind kind)
{
    if (p4j_check_open(cl) < 0)
        return NULL;
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cl->c->ops->dir(cl->c, ref, kind, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    return lines_to_list(p4j_value_to_py(cl, &out));
}

/* Adds every item of iterable `items` to set `set`; 0, or -1 with an exception set.
 * (CPython's _PySet_Update is private and gone from 3.13's headers.) */
static int set_add_all(PyObject *set, PyObject *items)
{
    PyObject *it = PyObject_GetIter(items), *item;
    if (!it)
        return -1;
    int rc = 0;
    while (rc == 0 && (item = PyIter_Next(it))) {
        rc = PySet_Add(set, item);
        Py_DECREF(item);
    }
    Py_DECREF(it);
    return rc == 0 && PyErr_Occurred() ? -1 : rc;
}

static PyObject *jobject_dir(PyObject *self, PyObject *unused)
{
    (void)unused;
    JavaObject *o = (JavaObject *)self;
    /* py4j lists the fields only under auto_field (then they are attributes) */
    PyObject *fields = jobject_auto_field(o) ? dir_names(o->client, &o->ref, P4J_DIR_FIELDS)
                                             : PyList_New(0);
    PyObject *methods = fields ? dir_names(o->client, &o->ref, P4J_DIR_METHODS) : NULL;
    PyObject *r = NULL;
    if (methods) { /* py4j's dir: the names it knows, each once */
        PyObject *all = PySet_New(fields);
        if (all && set_add_all(all, methods) == 0 &&
            (!o->methods || set_add_all(all, o->methods) == 0))
            r = PySequence_List(all);
        Py_XDECREF(all);
        if (r && PyList_Sort(r) < 0)
            Py_CLEAR(r);
    }
    Py_XDECREF(fields);
    Py_XDECREF(methods);
    return r;
}

static PyObject *jobject_get_target_id(PyObject *self, void *closure)
{
    (void)closure;
    char id[64];
    JavaObject *o = (JavaObject *)self;
    p4j_ref_id(o->client, &o->ref, id, sizeof id);
    return PyUnicode_FromString(id);
}

static PyObject *jobject_get_client(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef((PyObject *)((JavaObject *)self)->client);
}

void p4j_unpin(JavaObject *o)
{
#ifdef Py_GIL_DISABLED
    if (__atomic_sub_fetch(&o->busy, 1, __ATOMIC_SEQ_CST) != 0)
        return;
    p4j_ref parked = {NULL, NULL};
    Py_BEGIN_CRITICAL_SECTION(o); /* against jobject_detach's decision */
    if (o->parked.handle && __atomic_load_n(&o->busy, __ATOMIC_SEQ_CST) == 0) {
        parked = o->parked;
        o->parked.handle = NULL;
    }
    Py_END_CRITICAL_SECTION();
    if (parked.handle)
        o->client->c->ops->release(o->client->c, &parked);
#else
    if (--o->busy == 0 && o->parked.handle) {
        o->client->c->ops->release(o->client->c, &o->parked);
        o->parked.handle = NULL;
    }
#endif
}

static PyObject *jobject_object_id(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyObject_GetAttrString(self, "_target_id");
}

static PyObject *jobject_detach(PyObject *self, PyObject *unused)
{
    (void)unused;
    JavaObject *o = (JavaObject *)self;
#ifdef Py_GIL_DISABLED
    /* Clear the handle first, then look for pins (see p4jpy_pin_copy); a pin taken
     * before the clear is seen here, or its unpin sees the parked handle. */
    p4j_ref ref = {NULL, NULL};
    Py_BEGIN_CRITICAL_SECTION(o);
    ref.handle = __atomic_exchange_n(&o->ref.handle, NULL, __ATOMIC_SEQ_CST);
    ref.cls = __atomic_load_n(&o->ref.cls, __ATOMIC_ACQUIRE);
    if (ref.handle && __atomic_load_n(&o->busy, __ATOMIC_SEQ_CST)) {
        o->parked = ref; /* the handle is cleared once: never a second park */
        ref.handle = NULL;
    }
    Py_END_CRITICAL_SECTION();
    if (ref.handle)
        o->client->c->ops->release(o->client->c, &ref);
#else
    if (o->ref.handle && o->busy) /* calls in flight on other threads still use it */
        o->parked = o->ref;
    else if (o->ref.handle)
        o->client->c->ops->release(o->client->c, &o->ref);
    o->ref.handle = NULL; /* later calls raise "detached" */
#endif
    Py_RETURN_NONE;
}

static PyObject *jobject_detached(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((JavaObject *)self)->ref.handle == NULL);
}

static PyMethodDef jobject_methods[] = {
    {"__dir__", jobject_dir, METH_NOARGS, "Java fields and methods of this object."},
    {"_get_object_id", jobject_object_id, METH_NOARGS, "py4j's id of the Java object."},
    {"_detach", jobject_detach, METH_NOARGS,
     "Releases the Java object now; later use raises Py4JError."},
    {NULL, NULL, 0, NULL},
};

static PyObject *jobject_get_auto_field(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(jobject_auto_field((JavaObject *)self));
}

static int jobject_set_auto_field(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    int on = value ? PyObject_IsTrue(value) : -1; /* del: back to the client's */
    if (value && on < 0)
        return -1;
    ((JavaObject *)self)->auto_field = on;
    if (on >= 0)
        jobject_extend((JavaObject *)self);
    return 0;
}

static PyObject *jobject_get_dict(PyObject *self, void *closure)
{
    if (Py_IS_TYPE(self, &JavaObjectType))
        jobject_extend((JavaObject *)self);
    return PyObject_GenericGetDict(self, closure);
}

static int jobject_set_dict(PyObject *self, PyObject *value, void *closure)
{
    if (Py_IS_TYPE(self, &JavaObjectType))
        jobject_extend((JavaObject *)self);
    return PyObject_GenericSetDict(self, value, closure);
}

static PyObject *jobject_get_doc(PyObject *self, void *closure)
{
    (void)closure;
    return help_doc(self, NULL, "A reference to a Java object.");
}

static PyGetSetDef jobject_getset[] = {
    {"__doc__", jobject_get_doc, NULL, "py4j's help page of the object's class.", NULL},
    {"_auto_field", jobject_get_auto_field, jobject_set_auto_field,
     "py4j's auto_field: attributes read public fields first (the gateway's setting "
     "until set on the object).", NULL},
    {"__dict__", jobject_get_dict, jobject_set_dict,
     "Attributes set from Python (made on first use).", NULL},
    {"_target_id", jobject_get_target_id, NULL, "py4j's id of the Java object.", NULL},
    {"_gateway_client", jobject_get_client, NULL, "The client this object lives in.", NULL},
    {"_detached", jobject_detached, NULL, "True once the Java object was released.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject JavaObjectType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "py4jni._py4jni.JavaObject",
    .tp_doc = "JavaObject(target_id, gateway_client)\n--\n\n" /* py4j's signature */
              "A reference to a Java object. Any attribute is a Java method (a "
              "JavaMember); == calls equals, hash() hashCode, str() toString.",
    .tp_basicsize = sizeof(JavaObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_weaklistoffset = offsetof(JavaObject, weakreflist),
    .tp_dictoffset = offsetof(JavaObject, dict), /* NULL until an attribute is set */
    .tp_new = jobject_new,
    .tp_dealloc = jobject_dealloc,
    .tp_free = PyObject_GC_Del,
    .tp_traverse = jobject_traverse,
    .tp_clear = jobject_clear,
    .tp_getattro = jobject_getattro,
    .tp_setattro = jobject_setattro,
    .tp_str = jobject_str,
    .tp_repr = jobject_repr,
    .tp_hash = jobject_hash,
    .tp_richcompare = jobject_richcompare,
    .tp_methods = jobject_methods,
    .tp_getset = jobject_getset,
};

/* Same name, layout and behaviour as JavaObjectType, but GC-tracked (attributes may
 * make cycles) and without the plain type's attribute fast path (jobject_getattro), so
 * attributes in its __dict__ are found. Never allocated: jobject_extend switches an
 * exact JavaObject to it. */
PyTypeObject JavaObjectExtType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "py4jni._py4jni.JavaObject",
    .tp_doc = "A reference to a Java object with attributes of its own (set from Python, "
              "_auto_field, methods noted for dir()).",
    .tp_basicsize = sizeof(JavaObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dictoffset = offsetof(JavaObject, dict),
    .tp_traverse = jobject_traverse,
    .tp_clear = jobject_clear,
    .tp_free = PyObject_GC_Del,
};

/* ---------------------------------------------------------------- JavaClass */

static PyObject *jclass_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames);

PyObject *p4j_wrap_class(ClientObject *cl, p4j_ref *ref, PyObject *fqn)
{
    JavaClassObject *o = PyObject_GC_New(JavaClassObject, &JavaClassType);
    if (!o) {
        cl->c->ops->release(cl->c, ref);
        return NULL;
    }
    Py_INCREF(cl);
    Py_INCREF(fqn);
    o->client = cl;
    o->ref = *ref;
    ref->handle = NULL;
    o->fqn = fqn;
    o->members = NULL;
    o->weakreflist = NULL;
    o->vectorcall = jclass_vectorcall;
    o->last_site = NULL;
    o->ctor_site = NULL;
    memset(o->slots, 0, sizeof o->slots);
    PyObject_GC_Track(o);
    return (PyObject *)o;
}

#define JCLASS_SLOTS ((size_t)(sizeof ((JavaClassObject *)0)->slots / \
                               sizeof ((JavaClassObject *)0)->slots[0]))

static inline size_t jclass_slot(PyObject *name)
{
    return ((uintptr_t)name >> 4) & (JCLASS_SLOTS - 1);
}

static void jclass_slots_clear(JavaClassObject *o)
{
    for (size_t i = 0; i < JCLASS_SLOTS; i++) {
        Py_CLEAR(o->slots[i].name);
        o->slots[i].value = NULL;
    }
}

static int jclass_traverse(PyObject *self, visitproc visit, void *arg)
{
    JavaClassObject *o = (JavaClassObject *)self;
    Py_VISIT(o->members);
    Py_VISIT(o->client);
    return 0;
}

static int jclass_clear(PyObject *self)
{
    jclass_slots_clear((JavaClassObject *)self);
    Py_CLEAR(((JavaClassObject *)self)->members);
    return 0;
}

static void jclass_dealloc(PyObject *self)
{
    JavaClassObject *o = (JavaClassObject *)self;
    PyObject_GC_UnTrack(self);
    if (o->weakreflist)
        PyObject_ClearWeakRefs(self);
    jclass_slots_clear(o);
    Py_CLEAR(o->members);
    Py_CLEAR(o->fqn);
    if (o->client) {
        if (o->ref.handle)
            o->client->c->ops->release(o->client->c, &o->ref);
        Py_CLEAR(o->client);
    }
    PyObject_GC_Del(self);
}

/* JavaClass.members holds per static name: the JavaMember of its methods (made once,
 * shared by every read: its call site stays resolved), a nested class's JavaClass, or
 * P4JPY_CACHED_FIELD for a field, whose value is read on every access. */
#define P4JPY_CACHED_FIELD 1

/* Sets `o->members[name]` to `value`, emptying the slots (they borrow from members). */
static int jclass_members_set(JavaClassObject *o, PyObject *name, PyObject *value)
{
    jclass_slots_clear(o);
    return PyDict_SetItem(o->members, name, value);
}

/* A cached method or nested class of `o->members` (new reference), its slot filled
 * when `name` is interned; NULL when `kind` is neither. */
static PyObject *jclass_cached(JavaClassObject *o, PyObject *name, PyObject *kind)
{
    if (!Py_IS_TYPE(kind, &JavaMemberType) && !P4J_IS_JAVACLASS(kind))
        return NULL;
#ifndef Py_GIL_DISABLED /* the slots are read without a lock: only where the GIL orders */
    if (PyUnicode_CHECK_INTERNED(name)) {
        size_t i = jclass_slot(name);
        Py_XSETREF(o->slots[i].name, Py_NewRef(name));
        o->slots[i].value = kind;
    }
#else
    (void)o;
    (void)name;
#endif
    return Py_NewRef(kind);
}

/* Resolves static member `name`: returns the field's value, a JavaMember, or a nested
 * JavaClass; the kind of each name is cached (field values are read every time). */
static PyObject *jclass_member(JavaClassObject *o, PyObject *name)
{
#ifdef Py_GIL_DISABLED /* members made once under the class's lock; values held */
    if (!P4JPY_LOAD(o->members)) {
        Py_BEGIN_CRITICAL_SECTION(o);
        if (!o->members)
            P4JPY_STORE(o->members, PyDict_New());
        Py_END_CRITICAL_SECTION();
        if (!o->members)
            return NULL;
    }
    PyObject *kind;
    if (PyDict_GetItemRef(o->members, name, &kind) < 0)
        return NULL;
    PyObject *cached = kind ? jclass_cached(o, name, kind) : NULL;
    Py_XDECREF(kind); /* below only whether there was one counts */
#else
    if (!o->members && !(o->members = PyDict_New()))
        return NULL;
    PyObject *kind = PyDict_GetItemWithError(o->members, name);
    if (!kind && PyErr_Occurred())
        return NULL;
    PyObject *cached = kind ? jclass_cached(o, name, kind) : NULL;
#endif
    if (cached)
        return cached;
    if (p4j_check_open(o->client) < 0)
        return NULL;
    Py_ssize_t cname_len;
    const char *cname = PyUnicode_AsUTF8AndSize(name, &cname_len);
    if (!cname || check_member_name(name, cname, cname_len) < 0)
        return NULL; /* a miss: scanned whether interned or not */
    ClientObject *cl = o->client;
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    bool field = kind != NULL; /* cached as a field: read it directly */
    Py_BEGIN_ALLOW_THREADS
    st = field ? cl->c->ops->field_get(cl->c, &o->ref, P4J_CALL_STATIC, cname, &out, &err)
               : cl->c->ops->static_member(cl->c, &o->ref, cname, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != P4J_OK) {
        if (err.kind == P4J_ERR_BRIDGE) {
            p4j_error_clear(cl->c, &err);
            PyErr_Format(p4j_reg.Py4JError, "%U.%U does not exist in the JVM", o->fqn, name);
            return NULL;
        }
        return p4j_raise(cl, &err, NULL);
    }
    if (out.kind == P4J_METHOD) {
        PyObject *method = p4jpy_member_new((PyObject *)o, name, P4J_CALL_STATIC);
        if (!method)
            return NULL;
        ((JavaMemberObject *)method)->cached = 1; /* a cycle with o: the GC sees it */
        PyObject_GC_Track(method);
        if (jclass_members_set(o, name, method) < 0) {
            Py_DECREF(method);
            return NULL;
        }
        return method;
    }
    PyObject *r = p4j_value_to_py(cl, &out);
    if (!r)
        return NULL;
    PyObject *cache = P4J_IS_JAVACLASS(r) ? r : NULL;
    if (!cache && !field)
        cache = PyLong_FromLong(P4JPY_CACHED_FIELD);
    else if (cache)
        Py_INCREF(cache);
    if (cache) {
        int rc = jclass_members_set(o, name, cache);
        Py_DECREF(cache);
        if (rc < 0) {
            Py_DECREF(r);
            return NULL;
        }
    }
    return r;
}

static PyObject *jclass_getattro(PyObject *self, PyObject *name)
{
    JavaClassObject *o = (JavaClassObject *)self;
    size_t i = jclass_slot(name); /* only Java members are cached: JavaClassType is */
    if (o->slots[i].name == name) /* immutable, so no attribute of it shadows them   */
        return Py_NewRef(o->slots[i].value);
    if (_PyType_Lookup(Py_TYPE(self), name) || !PyUnicode_Check(name) || is_dunder(name))
        return PyObject_GenericGetAttr(self, name);
    return jclass_member(o, name);
}

static PyObject *jclass_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames)
{
    JavaClassObject *o = (JavaClassObject *)self;
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
        PyErr_Format(PyExc_TypeError, "Java constructor %U takes no keyword arguments", o->fqn);
        return NULL;
    }
    if (p4j_check_open(o->client) < 0)
        return NULL;
    ClientObject *cl = o->client;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    p4j_argpack pack;
    pack.vals = NULL; /* no arguments: no pack to make and release */
    if (n && p4j_args_from_py(cl, args, n, &pack) < 0)
        return NULL;
    if (P4JPY_SIGNALS_CATCH_UP() < 0) { /* a SIGINT just before: its handler raised */
        if (n)
            p4j_args_release(&pack);
        return NULL;
    }
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    p4j_client *c = cl->c;
    if (c->unlock && c->ops->construct_at) { /* the transport releases the GIL itself,
                                                except for a short constructor */
        st = c->ops->construct_at(c, &o->ctor_site, &o->ref, P4J_CALL_LOCK_HELD, pack.vals,
                                  (size_t)n, &out, &err);
    } else if (c->unlock) { /* in-process: the GIL, and on the main thread the call window */
        void *saved = c->unlock();
        st = c->ops->construct(c, &o->ref, pack.vals, (size_t)n, &out, &err);
        c->relock(saved);
    } else {
        Py_BEGIN_ALLOW_THREADS
        st = c->ops->construct(c, &o->ref, pack.vals, (size_t)n, &out, &err);
        Py_END_ALLOW_THREADS
    }
    if (n)
        p4j_args_release(&pack);
    if (st != P4J_OK) {
        return p4j_raise_call(cl, &err, NULL, PyUnicode_AsUTF8(o->fqn));
    }
    return P4J_BASE_CHECKED(p4j_value_to_py(cl, &out));
}

/* py4j's JavaClass(fqn, gateway_client): the class, resolved once (Py4JError if absent). */
static PyObject *jclass_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)type;
    static char *kwlist[] = {"fqn", "gateway_client", NULL};
    PyObject *fqn, *client;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "UO:JavaClass", kwlist, &fqn, &client))
        return NULL;
    if (!client_arg(client))
        return NULL;
    if (PyUnicode_FindChar(fqn, 0, 0, PyUnicode_GET_LENGTH(fqn), 1) != -1) {
        PyErr_Format(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_ValueError,
                     "py4jni: a Java class name cannot hold NUL: %R", fqn);
        return NULL;
    }
    PyObject *r = PyObject_CallMethod(client, "resolve", "OO", Py_None, fqn);
    if (r == Py_None) {
        Py_DECREF(r);
        PyErr_Format(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_RuntimeError,
                     "py4jni: %U is not a Java class", fqn);
        return NULL;
    }
    return r;
}

static PyObject *jclass_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<JavaClass %U>", ((JavaClassObject *)self)->fqn);
}

static PyObject *jclass_dir(PyObject *self, PyObject *unused)
{
    (void)unused;
    JavaClassObject *o = (JavaClassObject *)self;
    return dir_names(o->client, &o->ref, P4J_DIR_STATIC);
}

static PyObject *jclass_get_fqn(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(((JavaClassObject *)self)->fqn);
}

static PyObject *jclass_get_class(PyObject *self, void *closure)
{
    (void)closure;
    JavaClassObject *o = (JavaClassObject *)self;
    p4j_ref copy;
    p4j_error err = {0};
    if (p4j_check_open(o->client) < 0)
        return NULL;
    if (!p4jpy_has_cap(o->client, P4J_CAP_CLASS_ARG)) /* a name, not a Class reference: */
        return p4j_reg.gateway_module                 /* py4j's "r c" command */
                   ? PyObject_CallMethod(p4j_reg.gateway_module, "_java_lang_class_of", "O", self)
                   : PyErr_Format(PyExc_RuntimeError, "py4jni: the package is not loaded");
    if (o->client->c->ops->dup(o->client->c, &o->ref, &copy, &err) != P4J_OK)
        return p4j_raise(o->client, &err, NULL);
    copy.cls = NULL; /* as an object its class is java.lang.Class */
    return p4j_wrap_ref(o->client, P4J_REF, &copy);
}

static PyObject *jclass_get_client(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef((PyObject *)((JavaClassObject *)self)->client);
}

static PyMethodDef jclass_methods[] = {
    {"__dir__", jclass_dir, METH_NOARGS, "Static members of the Java class."},
    {NULL, NULL, 0, NULL},
};

static PyObject *jclass_get_doc(PyObject *self, void *closure)
{
    (void)closure;
    return help_doc(self, NULL, "A Java class.");
}

static PyGetSetDef jclass_getset[] = {
    {"__doc__", jclass_get_doc, NULL, "py4j's help page of the class.", NULL},
    {"_fqn", jclass_get_fqn, NULL, "The class's binary name.", NULL},
    {"_java_lang_class", jclass_get_class, NULL, "The java.lang.Class object (a JavaObject).",
     NULL},
    {"_gateway_client", jclass_get_client, NULL, "The client this class lives in.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject JavaClassType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "py4jni._py4jni.JavaClass",
    .tp_doc = "JavaClass(fqn, gateway_client)\n--\n\n" /* py4j's signature */
              "A Java class: attributes are static members (fields read on every "
              "access), calling it constructs an instance.",
    .tp_basicsize = sizeof(JavaClassObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_weaklistoffset = offsetof(JavaClassObject, weakreflist),
    .tp_traverse = jclass_traverse,
    .tp_clear = jclass_clear,
    .tp_dealloc = jclass_dealloc,
    .tp_getattro = jclass_getattro,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(JavaClassObject, vectorcall),
    .tp_repr = jclass_repr,
    .tp_new = jclass_new,
    .tp_methods = jclass_methods,
    .tp_getset = jclass_getset,
};

/* ---------------------------------------------------------------- Namespace */

/* Whether a name found in the instance __dict__ of a `type` instance is the attribute
 * (no type in its MRO has a data descriptor of a non-dunder name, which would win over
 * the __dict__), cached per type and version tag: a change to the class is seen. */
P4JPY_MUTEX(plain_names_lock); /* free-threaded builds: `seen` below */

static int plain_names(PyTypeObject *type)
{
    static struct { PyTypeObject *type; unsigned int version; int plain; } seen[8];
    static unsigned next;
    if (!(type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
        return 0; /* tagged by the next generic lookup */
    P4JPY_MUTEX_LOCK(plain_names_lock);
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
        if (seen[i].type == type && seen[i].version == type->tp_version_tag) {
            int plain = seen[i].plain;
            P4JPY_MUTEX_UNLOCK(plain_names_lock);
            return plain;
        }
    P4JPY_MUTEX_UNLOCK(plain_names_lock);
    int plain = 1;
    PyObject *mro = type->tp_mro;
    for (Py_ssize_t i = 0; mro && plain && i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (plain && dict && PyDict_Next(dict, &pos, &key, &value))
            plain = !(PyUnicode_Check(key) && !is_dunder(key) && Py_TYPE(value)->tp_descr_set);
    }
    P4JPY_MUTEX_LOCK(plain_names_lock);
    unsigned slot = next++ % (sizeof seen / sizeof seen[0]);
    seen[slot].type = type;
    seen[slot].version = type->tp_version_tag;
    seen[slot].plain = plain;
    P4JPY_MUTEX_UNLOCK(plain_names_lock);
    return plain;
}

/* Slots of a name space's lookup cache (a power of two). */
#define NS_SLOTS 8

/* A name space (the base of JVMView, JavaPackage and JavaGateway). Names it resolved
 * live in `names` (set by _remember, never by assignment), read first; `slots` is a
 * direct-mapped cache of `names` keyed by the interned str's address, so that
 * `jvm.java.lang.System` costs three pointer compares. The slots borrow from `names`
 * and are emptied whenever `names` changes; they are valid while the type's version
 * tag is the one they were filled under (a class change, such as a data descriptor
 * added, is seen). */
typedef struct NamespaceObject {
    PyObject_HEAD
    PyObject *names;      /* dict: name -> value, or NULL */
    unsigned int version; /* the type's version tag when the slots were filled; 0: empty */
    struct {
        PyObject *name;   /* interned str (a strong reference), or NULL */
        PyObject *value;  /* borrowed from names */
    } slots[NS_SLOTS];
} NamespaceObject;

static inline size_t ns_slot(PyObject *name)
{
    return ((uintptr_t)name >> 4) & (NS_SLOTS - 1);
}

static void ns_slots_clear(NamespaceObject *ns)
{
    for (size_t i = 0; i < NS_SLOTS; i++)
        Py_CLEAR(ns->slots[i].name);
    memset(ns->slots, 0, sizeof ns->slots);
    ns->version = 0;
}

/* The value `names` holds for `name` (new reference, the slot filled when the name is
 * interned), or NULL: absent (no exception) or an error. */
static PyObject *ns_names_get(NamespaceObject *ns, PyObject *name)
{
    PyObject *names = P4JPY_LOAD(ns->names);
    if (!names)
        return NULL;
#ifdef Py_GIL_DISABLED /* a value held: _remember on another thread may replace it */
    PyObject *v;
    PyDict_GetItemRef(names, name, &v);
    return v;
#else
    PyObject *v = PyDict_GetItemWithError(names, name);
    if (!v)
        return NULL;
    PyTypeObject *type = Py_TYPE(ns); /* the slots are read without a lock: only where
                                         the GIL orders (free-threaded builds: above) */
    if (PyUnicode_CHECK_INTERNED(name) && (type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) &&
        type->tp_version_tag) {
        if (ns->version != type->tp_version_tag)
            ns_slots_clear(ns);
        size_t i = ns_slot(name);
        ns->version = type->tp_version_tag;
        Py_XSETREF(ns->slots[i].name, Py_NewRef(name)); /* held: its address stays its own */
        ns->slots[i].value = v;
    }
    return Py_NewRef(v);
#endif
}

/* The lookup after a slot missed: `names` and the instance __dict__ (first, when no data
 * descriptor of the class can shadow them), the class, then self._resolve(name) for a
 * name that is not a dunder. */
static __attribute__((noinline)) PyObject *ns_getattro_slow(PyObject *self, PyObject *name)
{
    NamespaceObject *ns = (NamespaceObject *)self;
    int plain = PyUnicode_CheckExact(name) && !is_dunder(name) && plain_names(Py_TYPE(self));
    if (plain) {
        PyObject *v = ns_names_get(ns, name);
        if (v || PyErr_Occurred())
            return v;
        int found = instance_dict_get(self, name, &v);
        if (found)
            return found > 0 ? v : NULL;
    }
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r || !PyErr_ExceptionMatches(PyExc_AttributeError) || !PyUnicode_Check(name) ||
        is_dunder(name))
        return r;
    PyErr_Clear();
    PyObject *names = P4JPY_LOAD(ns->names);
    if (!plain && names) { /* shadowed by nothing after all: a remembered name */
#ifdef Py_GIL_DISABLED
        PyObject *v;
        if (PyDict_GetItemRef(names, name, &v))
            return v;
#else
        PyObject *v = PyDict_GetItemWithError(names, name);
        if (v || PyErr_Occurred())
            return Py_XNewRef(v);
#endif
    }
    return PyObject_CallMethodOneArg(self, name_resolve, name);
}

static PyObject *ns_getattro(PyObject *self, PyObject *name)
{
    NamespaceObject *ns = (NamespaceObject *)self;
    size_t i = ns_slot(name);
    if (ns->slots[i].name == name && ns->version == Py_TYPE(self)->tp_version_tag &&
        (Py_TYPE(self)->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
        return Py_NewRef(ns->slots[i].value);
    return ns_getattro_slow(self, name);
}

/* Assigning or deleting an attribute drops a remembered value of that name first (the
 * assignment is what later reads see). */
static int ns_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    NamespaceObject *ns = (NamespaceObject *)self;
    if (ns->names && PyUnicode_Check(name)) {
        int has = PyDict_Contains(ns->names, name);
        if (has < 0 || (has && PyDict_DelItem(ns->names, name) < 0))
            return -1;
        if (has)
            ns_slots_clear(ns);
    }
    return PyObject_GenericSetAttr(self, name, value);
}

static PyObject *ns_remember(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    NamespaceObject *ns = (NamespaceObject *)self;
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_remember(name: str, value)");
        return NULL;
    }
    PyObject *names;
    P4JPY_LOCK_OBJ(ns);
    if (!ns->names)
        P4JPY_STORE(ns->names, PyDict_New());
    names = ns->names;
    ns_slots_clear(ns);
    P4JPY_UNLOCK_OBJ();
    if (!names || PyDict_SetItem(names, args[0], args[1]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *ns_forget_names(PyObject *self, PyObject *unused)
{
    (void)unused;
    NamespaceObject *ns = (NamespaceObject *)self;
    ns_slots_clear(ns);
    if (ns->names)
        PyDict_Clear(ns->names);
    Py_RETURN_NONE;
}

static PyObject *ns_remembered(PyObject *self, PyObject *unused)
{
    (void)unused;
    NamespaceObject *ns = (NamespaceObject *)self;
    return ns->names ? PyDict_Copy(ns->names) : PyDict_New();
}

static int ns_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((NamespaceObject *)self)->names);
    return 0;
}

static int ns_clear(PyObject *self)
{
    NamespaceObject *ns = (NamespaceObject *)self;
    ns_slots_clear(ns);
    Py_CLEAR(ns->names);
    return 0;
}

static void ns_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    ns_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef ns_methods[] = {
    {"_remember", (PyCFunction)(void (*)(void))ns_remember, METH_FASTCALL,
     "_remember(name, value): later reads of the attribute `name` give `value` (until "
     "_forget_names, or an assignment to the attribute)."},
    {"_forget_names", ns_forget_names, METH_NOARGS, "Drops every remembered name."},
    {"_remembered", ns_remembered, METH_NOARGS, "A dict of the remembered names."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject NamespaceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "py4jni._py4jni.Namespace",
    .tp_doc = "Base of py4jni's name spaces: names remembered by _remember, then the "
              "instance __dict__, read at C speed; a miss calls self._resolve(name).",
    .tp_basicsize = sizeof(NamespaceObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_getattro = ns_getattro,
    .tp_setattro = ns_setattro,
    .tp_traverse = ns_traverse,
    .tp_clear = ns_clear,
    .tp_dealloc = ns_dealloc,
    .tp_methods = ns_methods,
    .tp_new = PyType_GenericNew,
};
