/* python-binding/src/objects.c - What the extension's Java types share (objects.h):
 * JavaMember (java_member.c), JavaObject (java_object.c), JavaClass (java_class.c) and
 * Namespace (namespace.c, the base of the Python name spaces such as JavaGateway and
 * JVMView). Here: the open-gateway check, the member name check, instance __dict__
 * reads, py4j's help pages and dir(), the client argument of py4j's constructors, and
 * the types' start-up.
 */
#include <string.h>

#include "objects.h"

int p4j_closed_error(void)
{
    PyErr_SetString(p4j_reg.Py4JError, "py4jni: the gateway has been shut down");
    return -1;
}

int p4jpy_check_member_name(PyObject *name, const char *cname, Py_ssize_t len)
{
    if (!memchr(cname, 0, (size_t)len))
        return 0;
    PyErr_Format(p4j_reg.Py4JError ? p4j_reg.Py4JError : PyExc_ValueError,
                 "py4jni: a Java member name cannot hold NUL: %R", name);
    return -1;
}

int p4jpy_instance_dict_get(PyObject *self, PyObject *name, PyObject **out)
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

PyObject *p4jpy_help_doc(PyObject *target, PyObject *name, const char *fallback)
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

ClientObject *p4jpy_client_arg(PyObject *client)
{
    if (!PyObject_TypeCheck(client, &ClientType)) {
        PyErr_SetString(PyExc_TypeError,
                        "gateway_client must be a py4jni gateway client (gateway._gateway_client)");
        return NULL;
    }
    return (ClientObject *)client;
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

PyObject *p4jpy_dir_names(ClientObject *cl, const p4j_ref *ref, p4j_dir_kind kind)
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

int p4j_objects_init(void)
{
    return p4jpy_java_object_init() < 0 || p4jpy_namespace_init() < 0 ? -1 : 0;
}
