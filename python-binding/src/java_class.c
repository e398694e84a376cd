/* python-binding/src/java_class.c - JavaClass: a Java class. Attributes are static
 * members (methods and nested classes cached per class, fields read on every access),
 * calling it constructs an instance.
 */
#include "objects.h"

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
    p4jpy_holder_dealloc_begin(self, &o->weakreflist);
    jclass_slots_clear(o);
    Py_CLEAR(o->members);
    Py_CLEAR(o->fqn);
    p4jpy_holder_release(&o->client, &o->ref, NULL, 0);
    PyObject_GC_Del(self);
}

/* JavaClass.members holds per static name: the JavaMember of its methods (made once,
 * shared by every read: its call site stays resolved), a nested class's JavaClass, or
 * P4JPY_CACHED_FIELD for a field, whose value is read on every access. */
#define P4JPY_CACHED_FIELD 1

/* Sets `o->members[name]` to `value`, emptying the slots (they borrow from members). */
static int jclass_members_set(JavaClassObject *o, PyObject *name, PyObject *value)
{
#ifndef Py_GIL_DISABLED
    jclass_slots_clear(o); /* free-threaded builds fill no slot (jclass_cached) */
#endif
    return PyDict_SetItem(o->members, name, value);
}

/* A cached method or nested class of `o->members` (new reference), its slot filled
 * when `name` is interned; NULL when `kind` is neither (or, free-threaded, with an
 * exception when a JavaMember could not be made). */
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
    /* Each read its own JavaMember, its call site copied: threads calling a static
     * method through one shared object would all write its reference count. */
    if (Py_IS_TYPE(kind, &JavaMemberType)) {
        PyObject *m = p4jpy_member_new((PyObject *)o, name, P4J_CALL_STATIC);
        if (m)
            P4JPY_STORE(((JavaMemberObject *)m)->site,
                        P4JPY_LOAD(((JavaMemberObject *)kind)->site));
        return m;
    }
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
    if (PyErr_Occurred())
        return NULL;
    if (p4j_check_open(o->client) < 0)
        return NULL;
    Py_ssize_t cname_len;
    const char *cname = PyUnicode_AsUTF8AndSize(name, &cname_len);
    if (!cname || p4jpy_check_member_name(name, cname, cname_len) < 0)
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
    if (_PyType_Lookup(Py_TYPE(self), name) || !PyUnicode_Check(name) || p4jpy_is_dunder(name))
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
    if (p4jpy_call_args(cl, args, n, &pack) < 0)
        return NULL;
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
    if (!p4jpy_client_arg(client))
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
    return p4jpy_dir_names(o->client, &o->ref, P4J_DIR_STATIC);
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
    return p4jpy_help_doc(self, NULL, "A Java class.");
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
