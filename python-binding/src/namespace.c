/* python-binding/src/namespace.c - Namespace: the base of py4jni's Python name spaces
 * (JavaGateway, JVMView, JavaPackage). Names cached in the instance are read at C
 * speed; a miss calls self._resolve(name).
 */
#include "objects.h"

/* The interned name of the name spaces' resolver. */
static PyObject *name_resolve;

int p4jpy_namespace_init(void)
{
    name_resolve = PyUnicode_InternFromString("_resolve");
    return name_resolve ? 0 : -1;
}

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
            plain = !(PyUnicode_Check(key) && !p4jpy_is_dunder(key) && Py_TYPE(value)->tp_descr_set);
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
    int plain = PyUnicode_CheckExact(name) && !p4jpy_is_dunder(name) && plain_names(Py_TYPE(self));
    if (plain) {
        PyObject *v = ns_names_get(ns, name);
        if (v || PyErr_Occurred())
            return v;
        int found = p4jpy_instance_dict_get(self, name, &v);
        if (found)
            return found > 0 ? v : NULL;
    }
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r || !PyErr_ExceptionMatches(PyExc_AttributeError) || !PyUnicode_Check(name) ||
        p4jpy_is_dunder(name))
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
