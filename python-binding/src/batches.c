/* python-binding/src/batches.c - collections in bulk: BatchIterator walks a Java
 * collection a chunk per transport call (cursor ops), and new_collection builds a
 * java.util collection from a Python one in one call (collection_new op).
 *
 * Both return NotImplemented when the transport lacks the op; java_collections.py then
 * falls back to plain Java method calls.
 */
#include <string.h>

#include "binding.h"

void p4j_value_discard(ClientObject *cl, p4j_value *v)
{
    if (v->kind == P4J_BYTES) {
        p4j_error err = {0};
        if (cl->c->ops->read_bytes(cl->c, v, NULL, &err) != P4J_OK)
            p4j_error_clear(cl->c, &err);
    } else if (p4j_kind_has_ref(v->kind) && v->ref.handle) {
        cl->c->ops->release(cl->c, &v->ref);
    }
    p4j_value_clear(v);
    v->kind = P4J_NULL;
}

/* ------------------------------------------------------------ BatchIterator */

typedef struct BatchIterObject {
    PyObject_HEAD
    ClientObject *client;
    p4j_ref cursor;      /* the transport's cursor (owned); NULL once exhausted */
    p4j_value *vals;     /* chunk buffer, cap slots */
    size_t cap;
    size_t chunk, max_chunk;
    PyObject *items;     /* the converted chunk (list) */
    Py_ssize_t pos;
    char pairs;          /* yield (key, value) tuples from slot pairs */
    char busy;           /* a fetch, or the conversion of its chunk, is under way: refuse
                            re-entry (another thread, or a __del__ run by that conversion) */
} BatchIterObject;

static void batch_close(BatchIterObject *it)
{
    if (it->cursor.handle)
        it->client->c->ops->release(it->client->c, &it->cursor);
    it->cursor.handle = NULL;
}

static void batch_dealloc(PyObject *self)
{
    BatchIterObject *it = (BatchIterObject *)self;
    if (it->client) {
        batch_close(it);
        Py_CLEAR(it->client);
    }
    Py_CLEAR(it->items);
    PyMem_Free(it->vals);
    PyObject_Free(self);
}

/* batch_fetch's work, with the iterator marked busy. */
static int batch_fetch_busy(BatchIterObject *it)
{
    ClientObject *cl = it->client;
    Py_CLEAR(it->items);
    it->pos = 0;
    if (!it->cursor.handle)
        return 0;
    if (p4j_check_open(cl) < 0)
        return -1;
    size_t want = it->chunk;
    if (want > it->cap) {
        p4j_value *v = PyMem_Realloc(it->vals, want * sizeof *v);
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        it->vals = v;
        it->cap = want;
    }
    size_t n = 0;
    p4j_error err = {0};
    p4j_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cl->c->ops->cursor_next(cl->c, &it->cursor, it->vals, want, &n, &err);
    Py_END_ALLOW_THREADS
    if (st != P4J_OK) {
        batch_close(it); /* a failed walk (ConcurrentModificationException, ...) ends */
        p4j_raise(cl, &err, "a collection iterator");
        return -1;
    }
    if (n == 0) {
        batch_close(it);
        return 0;
    }
    if (it->chunk < it->max_chunk)
        it->chunk = it->chunk * 2 > it->max_chunk ? it->max_chunk : it->chunk * 2;
    Py_ssize_t count = (Py_ssize_t)(it->pairs ? n / 2 : n);
    PyObject *list = PyList_New(count);
    size_t i = 0;
    if (!list)
        goto fail;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = p4j_value_to_py(cl, &it->vals[i++]);
        if (item && it->pairs) {
            PyObject *val = p4j_value_to_py(cl, &it->vals[i++]);
            PyObject *pair = val ? PyTuple_Pack(2, item, val) : NULL;
            Py_XDECREF(val);
            Py_SETREF(item, pair);
        }
        if (!item)
            goto fail;
        PyList_SET_ITEM(list, k, item);
    }
    it->items = list;
    return 1;
fail:
    for (; i < n; i++)
        p4j_value_discard(cl, &it->vals[i]);
    Py_XDECREF(list);
    return -1;
}

/* Fetches and converts the next chunk into it->items; 0 at the end (items NULL). The
 * chunk buffer is the iterator's: busy from the fetch to the end of the conversion,
 * whose allocations may run Python code (a collection's __del__) or let another thread in. */
static int batch_fetch(BatchIterObject *it)
{
    if (it->busy) {
        PyErr_SetString(PyExc_RuntimeError, "py4jni: this iterator is already fetching (on "
                                            "another thread, or re-entered by its own fetch)");
        return -1;
    }
    it->busy = 1;
    int r = batch_fetch_busy(it);
    it->busy = 0;
    return r;
}

#ifdef Py_GIL_DISABLED
static PyObject *batch_next_locked(PyObject *self);

/* Free-threaded builds: one thread at a time checks and sets the iterator's state (the
 * lock is let go while a fetch waits for the transport, which `busy` then guards). */
static PyObject *batch_next(PyObject *self)
{
    PyObject *r;
    Py_BEGIN_CRITICAL_SECTION(self);
    r = batch_next_locked(self);
    Py_END_CRITICAL_SECTION();
    return r;
}

static PyObject *batch_next_locked(PyObject *self)
#else
static PyObject *batch_next(PyObject *self)
#endif
{
    BatchIterObject *it = (BatchIterObject *)self;
    if (!it->items || it->pos >= PyList_GET_SIZE(it->items)) {
        if (batch_fetch(it) <= 0)
            return NULL; /* StopIteration (no exception set) or the error */
    }
    return Py_NewRef(PyList_GET_ITEM(it->items, it->pos++));
}

static PyObject *batch_close_meth(PyObject *self, PyObject *unused)
{
    (void)unused;
    BatchIterObject *it = (BatchIterObject *)self;
    int busy;
    P4JPY_LOCK_OBJ(self);
    busy = it->busy;
    if (!busy) {
        batch_close(it);
        Py_CLEAR(it->items);
    }
    P4JPY_UNLOCK_OBJ();
    if (busy) {
        PyErr_SetString(PyExc_RuntimeError, "py4jni: this iterator is fetching");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef batch_methods[] = {
    {"close", batch_close_meth, METH_NOARGS, "Ends the walk and releases the Java cursor now."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject BatchIterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "py4jni._py4jni.BatchIterator",
    .tp_doc = "Iterates a Java collection a chunk per transport call (chunks grow from "
              "`first` to `max` elements); Java exceptions of the walk, such as "
              "ConcurrentModificationException, surface as Py4JJavaError.",
    .tp_basicsize = sizeof(BatchIterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = batch_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = batch_next,
    .tp_methods = batch_methods,
};

static PyObject *mod_iterate(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"source", "mode", "first", "max", NULL};
    PyObject *source;
    int mode = 'k';
    Py_ssize_t first = 64, max = 4096;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Cnn:iterate", kwlist, &source, &mode, &first,
                                     &max))
        return NULL;
    if (!P4J_IS_JAVAOBJECT(source)) {
        PyErr_Format(PyExc_TypeError, "iterate() needs a JavaObject, not %.100s",
                     Py_TYPE(source)->tp_name);
        return NULL;
    }
    if (first < 1 || max < first || !strchr("kve", mode)) {
        PyErr_SetString(PyExc_ValueError, "iterate(): mode is 'k', 'v' or 'e'; 1 <= first <= max");
        return NULL;
    }
    int pairs = mode == 'e';
    if (pairs) { /* slots come in pairs */
        first *= 2;
        max *= 2;
    }
    JavaObject *jo = (JavaObject *)source;
    ClientObject *cl = jo->client;
    const p4j_client_ops *ops = cl->c->ops;
    if (!p4j_bulk_enabled || !ops->cursor_open || !ops->cursor_next)
        Py_RETURN_NOTIMPLEMENTED;
    if (p4j_check_open(cl) < 0)
        return NULL;
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    p4j_ref target; /* pinned: a detach on another thread meanwhile waits for the op */
    if (p4jpy_pin_or_raise(jo, &target) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = ops->cursor_open(cl->c, &target, (char)mode, &out, &err);
    Py_END_ALLOW_THREADS
    p4j_unpin(jo);
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    BatchIterObject *it = PyObject_New(BatchIterObject, &BatchIterType);
    if (!it) {
        ops->release(cl->c, &out.ref);
        return NULL;
    }
    it->client = (ClientObject *)Py_NewRef((PyObject *)cl);
    it->cursor = out.ref;
    it->vals = NULL;
    it->cap = 0;
    it->chunk = (size_t)first;
    it->max_chunk = (size_t)max;
    it->items = NULL;
    it->pos = 0;
    it->pairs = (char)pairs;
    it->busy = 0;
    return (PyObject *)it;
}

/* ------------------------------------------------------------ new_collection */

/* A new list of the items of mapping `m` flattened as key, value, key, value. */
static PyObject *flatten_mapping(PyObject *m)
{
    PyObject *flat = PyList_New(0), *k, *v;
    if (!flat)
        return NULL;
    if (PyDict_Check(m)) {
        Py_ssize_t pos = 0;
        while (PyDict_Next(m, &pos, &k, &v))
            if (PyList_Append(flat, k) < 0 || PyList_Append(flat, v) < 0)
                goto fail;
        return flat;
    }
    PyObject *keys = PyObject_CallMethod(m, "keys", NULL);
    PyObject *iter = keys ? PyObject_GetIter(keys) : NULL;
    Py_XDECREF(keys);
    if (!iter)
        goto fail;
    while ((k = PyIter_Next(iter))) {
        v = PyObject_GetItem(m, k);
        int rc = v && PyList_Append(flat, k) == 0 ? PyList_Append(flat, v) : -1;
        Py_DECREF(k);
        Py_XDECREF(v);
        if (rc < 0) {
            Py_DECREF(iter);
            goto fail;
        }
    }
    Py_DECREF(iter);
    if (PyErr_Occurred())
        goto fail;
    return flat;
fail:
    Py_DECREF(flat);
    return NULL;
}

static PyObject *mod_new_collection(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *client, *data;
    int kind;
    if (!PyArg_ParseTuple(args, "O!CO:new_collection", &ClientType, &client, &kind, &data))
        return NULL;
    if (!strchr("lhaA", kind)) {
        PyErr_SetString(PyExc_ValueError, "new_collection(): kind is 'l', 'h', 'a' or 'A'");
        return NULL;
    }
    ClientObject *cl = (ClientObject *)client;
    if (!p4j_bulk_enabled || !cl->c->ops->collection_new)
        Py_RETURN_NOTIMPLEMENTED;
    if (p4j_check_open(cl) < 0)
        return NULL;
    /* the items as they are now: an item's conversion may run Python code */
    PyObject *seq = kind == 'a' ? flatten_mapping(data)
                                : p4j_stable_sequence(data, "new_collection() needs an iterable");
    if (kind == 'A') /* a map from keys and values already laid out in turn */
        kind = 'a';
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    p4j_argpack pack;
    if (p4j_args_from_py(cl, PySequence_Fast_ITEMS(seq), n, &pack) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cl->c->ops->collection_new(cl->c, (char)kind, pack.vals, (size_t)n, &out, &err);
    Py_END_ALLOW_THREADS
    p4j_args_release(&pack);
    Py_DECREF(seq);
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    return p4j_value_to_py(cl, &out);
}

/* nested_at(seq): the index of the first item of list or tuple `seq` that is exactly a
 * list, tuple, dict, set or frozenset, else -1 (one pass in C, no call). */
static PyObject *mod_nested_at(PyObject *mod, PyObject *seq)
{
    (void)mod;
    if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
        PyErr_SetString(PyExc_TypeError, "nested_at() needs a list or a tuple");
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = items[i];
        if (PyList_CheckExact(o) || PyTuple_CheckExact(o) || PyDict_CheckExact(o) ||
            PyAnySet_CheckExact(o))
            return PyLong_FromSsize_t(i);
    }
    return PyLong_FromLong(-1);
}

static PyMethodDef batch_functions[] = {
    {"nested_at", mod_nested_at, METH_O,
     "nested_at(seq): the index of the first item of list or tuple seq that is exactly a "
     "list, tuple, dict, set or frozenset, else -1."},
    {"iterate", (PyCFunction)(void (*)(void))mod_iterate, METH_VARARGS | METH_KEYWORDS,
     "iterate(source, mode='k', first=64, max=4096): a BatchIterator over a Java Map "
     "(mode 'k' keys, 'v' values, 'e' (key, value) tuples), Iterable, array or Iterator, "
     "fetching chunks of first..max elements per transport call; NotImplemented when the "
     "transport lacks cursors."},
    {"new_collection", mod_new_collection, METH_VARARGS,
     "new_collection(client, kind, data): a java.util.ArrayList ('l'), HashSet ('h') or "
     "HashMap ('a', from a mapping; 'A': from keys and values in turn) of the converted "
     "elements, in one transport call; "
     "NotImplemented when the transport lacks the operation."},
    {NULL, NULL, 0, NULL},
};

int p4j_batches_init(PyObject *module)
{
    if (PyType_Ready(&BatchIterType) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "BatchIterator", (PyObject *)&BatchIterType) < 0)
        return -1;
    return PyModule_AddFunctions(module, batch_functions);
}
