/* python-binding/src/arrays.c - Java arrays on the Python side: the JavaArrayBase type
 * (base of java_collections.JavaArray) with the buffer protocol for primitive arrays,
 * and packing Python numbers or buffers into primitive arrays in one transport call.
 *
 * A buffer export is a copy: getbuffer copies the Java array into memory of its own
 * (one region copy, no critical region, so no JNI state is held while Python runs);
 * a writable export writes the elements that changed back when it is released. The
 * transport's optional array ops do the copies; without them (socket mode) the
 * Python class's _fallback_* methods do, with plain Java calls.
 */
#include <string.h>

#include "binding.h"

int p4j_bulk_enabled = 1;

/* One row per primitive element type: JNI letter, buffer format, item size, Java name. */
#define P4J_ELEM_TABLE(X)            \
    X('Z', "?", 1, "boolean")        \
    X('B', "b", 1, "byte")           \
    X('C', "H", 2, "char")           \
    X('S', "h", 2, "short")          \
    X('I', "i", 4, "int")            \
    X('J', "q", 8, "long")           \
    X('F', "f", 4, "float")          \
    X('D', "d", 8, "double")

static const p4j_elem_row elem_rows[] = {
#define P4J_ELEM_ROW(letter, format, size, name) {letter, format, size, name},
    P4J_ELEM_TABLE(P4J_ELEM_ROW)
#undef P4J_ELEM_ROW
};

const p4j_elem_row *p4j_elem_row_of(char letter)
{
    for (size_t i = 0; i < sizeof elem_rows / sizeof elem_rows[0]; i++)
        if (elem_rows[i].letter == letter)
            return &elem_rows[i];
    return NULL;
}

/* Copies above this size run without the GIL. */
#define GIL_FREE_BYTES 65536

/* ------------------------------------------------------------ packing elements */

/* What a value that cannot be an element raises: Py4JError, as py4j ("Cannot convert
 * ... to int"), with py4jni's own message. */
static PyObject *elem_error(void)
{
    return p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_TypeError;
}

static int elem_type_error(const p4j_elem_row *row, PyObject *v, const char *wants)
{
    if (v == Py_None)
        PyErr_Format(elem_error(),
                     "py4jni: None cannot be stored in a Java %s[] (primitive elements)",
                     row->name);
    else
        PyErr_Format(elem_error(), "py4jni: a Java %s[] element takes %s, not %.100s",
                     row->name, wants, Py_TYPE(v)->tp_name);
    return -1;
}

/* Reads an integral Python value (int or __index__, not bool) into *out. */
static int integral(const p4j_elem_row *row, PyObject *v, long long lo, long long hi,
                    long long *out)
{
    if (PyBool_Check(v) || PyFloat_Check(v) || !(PyLong_Check(v) || PyIndex_Check(v)))
        return elem_type_error(row, v, "int");
    int overflow = 0;
    PyObject *idx = PyNumber_Index(v);
    if (!idx)
        return -1;
    long long x = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (overflow || x < lo || x > hi) {
        PyErr_Format(elem_error(), "py4jni: %R is out of range for a Java %s", v, row->name);
        return -1;
    }
    *out = x;
    return 0;
}

int p4j_elem_pack(const p4j_elem_row *row, PyObject *v, void *dst)
{
    long long x;
    switch (row->letter) {
    case 'Z':
        if (!PyBool_Check(v))
            return elem_type_error(row, v, "bool");
        *(uint8_t *)dst = v == Py_True;
        return 0;
    case 'B':
        if (integral(row, v, INT8_MIN, INT8_MAX, &x) < 0) return -1;
        *(int8_t *)dst = (int8_t)x;
        return 0;
    case 'S':
        if (integral(row, v, INT16_MIN, INT16_MAX, &x) < 0) return -1;
        *(int16_t *)dst = (int16_t)x;
        return 0;
    case 'I':
        if (integral(row, v, INT32_MIN, INT32_MAX, &x) < 0) return -1;
        *(int32_t *)dst = (int32_t)x;
        return 0;
    case 'J':
        if (integral(row, v, INT64_MIN, INT64_MAX, &x) < 0) return -1;
        *(int64_t *)dst = (int64_t)x;
        return 0;
    case 'C':
        if (!PyUnicode_Check(v) || PyUnicode_GET_LENGTH(v) != 1)
            return elem_type_error(row, v, "a 1-character str");
        if (PyUnicode_READ_CHAR(v, 0) > 0xFFFF) {
            PyErr_SetString(elem_error(),
                            "py4jni: a character outside the BMP cannot be a Java char");
            return -1;
        }
        *(uint16_t *)dst = (uint16_t)PyUnicode_READ_CHAR(v, 0);
        return 0;
    case 'F':
    case 'D': {
        double d;
        if (PyFloat_CheckExact(v)) {
            d = PyFloat_AS_DOUBLE(v);
        } else {
            PyNumberMethods *nb = Py_TYPE(v)->tp_as_number;
            if (PyBool_Check(v) || !nb || !(nb->nb_float || nb->nb_index))
                return elem_type_error(row, v, "float or int");
            d = PyFloat_AsDouble(v);
            if (d == -1.0 && PyErr_Occurred())
                return -1;
        }
        if (row->letter == 'F')
            *(float *)dst = (float)d;
        else
            *(double *)dst = d;
        return 0;
    }
    }
    PyErr_Format(PyExc_SystemError, "py4jni: bad element letter %c", row->letter);
    return -1;
}

/* Is buffer format `fmt` (native order) the layout of `row`'s elements? */
static int format_matches(const p4j_elem_row *row, const char *fmt, Py_ssize_t itemsize)
{
    if (!fmt)
        fmt = "B";
    if (fmt[0] == '@' || fmt[0] == '=')
        fmt++;
#if PY_LITTLE_ENDIAN
    else if (fmt[0] == '<')
        fmt++;
#else
    else if (fmt[0] == '>' || fmt[0] == '!')
        fmt++;
#endif
    if (!fmt[0] || fmt[1] || itemsize != row->size)
        return 0;
    char f = fmt[0];
    switch (row->letter) {
    case 'Z': return f == '?';
    case 'B': return f == 'b' || f == 'B' || f == 'c';
    case 'C': return f == 'H';
    case 'S': return f == 'h';
    case 'I': return f == 'i' || (f == 'l' && sizeof(long) == 4);
    case 'J': return f == 'q' || (f == 'l' && sizeof(long) == 8);
    case 'F': return f == 'f';
    case 'D': return f == 'd';
    }
    return 0;
}

void p4j_packed_release(p4j_packed *p)
{
    if (p->has_view)
        PyBuffer_Release(&p->view);
    p->has_view = 0;
    PyMem_Free(p->owned);
    p->owned = NULL;
    p->data = NULL;
}

int p4j_pack_data(const p4j_elem_row *row, PyObject *data, p4j_packed *out)
{
    memset(out, 0, sizeof *out);
    if (PyObject_CheckBuffer(data) && !PyUnicode_Check(data)) {
        if (PyObject_GetBuffer(data, &out->view, PyBUF_RECORDS_RO) < 0)
            return -1;
        out->has_view = 1;
        Py_buffer *b = &out->view;
        if (b->ndim > 1) {
            PyErr_Format(PyExc_ValueError,
                         "py4jni: a %d-dimensional buffer cannot fill a Java %s[]; flatten "
                         "it first", b->ndim, row->name);
            goto fail;
        }
        if (!format_matches(row, b->format, b->itemsize)) {
            PyErr_Format(PyExc_TypeError,
                         "py4jni: a buffer of format '%s' (item size %zd) cannot fill a Java "
                         "%s[] (format '%s', item size %zd)",
                         b->format ? b->format : "B", b->itemsize, row->name, row->format,
                         row->size);
            goto fail;
        }
        out->count = b->itemsize ? b->len / b->itemsize : 0;
        if (p4j_check_java_length(out->count, "buffer", "elements") < 0)
            goto fail;
        if (PyBuffer_IsContiguous(b, 'A')) {
            out->data = b->buf;
            return 0;
        }
        if (!(out->owned = PyMem_Malloc((size_t)b->len + 1))) {
            PyErr_NoMemory();
            goto fail;
        }
        if (PyBuffer_ToContiguous(out->owned, b, b->len, 'C') < 0)
            goto fail;
        out->data = out->owned;
        PyBuffer_Release(&out->view);
        out->has_view = 0;
        return 0;
    }
    if (PyUnicode_Check(data) && row->letter == 'C') { /* "abc" -> char[] */
        Py_ssize_t n = PyUnicode_GET_LENGTH(data);
        if (p4j_check_java_length(n, "str", "characters") < 0)
            return -1;
        uint16_t *dst = PyMem_Malloc((size_t)n * 2 + 1);
        if (!dst)
            return PyErr_NoMemory(), -1;
        out->owned = dst;
        out->data = dst;
        out->count = n;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 ch = PyUnicode_READ_CHAR(data, i);
            if (ch > 0xFFFF) {
                PyErr_SetString(PyExc_ValueError,
                                "py4jni: a character outside the BMP cannot be a Java char");
                goto fail;
            }
            dst[i] = (uint16_t)ch;
        }
        return 0;
    }
    /* the items as they are now: an item's __index__ or __float__ may change a list */
    PyObject *seq = p4j_stable_sequence(data, "");
    if (!seq) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return -1; /* e.g. an __iter__'s own ValueError, or MemoryError: kept */
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "py4jni: a Java %s[] is filled from a buffer or an iterable of values, "
                     "not %.100s", row->name, Py_TYPE(data)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (p4j_check_java_length(n, "sequence", "items") < 0) {
        Py_DECREF(seq);
        return -1;
    }
    char *dst = PyMem_Malloc((size_t)n * (size_t)row->size + 1);
    if (!dst) {
        Py_DECREF(seq);
        return PyErr_NoMemory(), -1;
    }
    out->owned = dst;
    out->data = dst;
    out->count = n;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (p4j_elem_pack(row, items[i], dst + i * row->size) < 0) {
            Py_DECREF(seq);
            goto fail;
        }
    }
    Py_DECREF(seq);
    return 0;
fail:
    p4j_packed_release(out);
    return -1;
}

/* Converts element i of a region read from a `row` array into a Python value. */
static PyObject *elem_to_py(const p4j_elem_row *row, const char *base, Py_ssize_t i)
{
    const char *p = base + i * row->size;
    switch (row->letter) {
    case 'Z': return PyBool_FromLong(*(const uint8_t *)p != 0);
    case 'B': return PyLong_FromLong(*(const int8_t *)p);
    case 'S': return PyLong_FromLong(*(const int16_t *)p);
    case 'I': return PyLong_FromLong(*(const int32_t *)p);
    case 'J': return PyLong_FromLongLong(*(const int64_t *)p);
    case 'C': {
        Py_UCS4 ch = *(const uint16_t *)p;
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, &ch, 1);
    }
    case 'F': return PyFloat_FromDouble(p4j_float_as_printed(*(const float *)p));
    case 'D': return PyFloat_FromDouble(*(const double *)p);
    }
    PyErr_SetString(PyExc_SystemError, "py4jni: bad element letter");
    return NULL;
}

/* ------------------------------------------------------------ JavaArrayBase */

typedef struct JavaArrayObject {
    JavaObject base;
    Py_ssize_t length; /* valid once elem is set */
    char elem;         /* component letter ('L' references), 0 until known */
} JavaArrayObject;

#define ARR(o) ((JavaArrayObject *)(o))

static int use_op(ClientObject *cl, const void *op) { return p4j_bulk_enabled && op && cl; }

/* Fills a->elem and a->length (once: a Java array's type and length never change). */
static int ensure_info(PyObject *self)
{
    JavaArrayObject *a = ARR(self);
    if (a->elem)
        return 0;
    ClientObject *cl = a->base.client;
    if (!P4JPY_LOAD(a->base.ref.handle))
        return p4jpy_raise_detached();
    if (p4j_check_open(cl) < 0)
        return -1;
    if (use_op(cl, cl->c->ops->array_info)) {
        char elem;
        size_t len;
        p4j_error err = {0};
        p4j_status st;
        p4j_ref target;
        if (p4jpy_pin_or_raise(&a->base, &target) < 0) /* a detach meanwhile waits */
            return -1;
        Py_BEGIN_ALLOW_THREADS
        st = cl->c->ops->array_info(cl->c, &target, &elem, &len, &err);
        Py_END_ALLOW_THREADS
        p4j_unpin(&a->base);
        if (st != P4J_OK) {
            p4j_raise(cl, &err, NULL);
            return -1;
        }
        a->length = (Py_ssize_t)len;
        a->elem = elem;
        return 0;
    }
    PyObject *info = PyObject_CallMethod(self, "_fallback_info", NULL);
    if (!info)
        return -1;
    const char *elem;
    Py_ssize_t len;
    int ok = PyArg_ParseTuple(info, "sn", &elem, &len);
    Py_DECREF(info);
    if (!ok)
        return -1;
    a->length = len;
    a->elem = elem[0] ? elem[0] : 'L';
    return 0;
}

/* The element row of a primitive array, or NULL with BufferError/TypeError set. */
static const p4j_elem_row *prim_row(PyObject *self, PyObject *exc)
{
    if (ensure_info(self) < 0)
        return NULL;
    const p4j_elem_row *row = p4j_elem_row_of(ARR(self)->elem);
    if (!row)
        PyErr_SetString(exc, "py4jni: this Java array has reference elements (only "
                             "primitive arrays have a buffer)");
    return row;
}

/* Runs the transport's array_read (write=false) or array_write over [start, start +
 * count), without the GIL for large regions. 0, or -1 with the exception set. */
static int region_op(JavaArrayObject *a, const p4j_elem_row *row, Py_ssize_t start,
                     Py_ssize_t count, void *buf, bool write)
{
    ClientObject *cl = a->base.client;
    p4j_client *c = cl->c;
    p4j_error err = {0};
    p4j_status st;
    p4j_ref target; /* pinned: a detach on another thread meanwhile waits for the op */
    if (p4jpy_pin_or_raise(&a->base, &target) < 0)
        return -1;
    bool free_gil = count * row->size >= GIL_FREE_BYTES;
    PyThreadState *ts = free_gil ? PyEval_SaveThread() : NULL;
    st = write ? c->ops->array_write(c, &target, row->letter, (size_t)start, (size_t)count, buf,
                                     &err)
               : c->ops->array_read(c, &target, row->letter, (size_t)start, (size_t)count, buf,
                                    &err);
    if (ts)
        PyEval_RestoreThread(ts);
    p4j_unpin(&a->base);
    if (st != P4J_OK) {
        p4j_raise(cl, &err, NULL);
        return -1;
    }
    return 0;
}

/* Copies elements [start, start + count) into dst (op, else _fallback_read). */
static int region_read(PyObject *self, const p4j_elem_row *row, Py_ssize_t start,
                       Py_ssize_t count, void *dst)
{
    JavaArrayObject *a = ARR(self);
    ClientObject *cl = a->base.client;
    if (p4j_check_open(cl) < 0)
        return -1;
    if (count == 0)
        return 0;
    if (use_op(cl, cl->c->ops->array_read))
        return region_op(a, row, start, count, dst, false);
    PyObject *b = PyObject_CallMethod(self, "_fallback_read", "nn", start, start + count);
    if (!b)
        return -1;
    Py_buffer view;
    int rc = PyObject_GetBuffer(b, &view, PyBUF_SIMPLE);
    Py_DECREF(b);
    if (rc < 0)
        return -1;
    if (view.len != count * row->size) {
        PyErr_SetString(PyExc_SystemError, "py4jni: _fallback_read returned the wrong size");
        PyBuffer_Release(&view);
        return -1;
    }
    memcpy(dst, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return 0;
}

/* Copies count elements from src into [start, start + count) (op, else _fallback_write). */
static int region_write(PyObject *self, const p4j_elem_row *row, Py_ssize_t start,
                        Py_ssize_t count, const void *src)
{
    JavaArrayObject *a = ARR(self);
    ClientObject *cl = a->base.client;
    if (p4j_check_open(cl) < 0)
        return -1;
    if (count == 0)
        return 0;
    if (use_op(cl, cl->c->ops->array_write))
        return region_op(a, row, start, count, (void *)src, true);
    PyObject *b = PyBytes_FromStringAndSize(src, count * row->size);
    if (!b)
        return -1;
    PyObject *r = PyObject_CallMethod(self, "_fallback_write", "nO", start, b);
    Py_DECREF(b);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* Checks 0 <= start <= stop <= length. */
static int check_range(PyObject *self, Py_ssize_t start, Py_ssize_t stop)
{
    if (start < 0 || stop < start || stop > ARR(self)->length) {
        PyErr_Format(PyExc_IndexError, "py4jni: range [%zd, %zd) outside an array of length %zd",
                     start, stop, ARR(self)->length);
        return -1;
    }
    return 0;
}

static Py_ssize_t jarray_length(PyObject *self)
{
    return ensure_info(self) < 0 ? -1 : ARR(self)->length;
}

static PyObject *jarray_info(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (ensure_info(self) < 0)
        return NULL;
    return Py_BuildValue("(C n)", ARR(self)->elem, ARR(self)->length);
}

/* Whether float elements [start, stop) come as the py4j server reads them out, one by
 * one (socket mode: Float.toString's text, which packing into float bits would lose). */
static bool floats_from_server(PyObject *self, const p4j_elem_row *row)
{
    return row->letter == 'F' && !use_op(ARR(self)->base.client,
                                         ARR(self)->base.client->c->ops->array_read);
}

/* The Python floats of float elements [start, start + n) read into `buf`: py4j's
 * (p4j_floats_as_printed, one conversion for the region). */
static PyObject *float_list(const float *buf, Py_ssize_t n)
{
    double *d = PyMem_Malloc((size_t)n * sizeof *d + 1);
    if (!d)
        return PyErr_NoMemory();
    p4j_floats_as_printed(buf, d, (size_t)n);
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        PyObject *v = PyFloat_FromDouble(d[i]);
        if (!v) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, v);
    }
    PyMem_Free(d);
    return list;
}

static PyObject *jarray_read(PyObject *self, PyObject *args)
{
    Py_ssize_t start, stop;
    if (!PyArg_ParseTuple(args, "nn:_read", &start, &stop))
        return NULL;
    const p4j_elem_row *row = prim_row(self, PyExc_TypeError);
    if (!row || check_range(self, start, stop) < 0)
        return NULL;
    if (floats_from_server(self, row))
        return start == stop ? PyList_New(0)
                             : PyObject_CallMethod(self, "_fallback_values", "nn", start, stop);
    Py_ssize_t n = stop - start;
    char *buf = PyMem_Malloc((size_t)(n * row->size) + 1);
    if (!buf)
        return PyErr_NoMemory();
    PyObject *list = NULL;
    if (row->letter == 'F') {
        if (region_read(self, row, start, n, buf) == 0)
            list = float_list((const float *)buf, n);
        PyMem_Free(buf);
        return list;
    }
    if (region_read(self, row, start, n, buf) == 0 && (list = PyList_New(n))) {
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = elem_to_py(row, buf, i);
            if (!v) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, i, v);
        }
    }
    PyMem_Free(buf);
    return list;
}

static PyObject *jarray_read_bytes(PyObject *self, PyObject *args)
{
    Py_ssize_t start, stop;
    if (!PyArg_ParseTuple(args, "nn:_read_bytes", &start, &stop))
        return NULL;
    const p4j_elem_row *row = prim_row(self, PyExc_TypeError);
    if (!row || check_range(self, start, stop) < 0)
        return NULL;
    PyObject *b = PyBytes_FromStringAndSize(NULL, (stop - start) * row->size);
    if (b && region_read(self, row, start, stop - start, PyBytes_AS_STRING(b)) < 0)
        Py_CLEAR(b);
    return b;
}

static PyObject *jarray_write(PyObject *self, PyObject *args)
{
    Py_ssize_t start;
    PyObject *data;
    if (!PyArg_ParseTuple(args, "nO:_write", &start, &data))
        return NULL;
    const p4j_elem_row *row = prim_row(self, PyExc_TypeError);
    if (!row)
        return NULL;
    p4j_packed p;
    if (p4j_pack_data(row, data, &p) < 0)
        return NULL;
    PyObject *r = NULL;
    if (check_range(self, start, start + p.count) == 0 &&
        region_write(self, row, start, p.count, p.data) == 0)
        r = PyLong_FromSsize_t(p.count);
    p4j_packed_release(&p);
    return r;
}

/* Memory behind one buffer export: the copy and, for writable exports, the pristine
 * copy release compares against. */
typedef struct export_block {
    Py_ssize_t shape, stride;
    char *data, *pristine;
} export_block;

static int jarray_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    view->obj = NULL;
    const p4j_elem_row *row = prim_row(self, PyExc_BufferError);
    if (!row)
        return -1;
    int writable = (flags & PyBUF_WRITABLE) != 0;
    Py_ssize_t n = ARR(self)->length;
    size_t size = (size_t)(n * row->size);
    export_block *blk = PyMem_Malloc(sizeof *blk);
    char *data = blk ? PyMem_Malloc(size * (writable ? 2 : 1) + 1) : NULL;
    if (!data) {
        PyMem_Free(blk);
        PyErr_NoMemory();
        return -1;
    }
    blk->shape = n;
    blk->stride = row->size;
    blk->data = data;
    blk->pristine = writable ? data + size : NULL;
    if (region_read(self, row, 0, n, data) < 0) {
        PyMem_Free(data);
        PyMem_Free(blk);
        return -1;
    }
    if (writable)
        memcpy(blk->pristine, data, size);
    view->obj = Py_NewRef(self);
    view->buf = data;
    view->len = (Py_ssize_t)size;
    view->readonly = !writable;
    view->itemsize = row->size;
    view->format = (flags & PyBUF_FORMAT) ? (char *)row->format : NULL;
    view->ndim = 1;
    view->shape = (flags & PyBUF_ND) ? &blk->shape : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? &blk->stride : NULL;
    view->suboffsets = NULL;
    view->internal = blk;
    return 0;
}

/* Writes back the span from the first to the last changed element of a writable
 * export; errors are reported as unraisable (release cannot fail). */
static void jarray_releasebuffer(PyObject *self, Py_buffer *view)
{
    export_block *blk = view->internal;
    if (!blk)
        return;
    if (blk->pristine) {
        size_t size = (size_t)view->len, lo = 0, hi = size;
        while (lo < size && blk->data[lo] == blk->pristine[lo])
            lo++;
        if (lo < size) {
            while (hi > lo && blk->data[hi - 1] == blk->pristine[hi - 1])
                hi--;
            Py_ssize_t item = blk->stride;
            Py_ssize_t first = (Py_ssize_t)lo / item, last = ((Py_ssize_t)hi + item - 1) / item;
            const p4j_elem_row *row = p4j_elem_row_of(ARR(self)->elem);
            PyObject *et, *ev, *tb;
            PyErr_Fetch(&et, &ev, &tb);
            if (row && region_write(self, row, first, last - first,
                                    blk->data + first * item) < 0)
                PyErr_WriteUnraisable(self);
            PyErr_Restore(et, ev, tb);
        }
    }
    PyMem_Free(blk->data);
    PyMem_Free(blk);
    view->internal = NULL;
}

/* Index `key` of a primitive array as a checked position, -1 with IndexError. */
static Py_ssize_t prim_index(PyObject *self, PyObject *key, const char *what)
{
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred())
        return -1;
    Py_ssize_t n = ARR(self)->length;
    if (i < 0)
        i += n;
    if (i < 0 || i >= n) {
        PyErr_Format(PyExc_IndexError, "%s index out of range", what);
        return -1;
    }
    return i;
}

/* a[i] of a primitive array in C (one region copy); slices and reference arrays go to
 * the Python class's _getitem. */
static PyObject *jarray_subscript(PyObject *self, PyObject *key)
{
    if (PyIndex_Check(key)) {
        if (ensure_info(self) < 0)
            return NULL;
        const p4j_elem_row *row = p4j_elem_row_of(ARR(self)->elem);
        if (row) {
            Py_ssize_t i = prim_index(self, key, "array");
            if (i < 0)
                return NULL;
            if (floats_from_server(self, row)) {
                PyObject *one = PyObject_CallMethod(self, "_fallback_values", "nn", i, i + 1);
                PyObject *v = one && PyList_Check(one) && PyList_GET_SIZE(one) == 1
                                  ? Py_NewRef(PyList_GET_ITEM(one, 0)) : NULL;
                if (one && !v)
                    PyErr_SetString(PyExc_SystemError, "py4jni: _fallback_values: not one value");
                Py_XDECREF(one);
                return v;
            }
            uint64_t buf;
            if (region_read(self, row, i, 1, &buf) < 0)
                return NULL;
            return elem_to_py(row, (const char *)&buf, 0);
        }
    }
    return PyObject_CallMethod(self, "_getitem", "O", key);
}

/* a[i] = v of a primitive array in C (checked, one region copy); the rest goes to the
 * Python class's _setitem. */
static int jarray_ass_subscript(PyObject *self, PyObject *key, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_TypeError,
                        "py4jni: a Java array has a fixed length: items cannot be deleted");
        return -1;
    }
    if (PyIndex_Check(key)) {
        if (ensure_info(self) < 0)
            return -1;
        const p4j_elem_row *row = p4j_elem_row_of(ARR(self)->elem);
        if (row) {
            Py_ssize_t i = prim_index(self, key, "array assignment");
            uint64_t buf;
            if (i < 0 || p4j_elem_pack(row, value, &buf) < 0)
                return -1;
            return region_write(self, row, i, 1, &buf);
        }
    }
    PyObject *r = PyObject_CallMethod(self, "_setitem", "OO", key, value);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyMappingMethods jarray_as_mapping = {
    .mp_length = jarray_length,
    .mp_subscript = jarray_subscript,
    .mp_ass_subscript = jarray_ass_subscript,
};

static PyBufferProcs jarray_as_buffer = {
    .bf_getbuffer = jarray_getbuffer,
    .bf_releasebuffer = jarray_releasebuffer,
};

static PySequenceMethods jarray_as_sequence = {
    .sq_length = jarray_length,
};

static PyMethodDef jarray_methods[] = {
    {"_info", jarray_info, METH_NOARGS,
     "(component letter, length): 'I' for int[], 'L' for reference arrays (cached)."},
    {"_read", jarray_read, METH_VARARGS,
     "_read(start, stop): elements [start, stop) of a primitive array as a list (one "
     "region copy)."},
    {"_read_bytes", jarray_read_bytes, METH_VARARGS,
     "_read_bytes(start, stop): elements [start, stop) in native layout (one region copy)."},
    {"_write", jarray_write, METH_VARARGS,
     "_write(start, data): stores a buffer or iterable of values at start (one region "
     "copy); returns the element count."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject JavaArrayBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "py4jni._py4jni.JavaArrayBase",
    .tp_doc = "Base of JavaArray: the length, region copies, and for primitive arrays the "
              "buffer protocol (an export is a copy; a writable export writes changed "
              "elements back when released).",
    .tp_basicsize = sizeof(JavaArrayObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_as_buffer = &jarray_as_buffer,
    .tp_as_sequence = &jarray_as_sequence,
    .tp_as_mapping = &jarray_as_mapping,
    .tp_methods = jarray_methods,
};

/* ------------------------------------------------------------ module functions */

static ClientObject *client_arg(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &ClientType)) {
        PyErr_Format(PyExc_TypeError, "expected a py4jni Client, not %.100s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    return (ClientObject *)o;
}

static const p4j_elem_row *row_arg(const char *elem)
{
    const p4j_elem_row *row = elem[0] && !elem[1] ? p4j_elem_row_of(elem[0]) : NULL;
    if (!row)
        PyErr_Format(PyExc_ValueError, "py4jni: '%s' is not a primitive type letter "
                                       "(Z B C S I J F D)", elem);
    return row;
}

static PyObject *mod_array_new(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *client, *data;
    const char *elem;
    if (!PyArg_ParseTuple(args, "OsO:array_new", &client, &elem, &data))
        return NULL;
    ClientObject *cl = client_arg(client);
    const p4j_elem_row *row = cl ? row_arg(elem) : NULL;
    if (!row)
        return NULL;
    if (!use_op(cl, cl->c->ops->array_new))
        Py_RETURN_NOTIMPLEMENTED;
    if (p4j_check_open(cl) < 0)
        return NULL;
    p4j_packed p = {0};
    Py_ssize_t count;
    if (PyLong_Check(data)) {
        count = PyLong_AsSsize_t(data);
        if (count == -1 && PyErr_Occurred())
            return NULL;
        if (count < 0) {
            PyErr_SetString(PyExc_ValueError, "py4jni: a negative array length");
            return NULL;
        }
        if (p4j_check_java_length(count, "Java array", "elements") < 0)
            return NULL;
    } else {
        if (p4j_pack_data(row, data, &p) < 0)
            return NULL;
        count = p.count;
    }
    p4j_value out;
    p4j_error err = {0};
    p4j_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cl->c->ops->array_new(cl->c, row->letter, (size_t)count, p.data, &out, &err);
    Py_END_ALLOW_THREADS
    p4j_packed_release(&p);
    if (st != P4J_OK)
        return p4j_raise(cl, &err, NULL);
    return p4j_value_to_py(cl, &out);
}

static PyObject *mod_pack(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *elem;
    PyObject *data;
    if (!PyArg_ParseTuple(args, "sO:pack", &elem, &data))
        return NULL;
    const p4j_elem_row *row = row_arg(elem);
    if (!row)
        return NULL;
    p4j_packed p;
    if (p4j_pack_data(row, data, &p) < 0)
        return NULL;
    PyObject *b = PyBytes_FromStringAndSize(p.data, p.count * row->size);
    p4j_packed_release(&p);
    return b;
}

static PyObject *mod_elem_info(PyObject *mod, PyObject *arg)
{
    (void)mod;
    const char *elem = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!elem)
        return PyErr_Format(PyExc_TypeError, "expected a type letter");
    const p4j_elem_row *row = row_arg(elem);
    return row ? Py_BuildValue("(s n s)", row->format, row->size, row->name) : NULL;
}

static PyObject *mod_set_bulk(PyObject *mod, PyObject *arg)
{
    (void)mod;
    int old = p4j_bulk_enabled;
    int v = PyObject_IsTrue(arg);
    if (v < 0)
        return NULL;
    p4j_bulk_enabled = v;
    return PyBool_FromLong(old);
}

static PyObject *mod_bulk_enabled(PyObject *mod, PyObject *unused)
{
    (void)mod; (void)unused;
    return PyBool_FromLong(p4j_bulk_enabled);
}

static PyMethodDef array_functions[] = {
    {"array_new", mod_array_new, METH_VARARGS,
     "array_new(client, letter, length_or_data): a new primitive Java array (JavaArray, "
     "byte[] included) of a length, or filled from a buffer or iterable of values in "
     "one transport call; NotImplemented when the transport lacks the operation."},
    {"pack", mod_pack, METH_VARARGS,
     "pack(letter, data): the values of a buffer or iterable checked and packed as the "
     "native layout of a Java array of that component (bytes)."},
    {"elem_info", mod_elem_info, METH_O,
     "elem_info(letter): (buffer format, item size, Java name) of a primitive type."},
    {"bulk_enabled", mod_bulk_enabled, METH_NOARGS,
     "True unless _set_bulk(False) turned the transports' bulk operations off."},
    {"_set_bulk", mod_set_bulk, METH_O,
     "_set_bulk(enabled): turns the transports' bulk operations on or off (tests of the "
     "fallback paths); returns the previous setting."},
    {NULL, NULL, 0, NULL},
};

int p4j_arrays_init(PyObject *module)
{
    JavaArrayBaseType.tp_base = &JavaObjectType;
    if (PyType_Ready(&JavaArrayBaseType) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "JavaArrayBase", (PyObject *)&JavaArrayBaseType) < 0)
        return -1;
    return PyModule_AddFunctions(module, array_functions);
}
