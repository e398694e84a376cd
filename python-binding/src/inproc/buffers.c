/* python-binding/src/inproc/buffers.c - zero-copy buffers between Python and Java, in-process
 * only (bridge/inproc/include/inproc_buffers.h does the JNI side).
 *
 * direct_buffer(client, obj): a Java direct ByteBuffer over the memory of a writable,
 * C-contiguous Python buffer (bytearray, numpy array, mmap). The Py_buffer export is
 * held until Java has collected the ByteBuffer (DirectBuffers' Cleaner calls back), so
 * the object stays alive, and cannot be resized or closed, while Java may use it.
 *
 * as_memoryview(buf): a memoryview over the memory of a Java direct ByteBuffer. The
 * exporter behind the memoryview holds the JavaObject, pinned (see p4j_pin), so the
 * ByteBuffer and its memory stay alive while the memoryview or any view taken from it
 * lives: a detach meanwhile parks the global ref until the exporter goes.
 */
#include "binding.h"
#include "inproc_buffers.h"

/* ------------------------------------------------------ Python memory for Java */

/* The export held for Java; view.obj holds the exporting object. */
typedef struct held_buffer {
    Py_buffer view;
} held_buffer;

/* Runs on the Cleaner's thread once Java has dropped the buffer. */
static void held_release(void *ctx)
{
    held_buffer *h = ctx;
    p4j_gil g;
    if (p4j_python_enter(&g) < 0)
        return; /* the exiting interpreter frees its objects */
    PyBuffer_Release(&h->view);
    PyMem_RawFree(h);
    p4j_python_leave(&g);
}

/* The in-process client of `clo`, or NULL with an exception. */
static ClientObject *inproc_client_of(PyObject *clo, const char *what)
{
    if (!PyObject_TypeCheck(clo, &ClientType)) {
        PyErr_SetString(PyExc_TypeError, "expected a py4jni Client");
        return NULL;
    }
    ClientObject *cl = (ClientObject *)clo;
    if (!p4jpy_has_cap(cl, P4J_CAP_BUFFERS)) {
        PyErr_Format(p4j_reg.Py4JError, "py4jni: %s needs the in-process gateway (socket "
                     "mode: Java runs in another process and cannot see Python's memory)",
                     what);
        return NULL;
    }
    return p4j_check_open(cl) < 0 ? NULL : cl;
}

static PyObject *mod_direct_buffer(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *clo, *obj;
    if (!PyArg_ParseTuple(args, "OO:direct_buffer", &clo, &obj))
        return NULL;
    ClientObject *cl = inproc_client_of(clo, "direct_buffer");
    if (!cl)
        return NULL;
    if (!PyObject_CheckBuffer(obj))
        return PyErr_Format(PyExc_TypeError, "py4jni: direct_buffer needs an object with the "
                            "buffer protocol (bytearray, numpy array, mmap), not %.100s",
                            Py_TYPE(obj)->tp_name);
    held_buffer *h = PyMem_RawCalloc(1, sizeof *h);
    if (!h)
        return PyErr_NoMemory();
    if (PyObject_GetBuffer(obj, &h->view, PyBUF_FULL_RO) < 0) {
        PyMem_RawFree(h);
        return NULL;
    }
    const char *why = h->view.readonly ? "is read-only (Java could write to it): copy it "
                                         "into a bytearray, or use a writable array"
                      : !PyBuffer_IsContiguous(&h->view, 'C')
                          ? "is not C-contiguous (numpy.ascontiguousarray makes a "
                            "contiguous copy)"
                          : NULL;
    if (why) {
        PyErr_Format(PyExc_BufferError, "py4jni: direct_buffer: this %.100s buffer %s",
                     Py_TYPE(obj)->tp_name, why);
        PyBuffer_Release(&h->view);
        PyMem_RawFree(h);
        return NULL;
    }
    p4j_value v;
    p4j_error err = {0};
    p4j_status st;
    Py_BEGIN_ALLOW_THREADS
    st = p4j_inproc_direct_buffer(cl->c, h->view.buf, (size_t)h->view.len, held_release, h,
                                  &v, &err);
    Py_END_ALLOW_THREADS
    if (st != P4J_OK) {
        PyBuffer_Release(&h->view);
        PyMem_RawFree(h);
        return p4j_raise(cl, &err, NULL);
    }
    return p4j_value_to_py(cl, &v); /* from here on Java owns `h` */
}

/* ------------------------------------------------------ Java memory for Python */

/* The exporter behind as_memoryview's memoryview. */
typedef struct JavaBufferViewObject {
    PyObject_HEAD
    JavaObject *owner; /* the ByteBuffer's JavaObject: strong, and pinned */
    void *addr;
    Py_ssize_t len;
    int readonly;
} JavaBufferViewObject;

static int jbv_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    JavaBufferViewObject *v = (JavaBufferViewObject *)self;
    return PyBuffer_FillInfo(view, self, v->addr, v->len, v->readonly, flags);
}

static void jbv_dealloc(PyObject *self)
{
    JavaBufferViewObject *v = (JavaBufferViewObject *)self;
    if (v->owner) {
        p4j_unpin(v->owner); /* releases the ref if a detach parked it */
        Py_DECREF(v->owner);
    }
    Py_TYPE(self)->tp_free(self);
}

static PyBufferProcs jbv_as_buffer = {.bf_getbuffer = jbv_getbuffer};

static PyTypeObject JavaBufferViewType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "py4jni._py4jni.JavaBufferView",
    .tp_doc = "The memory of a Java direct ByteBuffer (the exporter behind as_memoryview).",
    .tp_basicsize = sizeof(JavaBufferViewObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = jbv_dealloc,
    .tp_as_buffer = &jbv_as_buffer,
};

static PyObject *mod_as_memoryview(PyObject *mod, PyObject *obj)
{
    (void)mod;
    if (!P4J_IS_JAVAOBJECT(obj))
        return PyErr_Format(PyExc_TypeError, "py4jni: as_memoryview needs a JavaObject (a "
                            "direct java.nio.ByteBuffer), not %.100s", Py_TYPE(obj)->tp_name);
    JavaObject *jo = (JavaObject *)obj;
    ClientObject *cl = inproc_client_of((PyObject *)jo->client, "as_memoryview");
    if (!cl)
        return NULL;
    void *addr;
    size_t len;
    bool readonly;
    p4j_error err = {0};
    p4j_ref target;
    /* Pinned for the view's life: a detach meanwhile (this thread's or another's) parks
     * the ref, and the memory stays, until the view goes. */
    if (p4jpy_pin_or_raise(jo, &target) < 0)
        return NULL;
    /* With the GIL kept: a few JNI calls that neither block nor call back (once per
     * class, ByteBuffer.isDirect and isReadOnly, JDK code on JDK classes) */
    p4j_status st = p4j_inproc_buffer_address(cl->c, &target, &addr, &len, &readonly, &err);
    JavaBufferViewObject *v = st == P4J_OK
                                  ? PyObject_New(JavaBufferViewObject, &JavaBufferViewType)
                                  : NULL;
    if (!v) {
        p4j_unpin(jo);
        return st == P4J_OK ? NULL : p4j_raise(cl, &err, NULL);
    }
    v->owner = (JavaObject *)Py_NewRef(obj);
    v->addr = addr;
    v->len = (Py_ssize_t)len;
    v->readonly = readonly;
    PyObject *mv = PyMemoryView_FromObject((PyObject *)v);
    Py_DECREF(v);
    return mv;
}

static PyMethodDef buffer_methods[] = {
    {"direct_buffer", mod_direct_buffer, METH_VARARGS,
     "direct_buffer(client, obj): a Java direct ByteBuffer over obj's memory (no copy)."},
    {"as_memoryview", mod_as_memoryview, METH_O,
     "as_memoryview(java_buffer, /)\n--\n\n"
     "A memoryview over the memory of a Java direct ByteBuffer (its whole capacity, "
     "whatever its position and limit), without a copy (py4jni only, in-process). The "
     "ByteBuffer stays referenced while the memoryview, or a view taken from it, lives; "
     "read-only when the ByteBuffer is. Heap buffers raise Py4JError."},
    {NULL, NULL, 0, NULL},
};

int p4j_buffers_init(PyObject *module)
{
    if (PyType_Ready(&JavaBufferViewType) < 0)
        return -1;
    return PyModule_AddFunctions(module, buffer_methods);
}
