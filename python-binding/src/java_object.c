/* python-binding/src/java_object.c - JavaObject: a reference to a Java object (and
 * JavaObjectExt, the same with attributes of its own). Attributes are Java members,
 * == calls equals, hash() hashCode, str() toString; plain JavaObjects are recycled
 * through a free list; a call pins its target against a detach() on another thread.
 */
#include "objects.h"

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
int p4jpy_jobject_note_method(JavaObject *o, PyObject *name)
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
    p4jpy_holder_dealloc_begin(self, &o->weakreflist);
    Py_CLEAR(o->dict);
    Py_CLEAR(o->methods);
    /* a parked handle is not expected here: a pinned object is referenced by its call */
    p4jpy_holder_release(&o->client, &o->ref, &o->parked, 1);
    if (P4JPY_FREELISTS &&
        (Py_IS_TYPE(self, &JavaObjectType) || Py_IS_TYPE(self, &JavaObjectExtType)) &&
        jobject_freelist_len < JOBJECT_FREELIST_MAX) {
        Py_SET_TYPE(self, &JavaObjectType);
        jobject_freelist[jobject_freelist_len++] = o;
    } else {
        Py_TYPE(self)->tp_free(self);
    }
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
    ClientObject *cl = p4jpy_client_arg(client);
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
        int found = p4jpy_instance_dict_get(self, name, &v);
        if (found)
            return found > 0 ? v : NULL;
    }
    if (!PyUnicode_Check(name) || p4jpy_is_dunder(name))
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
            if (p4jpy_jobject_note_method(o, name) < 0)
                return NULL;
        }
    }
    return p4jpy_member_new(self, name, 0);
}

static PyObject *jobject_getattro(PyObject *self, PyObject *name)
{
    if (Py_IS_TYPE(self, &JavaObjectType) && plain_member_name(name) &&
        !((JavaObject *)self)->client->auto_field)
        return p4jpy_member_new_interned(self, name);
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

/* Interned names of the java.lang.Object methods str(), hash() and == call. */
static PyObject *name_toString, *name_hashCode, *name_equals;

int p4jpy_java_object_init(void)
{
    name_toString = PyUnicode_InternFromString("toString");
    name_hashCode = PyUnicode_InternFromString("hashCode");
    name_equals = PyUnicode_InternFromString("equals");
    JavaObjectExtType.tp_base = &JavaObjectType;
    if (PyType_Ready(&JavaObjectExtType) < 0)
        return -1;
    return name_toString && name_hashCode && name_equals ? 0 : -1;
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
    p4j_ref target; /* pinned: a detach on another thread meanwhile waits for the ops */
    if (p4jpy_pin_or_raise(o, &target) < 0)
        return NULL;
    /* py4j lists the fields only under auto_field (then they are attributes) */
    PyObject *fields = jobject_auto_field(o) ? p4jpy_dir_names(o->client, &target, P4J_DIR_FIELDS)
                                             : PyList_New(0);
    PyObject *methods = fields ? p4jpy_dir_names(o->client, &target, P4J_DIR_METHODS) : NULL;
    p4j_unpin(o);
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

#ifdef Py_GIL_DISABLED /* (GIL builds: binding.h) */
void p4j_unpin(JavaObject *o)
{
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
}
#endif

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
    return p4jpy_help_doc(self, NULL, "A reference to a Java object.");
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
