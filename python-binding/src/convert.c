/* python-binding/src/convert.c - Python objects <-> p4j_value (py4j's conversion
 * rules). Strings pass in the form CPython holds them; bytes by pointer. */
#include <string.h>

#include "binding.h"

#include <pthread.h> /* after Python.h (binding.h): _GNU_SOURCE for pthread_getattr_np */

p4j_registry p4j_reg;
p4j_int_slot p4j_int_cache[P4J_INT_CACHE];

PyObject *p4j_long_new_slow(long long v, p4j_int_slot *slot)
{
    PyObject *o = PyLong_FromLongLong(v);
    if (o) {
        Py_XSETREF(slot->o, Py_NewRef(o));
        slot->v = v;
    }
    return o;
}

static PyObject *decimal_type(void)
{
    PyObject *dec = P4JPY_LOAD(p4j_reg.Decimal);
    if (dec)
        return dec;
    PyObject *mod = PyImport_ImportModule("decimal");
    if (!mod)
        return NULL;
    dec = PyObject_GetAttrString(mod, "Decimal");
    Py_DECREF(mod);
    if (!dec)
        return NULL;
    PyObject *none = NULL; /* threads may race to here: the first one's is kept */
    if (!__atomic_compare_exchange_n(&p4j_reg.Decimal, &none, dec, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        Py_DECREF(dec);
        dec = none;
    }
    return dec;
}

/* Raises UnicodeEncodeError at the first lone surrogate of `o`, returns -1; else 0. */
static int check_surrogates(PyObject *o)
{
    int kind = PyUnicode_KIND(o);
    const void *data = PyUnicode_DATA(o);
    Py_ssize_t len = PyUnicode_GET_LENGTH(o);
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 ch = kind == PyUnicode_2BYTE_KIND ? ((const Py_UCS2 *)data)[i]
                                                  : ((const Py_UCS4 *)data)[i];
        if (ch >= 0xD800 && ch <= 0xDFFF) {
            PyObject *exc = PyObject_CallFunction(
                PyExc_UnicodeEncodeError, "sOnns", "utf-16", o, i, i + 1,
                "lone surrogate: a Java String cannot carry it faithfully");
            if (exc) {
                PyErr_SetObject(PyExc_UnicodeEncodeError, exc);
                Py_DECREF(exc);
            }
            return -1;
        }
    }
    return 0;
}

int p4j_check_java_length(Py_ssize_t n, const char *what, const char *unit)
{
    if (__builtin_expect(n <= INT32_MAX, 1))
        return 0;
    PyErr_Format(p4j_reg.Py4JError,
                 "py4jni: a %s of %zd %s is too long for Java: a Java array or String holds "
                 "at most 2^31 - 1 (%ld) elements", what, n, unit, (long)INT32_MAX);
    return -1;
}

/* The length of str `o` in UTF-16 units (a character outside the BMP takes two). */
static Py_ssize_t utf16_length(PyObject *o)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(o);
    if (PyUnicode_KIND(o) != PyUnicode_4BYTE_KIND || len > INT32_MAX || len <= INT32_MAX / 2)
        return len; /* at most len units, or too long anyway, or surely short enough */
    const Py_UCS4 *data = PyUnicode_DATA(o);
    Py_ssize_t units = len;
    for (Py_ssize_t i = 0; i < len; i++)
        units += data[i] >= 0x10000;
    return units;
}

/* str_value for any str but a compact Latin-1 one. */
static __attribute__((noinline)) int str_value_general(PyObject *o, p4j_value *v)
{
    int kind = PyUnicode_KIND(o);
    if (p4j_check_java_length(utf16_length(o), "str", "UTF-16 units") < 0)
        return -1;
    if (kind != PyUnicode_1BYTE_KIND && check_surrogates(o) < 0)
        return -1;
    v->kind = P4J_STRING;
    v->u.s.data = PyUnicode_DATA(o);
    v->u.s.len = (size_t)PyUnicode_GET_LENGTH(o);
    v->u.s.enc = kind == PyUnicode_1BYTE_KIND ? P4J_ENC_LATIN1
                 : kind == PyUnicode_2BYTE_KIND ? P4J_ENC_UTF16 : P4J_ENC_UCS4;
    return 0;
}

/* Converts a Python str (its characters, borrowed): 0, or -1 with an exception. */
static inline __attribute__((always_inline)) int str_value(PyObject *o, p4j_value *v)
{
    /* the common case first: a compact one-byte str (its data follows the header) */
    if (PyUnicode_IS_COMPACT(o) && PyUnicode_KIND(o) == PyUnicode_1BYTE_KIND &&
        PyUnicode_GET_LENGTH(o) <= INT32_MAX) {
        v->kind = P4J_STRING;
        v->u.s.data = PyUnicode_DATA(o);
        v->u.s.len = (size_t)PyUnicode_GET_LENGTH(o);
        v->u.s.enc = P4J_ENC_LATIN1;
        return 0;
    }
    return str_value_general(o, v);
}

static int keep_temp(p4j_argpack *pack, PyObject *o)
{
    pack->taken = 1;
    if (!pack->temps && !(pack->temps = PyList_New(0)))
        return -1;
    return PyList_Append(pack->temps, o);
}

/* Converts a Python int. */
static int int_value(PyObject *o, p4j_value *v)
{
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) { /* no %R: the text of a huge int is itself an error (ValueError) */
        int64_t bits = (int64_t)_PyLong_NumBits(o);
        if (bits <= 256)
            PyErr_Format(p4j_reg.Py4JError, "py4jni: int %R does not fit a Java long (64 bits)",
                         o);
        else
            PyErr_Format(p4j_reg.Py4JError,
                         "py4jni: an int of %lld bits does not fit a Java long (64 bits)",
                         (long long)bits);
        return -1;
    }
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (x >= INT32_MIN && x <= INT32_MAX) {
        v->kind = P4J_INT;
        v->u.i = (int32_t)x;
    } else {
        v->kind = P4J_LONG;
        v->u.l = x;
    }
    return 0;
}

/* An argument object made by client `owner`, passed through client `cl`: refused when
 * `owner` was shut down, or when either is a socket client (its ids mean nothing to
 * another server). Two live in-process gateways share the JVM and its objects. */
static int foreign_check(ClientObject *cl, ClientObject *owner)
{
    if (owner->c->closed) {
        PyErr_SetString(p4j_reg.Py4JError,
                        "py4jni: this Java object belongs to a gateway that has been shut "
                        "down; it cannot be passed to another gateway");
        return -1;
    }
    if (cl->c->ops != owner->c->ops || !p4jpy_has_cap(cl, P4J_CAP_SHARED_REFS)) {
        PyErr_SetString(p4j_reg.Py4JError,
                        "py4jni: this Java object belongs to another gateway (socket-mode "
                        "objects live in their own server)");
        return -1;
    }
    return 0;
}

/* True when `o` is a 0-dimensional buffer or no buffer at all: a scalar (np.int64(5)),
 * not an array (np.array([5]) also has __index__ and __float__). */
static int is_scalar(PyObject *o)
{
    if (!PyObject_CheckBuffer(o))
        return 1;
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear();
        return 0;
    }
    int ndim = view.ndim;
    PyBuffer_Release(&view);
    return ndim == 0;
}

/* Converters may convert what `o` holds through this function again (a collection of
 * collections): each level takes native stack, and the Java call at the end needs some
 * too. Below CONVERT_STACK_RESERVE bytes left on the calling thread's stack the
 * conversion stops with Py4JError instead of running into the stack's guard page. */
#define CONVERT_STACK_RESERVE (256 * 1024)

static bool stack_left_for(PyObject *o)
{
    static __thread uintptr_t stack_lo;
    char here;
    if (__builtin_expect(stack_lo == 0, 0)) {
        pthread_attr_t a;
        void *addr = NULL;
        size_t size = 0;
        stack_lo = 1; /* unknown: never refuse */
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr)
                stack_lo = (uintptr_t)addr;
            pthread_attr_destroy(&a);
        }
    }
    if ((uintptr_t)&here - stack_lo > CONVERT_STACK_RESERVE)
        return true;
    PyErr_Format(p4j_reg.Py4JError, "py4jni: a Python %.100s nests too deeply to become a "
                 "Java value on this thread's stack (under %d KiB left)",
                 Py_TYPE(o)->tp_name, CONVERT_STACK_RESERVE / 1024);
    return false;
}

/* CPython 3.12+ guards its own C recursion (a limit sys.setrecursionlimit does not
 * raise), which a converter recursing through this file may reach before
 * stack_left_for does: its RecursionError, raised somewhere inside the converter's
 * Python code, becomes the same short Py4JError at the innermost conversion, so the
 * levels above pass it on unchanged. */
static void recursion_to_py4jerror(PyObject *o)
{
    if (!PyErr_ExceptionMatches(PyExc_RecursionError))
        return;
    PyErr_Clear();
    PyErr_Format(p4j_reg.Py4JError, "py4jni: a Python %.100s nests too deeply to become a "
                 "Java value (Python's recursion limit was reached while converting it)",
                 Py_TYPE(o)->tp_name);
}

/* A number of another type (numpy's np.int64, np.float32, np.bool_ ...) as the Python
 * number it is: __index__ makes an int, __float__ a float, numpy's bool a bool.
 * Returns 1 with `v` set, 0 when `o` is no such scalar, -1 with an exception. */
static int number_value(PyObject *o, p4j_value *v)
{
    PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
    const char *name = Py_TYPE(o)->tp_name;
    if (!nb || (!nb->nb_index && !nb->nb_float) || strncmp(name, "numpy.complex", 13) == 0 ||
        PyComplex_Check(o) || !is_scalar(o))
        return 0;
    if (strcmp(name, "numpy.bool") == 0 || strcmp(name, "numpy.bool_") == 0) {
        int truth = PyObject_IsTrue(o);
        if (truth < 0)
            return -1;
        v->kind = P4J_BOOL;
        v->u.b = truth;
        return 1;
    }
    if (nb->nb_index) {
        PyObject *i = PyNumber_Index(o);
        if (!i)
            return -1;
        int st = int_value(i, v);
        Py_DECREF(i);
        return st < 0 ? -1 : 1;
    }
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred())
        return -1;
    v->kind = P4J_DOUBLE;
    v->u.d = d;
    return 1;
}

/* p4j_value_from_py's start, in line in the argument loop: resets `v` and converts an
 * exact int or str (0, or -1 with an exception); 1 for any other object. */
static inline __attribute__((always_inline)) int value_exact(PyObject *o, p4j_value *v)
{
    v->owned = NULL;
    v->ref.handle = v->ref.cls = NULL;
    /* Exact built-in types first: the common arguments cost one pointer compare. */
    if (PyLong_CheckExact(o))
        return int_value(o, v);
    if (PyUnicode_CheckExact(o))
        return str_value(o, v);
    return 1;
}

/* p4j_value_from_py for an object value_exact did not convert. */
static int value_other(ClientObject *cl, PyObject *o, p4j_value *v, p4j_argpack *pack,
                       Py_ssize_t index)
{
    if (P4J_IS_JAVAOBJECT(o)) {
        JavaObject *jo = (JavaObject *)o;
        if (!P4JPY_LOAD(jo->ref.handle)) { /* detach() may clear it on another thread */
            return p4jpy_raise_detached();
        }
        if (__builtin_expect(jo->client != cl, 0) && foreign_check(cl, jo->client) < 0)
            return -1;
        v->kind = P4J_REF;
#ifdef Py_GIL_DISABLED /* pinned before the handle is read (see p4jpy_pin_copy) */
        if (index < P4J_ARGS_STACK) {
            if (!p4jpy_pin_copy(jo, &v->ref)) {
                v->kind = P4J_NULL;
                return p4jpy_raise_detached();
            }
            pack->taken = 1;
            pack->owners[index] = jo;
            return 0;
        }
#endif
        v->ref = jo->ref;
        if (index < P4J_ARGS_STACK) { /* borrowed: the caller's args keep it alive */
            pack->taken = 1;
            pack->owners[index] = jo;
            p4j_pin(jo); /* a detach() meanwhile waits for this call (p4j_args_release) */
        }
        return 0;
    }
    if (o == Py_None) {
        v->kind = P4J_NULL;
        return 0;
    }
    if (PyBool_Check(o)) {
        v->kind = P4J_BOOL;
        v->u.b = o == Py_True;
        return 0;
    }
    if (PyLong_Check(o))
        return int_value(o, v);
    if (PyFloat_Check(o)) {
        v->kind = P4J_DOUBLE;
        v->u.d = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    if (PyUnicode_Check(o))
        return str_value(o, v);
    if (PyBytes_Check(o)) {
        if (p4j_check_java_length(PyBytes_GET_SIZE(o), "bytes", "bytes") < 0)
            return -1;
        v->kind = P4J_BYTES;
        v->u.bytes.data = (const uint8_t *)PyBytes_AS_STRING(o);
        v->u.bytes.len = (size_t)PyBytes_GET_SIZE(o);
        return 0;
    }
    if (PyByteArray_Check(o)) { /* export: the array cannot resize while Java reads it */
        if (p4j_check_java_length(PyByteArray_GET_SIZE(o), "bytearray", "bytes") < 0)
            return -1;
        if (index >= pack->cap) { /* not an argument slot (not expected) */
            PyErr_SetString(PyExc_SystemError, "py4jni: a bytearray outside an argument slot");
            return -1;
        }
        pack->taken = 1;
        if (!pack->bufs) { /* made on the first bytearray argument */
            pack->bufs = PyMem_Calloc((size_t)pack->cap, sizeof(Py_buffer));
            pack->has_buf = PyMem_Calloc((size_t)pack->cap, 1);
            if (!pack->bufs || !pack->has_buf) {
                PyErr_NoMemory();
                return -1;
            }
        }
        if (PyObject_GetBuffer(o, &pack->bufs[index], PyBUF_SIMPLE) < 0)
            return -1;
        pack->has_buf[index] = 1;
        v->kind = P4J_BYTES;
        v->u.bytes.data = pack->bufs[index].buf;
        v->u.bytes.len = (size_t)pack->bufs[index].len;
        return 0;
    }
    if (P4J_IS_JAVACLASS(o) && p4jpy_has_cap(cl, P4J_CAP_CLASS_ARG)) { /* as its java.lang.Class */
        if (((JavaClassObject *)o)->client != cl &&
            foreign_check(cl, ((JavaClassObject *)o)->client) < 0)
            return -1;
        v->kind = P4J_REF;
        v->ref.handle = ((JavaClassObject *)o)->ref.handle;
        v->ref.cls = NULL; /* a CLASS ref's cls is the class it names, not java.lang.Class */
        return 0;
    }
    PyObject *dec = decimal_type();
    if (!dec)
        return -1;
    if (PyObject_TypeCheck(o, (PyTypeObject *)dec)) {
        PyObject *text = PyObject_Str(o);
        if (!text || keep_temp(pack, text) < 0) {
            Py_XDECREF(text);
            return -1;
        }
        Py_DECREF(text); /* the temps list keeps it */
        Py_ssize_t len;
        const char *utf8 = PyUnicode_AsUTF8AndSize(text, &len);
        if (!utf8)
            return -1;
        v->kind = P4J_DECIMAL;
        v->u.s.data = utf8;
        v->u.s.len = (size_t)len;
        v->u.s.enc = P4J_ENC_UTF8;
        return 0;
    }
    int sock_proxy = p4j_socket_proxy_value(cl, o, v, pack); /* socket mode: f<id>;... */
    if (sock_proxy != 0)
        return sock_proxy < 0 ? -1 : 0;
    PyObject *proxy; /* py4j callbacks: an object whose class has Java.implements */
    int is_proxy = p4j_proxy_for(cl, o, &proxy);
    if (is_proxy < 0)
        return -1;
    if (is_proxy) {
        if (keep_temp(pack, proxy) < 0) {
            Py_DECREF(proxy);
            return -1;
        }
        Py_DECREF(proxy); /* the temps list keeps it (and its ref) for the call */
        return p4j_value_from_py(cl, proxy, v, pack, P4J_ARGS_STACK /* no cache */);
    }
    int scalar = number_value(o, v);
    if (scalar != 0)
        return scalar < 0 ? -1 : 0;
    if (cl->converter && cl->converter != Py_None) { /* auto_convert, callbacks */
        if (!stack_left_for(o))
            return -1;
#ifdef Py_GIL_DISABLED /* held for the call: another thread may set a new one */
        PyObject *fn;
        Py_BEGIN_CRITICAL_SECTION(cl);
        fn = Py_NewRef(cl->converter);
        Py_END_CRITICAL_SECTION();
        PyObject *conv = PyObject_CallOneArg(fn, o);
        Py_DECREF(fn);
#else
        PyObject *conv = PyObject_CallOneArg(cl->converter, o);
#endif
        if (!conv) {
            recursion_to_py4jerror(o);
            return -1;
        }
        if (keep_temp(pack, conv) < 0) {
            Py_DECREF(conv);
            return -1;
        }
        Py_DECREF(conv);
        if (P4J_IS_JAVAOBJECT(conv) || P4J_IS_JAVACLASS(conv) || PyUnicode_Check(conv))
            return p4j_value_from_py(cl, conv, v, pack, P4J_ARGS_STACK /* no cache */);
        PyErr_Format(PyExc_TypeError, "py4jni: converter returned %.100s for %.100s",
                     Py_TYPE(conv)->tp_name, Py_TYPE(o)->tp_name);
        return -1;
    }
    PyErr_Format(p4j_reg.Py4JError,
                 "py4jni: cannot pass a Python %.100s to Java (use a JavaObject, None, "
                 "bool, int, float, str, bytes, bytearray or Decimal; lists need "
                 "auto_convert=True or ListConverter)", Py_TYPE(o)->tp_name);
    return -1;
}

int p4j_value_from_py(ClientObject *cl, PyObject *o, p4j_value *v, p4j_argpack *pack,
                      Py_ssize_t index)
{
    int rc = value_exact(o, v);
    return rc <= 0 ? rc : value_other(cl, o, v, pack, index);
}

#ifndef Py_GIL_DISABLED
/* True when converting `o` runs no Python code: an exact str, float or bytes, a bool,
 * None or a Java object (out of line: the caller's loop stays one compare per int). */
static __attribute__((noinline)) bool converts_without_python(PyObject *o)
{
    return PyUnicode_CheckExact(o) || PyFloat_CheckExact(o) || PyBool_Check(o) ||
           o == Py_None || PyBytes_CheckExact(o) || P4J_IS_JAVAOBJECT(o);
}
#endif

PyObject *p4j_stable_sequence(PyObject *data, const char *message)
{
    if (!PyList_Check(data))
        return PySequence_Fast(data, message);
#ifndef Py_GIL_DISABLED
    Py_ssize_t n = PyList_GET_SIZE(data), i = 0;
    for (; i < n; i++) { /* an int costs one compare */
        PyObject *o = PyList_GET_ITEM(data, i);
        if (!PyLong_CheckExact(o) && !converts_without_python(o))
            break;
    }
    if (i == n)
        return Py_NewRef(data);
#endif
    return PyList_AsTuple(data);
}

int p4j_args_from_py(ClientObject *cl, PyObject *const *args, Py_ssize_t n, p4j_argpack *pack)
{
    pack->n = 0;
    pack->cap = n;
    pack->temps = NULL;
    pack->bufs = NULL;
    pack->has_buf = NULL;
    pack->taken = n > P4J_ARGS_STACK;
    pack->vals = n <= P4J_ARGS_STACK ? pack->stack_vals : PyMem_Malloc(sizeof(p4j_value) * (size_t)n);
    /* Buffers and flags are only made when an argument is a bytearray. */
    if (!pack->vals)
        return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i < P4J_ARGS_STACK)
            pack->owners[i] = NULL;
        p4j_value *v = &pack->vals[i];
        int rc = value_exact(args[i], v);
        if (rc > 0)
            rc = value_other(cl, args[i], v, pack, i);
        if (rc < 0) {
            pack->n = i;
            p4j_args_release(pack);
            return -1;
        }
    }
    pack->n = n;
    return 0;
}

void p4j_args_release_taken(p4j_argpack *pack)
{
    for (Py_ssize_t i = 0; i < pack->n && i < P4J_ARGS_STACK; i++) {
        JavaObject *jo = pack->owners[i];
        if (!jo)
            continue;
#ifdef Py_GIL_DISABLED
        p4jpy_keep_cls(&jo->ref, pack->vals[i].ref.handle, pack->vals[i].ref.cls);
#else
        if (!jo->ref.cls && jo->ref.handle)
            jo->ref.cls = pack->vals[i].ref.cls; /* keep the class lookup */
#endif
        p4j_unpin(jo);
    }
    if (pack->has_buf) {
        for (Py_ssize_t i = 0; i < pack->n; i++)
            if (pack->has_buf[i])
                PyBuffer_Release(&pack->bufs[i]);
        PyMem_Free(pack->has_buf);
    }
    if (pack->bufs)
        PyMem_Free(pack->bufs);
    Py_CLEAR(pack->temps);
    if (pack->vals != pack->stack_vals)
        PyMem_Free(pack->vals);
    pack->vals = NULL;
}

/* Decodes a string value into a Python str. */
static PyObject *str_from_value(const p4j_value *v)
{
    const p4j_str *s = &v->u.s;
    switch (s->enc) {
    case P4J_ENC_UTF16: {
        const Py_UCS2 *u = s->data;
        for (size_t i = 0; i < s->len; i++)
            if (u[i] >= 0xD800 && u[i] <= 0xDFFF) { /* pairs (and lone ones) kept exact */
                int order = -1;
                return PyUnicode_DecodeUTF16(s->data, (Py_ssize_t)(s->len * 2), "surrogatepass",
                                             &order);
            }
        return PyUnicode_FromKindAndData(PyUnicode_2BYTE_KIND, s->data, (Py_ssize_t)s->len);
    }
    case P4J_ENC_LATIN1:
        return PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, s->data, (Py_ssize_t)s->len);
    case P4J_ENC_UCS4:
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, s->data, (Py_ssize_t)s->len);
    case P4J_ENC_UTF8: { /* socket answers: a peer's bytes, not trusted to be UTF-8 */
        PyObject *text = PyUnicode_DecodeUTF8(s->data, (Py_ssize_t)s->len, "surrogatepass");
        if (!text && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_Format(p4j_reg.Py4JError, "py4jni: a string in the answer is not valid "
                         "UTF-8 (%S)", value ? value : Py_None);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        }
        return text;
    }
    }
    PyErr_SetString(PyExc_SystemError, "py4jni: bad string encoding");
    return NULL;
}

static PyObject *bytes_from_value(ClientObject *cl, p4j_value *v)
{
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)v->u.bytes.len);
    p4j_error err = {0};
    p4j_status st;
    uint8_t *dst = b ? (uint8_t *)PyBytes_AS_STRING(b) : NULL;
    if (v->u.bytes.len >= 65536) { /* large copies run without the GIL */
        Py_BEGIN_ALLOW_THREADS
        st = cl->c->ops->read_bytes(cl->c, v, dst, &err);
        Py_END_ALLOW_THREADS
    } else {
        st = cl->c->ops->read_bytes(cl->c, v, dst, &err);
    }
    if (st != P4J_OK) {
        Py_XDECREF(b);
        return p4j_raise(cl, &err, NULL);
    }
    return b;
}

PyObject *p4j_value_to_py(ClientObject *cl, p4j_value *v)
{
    PyObject *r = NULL;
    switch (v->kind) {
    case P4J_NULL:
    case P4J_VOID:
        Py_RETURN_NONE;
    case P4J_BOOL:
        return PyBool_FromLong(v->u.b);
    case P4J_INT:
        return p4j_long_new(v->u.i);
    case P4J_LONG:
        return p4j_long_new(v->u.l);
    case P4J_DOUBLE:
        return PyFloat_FromDouble(v->u.d);
    case P4J_STRING:
        r = str_from_value(v);
        break;
    case P4J_DECIMAL: {
        PyObject *text = str_from_value(v), *dec = decimal_type();
        r = text && dec ? PyObject_CallOneArg(dec, text) : NULL;
        Py_XDECREF(text);
        break;
    }
    case P4J_BYTES:
        r = bytes_from_value(cl, v);
        break;
    case P4J_CLASS: {
        PyObject *fqn = str_from_value(v);
        if (!fqn) {
            cl->c->ops->release(cl->c, &v->ref);
            break;
        }
        r = p4j_wrap_class(cl, &v->ref, fqn);
        Py_DECREF(fqn);
        break;
    }
    case P4J_REF: case P4J_LIST: case P4J_SET: case P4J_MAP: case P4J_ARRAY:
    case P4J_ITERATOR:
        if ((r = p4j_proxy_unwrap(cl, v)) != NULL) /* a Python object Java held */
            break;
        r = p4j_wrap_ref(cl, v->kind, &v->ref);
        break;
    default:
        PyErr_Format(PyExc_SystemError, "py4jni: unexpected result kind %s",
                     p4j_kind_name(v->kind));
        break;
    }
    p4j_value_clear(v);
    return r;
}

void p4j_ref_id(ClientObject *cl, const p4j_ref *ref, char *buf, size_t cap)
{
    cl->c->ops->ref_id(cl->c, ref, buf, cap);
}

/* The error hook now in force: java_gateway.get_return_value, or protocol's when only
 * that one was replaced. New reference, or NULL (no exception set) when unregistered. */
static PyObject *current_hook(void)
{
    static PyObject *hook_name;
    if (!p4j_reg.gateway_module)
        return NULL;
    if (!hook_name && !(hook_name = PyUnicode_InternFromString("get_return_value"))) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *hook = PyObject_GetAttr(p4j_reg.gateway_module, hook_name);
    if (hook == p4j_reg.default_hook && p4j_reg.protocol_module) {
        PyObject *other = PyObject_GetAttr(p4j_reg.protocol_module, hook_name);
        if (other)
            Py_SETREF(hook, other);
    }
    if (!hook)
        PyErr_Clear();
    return hook;
}

/* Raises Py4JJavaError(message, jexc) without the hook (steals jexc). */
static PyObject *raise_java_direct(PyObject *jexc, const char *target, const char *name)
{
    PyObject *errmsg = name ? PyUnicode_FromFormat("An error occurred while calling %s.%s.\n",
                                                   target ? target : "None", name)
                            : PyUnicode_FromFormat("An error occurred while calling %s.\n",
                                                   target ? target : "the JVM");
    PyObject *exc = errmsg ? PyObject_CallFunctionObjArgs(p4j_reg.Py4JJavaError, errmsg, jexc,
                                                          NULL)
                           : NULL;
    if (exc) {
        PyErr_SetObject(p4j_reg.Py4JJavaError, exc);
        Py_DECREF(exc);
    }
    Py_XDECREF(errmsg);
    Py_DECREF(jexc);
    return NULL;
}

/* Passes Java exception `jexc` (stolen) through the hook; see p4j_raise_call. */
static PyObject *raise_java(ClientObject *cl, PyObject *jexc, const char *target,
                            const char *name)
{
    PyObject *hook = current_hook();
    if (!hook || hook == p4j_reg.default_hook) { /* not replaced: what it would raise */
        Py_XDECREF(hook);
        return raise_java_direct(jexc, target, name);
    }
    char id[80];
    p4j_ref_id(cl, &((JavaObject *)jexc)->ref, id, sizeof id);
    PyObject *key = PyUnicode_FromString(id);
    if (!P4JPY_LOAD(cl->pending)) { /* made once (under the client's lock) */
        P4JPY_LOCK_OBJ(cl);
        if (!cl->pending)
            P4JPY_STORE(cl->pending, PyDict_New());
        P4JPY_UNLOCK_OBJ();
    }
    if (!key || !cl->pending || PyDict_SetItem(cl->pending, key, jexc) < 0) {
        Py_XDECREF(key);
        Py_DECREF(hook);
        Py_DECREF(jexc);
        return NULL;
    }
    Py_DECREF(jexc); /* the pending table holds it while the hook runs */
    PyObject *r = PyObject_CallFunction(hook, "NOzz", PyUnicode_FromFormat("xr%s", id),
                                        (PyObject *)cl, target, name);
    Py_DECREF(hook);
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (PyDict_DelItem(cl->pending, key) < 0)
        PyErr_Clear();
    Py_DECREF(key);
    PyErr_Restore(et, ev, tb);
    return r;
}

PyObject *p4j_raise_call(ClientObject *cl, p4j_error *err, const char *target,
                         const char *name)
{
    if (err->kind == P4J_ERR_INTERRUPTED && p4jpy_interrupt_raise()) { /* Ctrl-C: a socket */
        p4j_error_clear(cl->c, err);       /* wait abandoned, the handler's exception */
        return NULL;
    }
    if (p4jpy_signals_run_handlers() < 0) { /* Ctrl-C during the call: KeyboardInterrupt */
        p4j_error_clear(cl->c, err); /* (the Java exception the interrupt caused) */
        return NULL;
    }
    if (__atomic_load_n(&p4j_base_pending_any, __ATOMIC_RELAXED) && p4j_base_here()) {
        p4j_error_clear(cl->c, err); /* Java's exception for it: the kept one wins */
        return p4j_base_rethrow(NULL);
    }
    PyObject *type = p4j_reg.Py4JError;
    const char *msg = err->message ? err->message : "";
    switch (err->kind) {
    case P4J_ERR_MEMORY:
        p4j_error_clear(cl->c, err);
        return PyErr_NoMemory();
    case P4J_ERR_NETWORK:
        type = p4j_reg.Py4JNetworkError;
        if ((err->timed_out || err->os_errno) && type) {
            /* py4j's cause: socket.timeout for a time-out, else the OSError (e.g.
             * ConnectionRefusedError: OSError picks the subclass of its errno) */
            PyObject *cause =
                err->timed_out ? PyObject_CallFunction(PyExc_TimeoutError, "s", msg)
                               : PyObject_CallFunction(PyExc_OSError, "is", err->os_errno,
                                                       strerror(err->os_errno));
            PyObject *exc = cause ? PyObject_CallFunction(type, "sO", msg, cause) : NULL;
            Py_XDECREF(cause);
            if (exc) {
                PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
                Py_DECREF(exc);
            }
            p4j_error_clear(cl->c, err);
            return NULL;
        }
        break;
    case P4J_ERR_AUTH: type = p4j_reg.Py4JAuthenticationError; break;
    case P4J_ERR_JAVA: {
        p4j_ref t = err->throwable;
        err->throwable.handle = NULL; /* ownership moves to the JavaObject */
        p4j_error_clear(cl->c, err);
        PyObject *jexc = p4j_wrap_ref(cl, P4J_REF, &t);
        return jexc ? raise_java(cl, jexc, target, name) : NULL;
    }
    default: break;
    }
    if (!type)
        type = PyExc_RuntimeError;
    PyErr_SetString(type, msg);
    p4j_error_clear(cl->c, err);
    return NULL;
}

PyObject *p4j_raise(ClientObject *cl, p4j_error *err, const char *where)
{
    PyObject *r = p4j_raise_call(cl, err, where ? where : "the JVM", NULL);
    if (r) { /* a replaced hook returned a value where no value can go */
        Py_DECREF(r);
        PyErr_Format(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_RuntimeError,
                     "py4jni: a Java exception in %s was swallowed by get_return_value",
                     where ? where : "the JVM");
    }
    return NULL;
}
