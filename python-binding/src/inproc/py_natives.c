/* python-binding/src/inproc/py_natives.c - register_natives: Java `native` methods
 * implemented by Python callables (bridge/inproc/include/natives.h builds a libffi closure
 * per method; the calls run through the callback hooks of py_callbacks.c with the callable
 * as target).
 *
 * Validation of the mapping (names, overloads, arity) is in py4jni/inproc_mode/callbacks.py; this
 * file lists a class's natives and binds the chosen ones.
 */
#include "binding.h"
#include "natives.h"

void *p4j_handle_new_owned(ClientObject *cl, PyObject *obj);
void p4j_handle_drop(void *h);

static int args_client_class(PyObject *clo, PyObject *clso, ClientObject **cl,
                             JavaClassObject **cls)
{
    if (!PyObject_TypeCheck(clo, &ClientType) || !P4J_IS_JAVACLASS(clso)) {
        PyErr_SetString(PyExc_TypeError, "expected a py4jni Client and a JavaClass");
        return -1;
    }
    *cl = (ClientObject *)clo;
    *cls = (JavaClassObject *)clso;
    if (!p4jpy_has_cap(*cl, P4J_CAP_NATIVES)) {
        PyErr_SetString(p4j_reg.Py4JError,
                        "py4jni: register_natives needs the in-process gateway");
        return -1;
    }
    return p4j_check_open(*cl);
}

/* Lists the natives of `cls` (GIL released while Java runs). */
static p4j_native_list *describe(ClientObject *cl, JavaClassObject *cls)
{
    p4j_native_list *list = NULL;
    p4j_error err = {0};
    p4j_status st;
    Py_BEGIN_ALLOW_THREADS
    st = p4j_natives_describe(&cls->ref, &list, &err);
    Py_END_ALLOW_THREADS
    if (st != P4J_OK) {
        p4j_raise(cl, &err, NULL);
        return NULL;
    }
    return list;
}

static PyObject *mod_natives_describe(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *clo, *clso;
    ClientObject *cl;
    JavaClassObject *cls;
    if (!PyArg_ParseTuple(args, "OO:natives_describe", &clo, &clso) ||
        args_client_class(clo, clso, &cl, &cls) < 0)
        return NULL;
    p4j_native_list *list = describe(cl, cls);
    if (!list)
        return NULL;
    PyObject *out = PyList_New((Py_ssize_t)list->n);
    for (size_t i = 0; out && i < list->n; i++) {
        const p4j_cb_method *m = list->methods[i];
        PyObject *t = Py_BuildValue("(ssO)", m->name, m->sig,
                                    (m->flags & P4J_CB_STATIC) ? Py_True : Py_False);
        if (!t)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, (Py_ssize_t)i, t);
    }
    p4j_natives_list_free(list);
    return out;
}

static PyObject *mod_natives_bind(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *clo, *clso, *entries;
    ClientObject *cl;
    JavaClassObject *cls;
    if (!PyArg_ParseTuple(args, "OOO!:natives_bind", &clo, &clso, &PyList_Type, &entries) ||
        args_client_class(clo, clso, &cl, &cls) < 0)
        return NULL;
    p4j_native_list *list = describe(cl, cls);
    if (!list)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(entries);
    size_t *which = PyMem_Calloc((size_t)n + 1, sizeof *which);
    void **targets = PyMem_Calloc((size_t)n + 1, sizeof *targets);
    Py_ssize_t made = 0;
    PyObject *result = NULL;
    if (!which || !targets) {
        PyErr_NoMemory();
        goto done;
    }
    for (; made < n; made++) {
        const char *name, *sig;
        PyObject *fn;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(entries, made), "ssO:natives_bind entry", &name,
                              &sig, &fn))
            goto done;
        size_t k = 0;
        while (k < list->n && (strcmp(list->methods[k]->name, name) != 0 ||
                               strcmp(list->methods[k]->sig, sig) != 0))
            k++;
        if (k == list->n) {
            PyErr_Format(p4j_reg.Py4JError, "py4jni: %U declares no native method %s%s",
                         cls->fqn, name, sig);
            goto done;
        }
        if (!PyCallable_Check(fn)) {
            PyErr_Format(PyExc_TypeError, "py4jni: the implementation of %s must be callable",
                         name);
            goto done;
        }
        which[made] = k;
        if (!(targets[made] = p4j_handle_new_owned(cl, fn)))
            goto done;
    }
    p4j_error err = {0};
    p4j_status st;
    Py_BEGIN_ALLOW_THREADS
    st = p4j_natives_bind(&cls->ref, list, which, targets, (size_t)n, &err);
    Py_END_ALLOW_THREADS
    if (st != P4J_OK) {
        p4j_raise(cl, &err, NULL);
        goto done;
    }
    made = 0; /* the closures own the handles now */
    result = Py_NewRef(Py_None);
done:
    for (Py_ssize_t i = 0; targets && i < made; i++)
        if (targets[i])
            p4j_handle_drop(targets[i]);
    PyMem_Free(which);
    PyMem_Free(targets);
    p4j_natives_list_free(list);
    return result;
}

PyMethodDef p4j_native_methods[] = {
    {"natives_describe", mod_natives_describe, METH_VARARGS,
     "natives_describe(client, javaclass): [(name, jni_signature, is_static)] of the native "
     "methods the class declares."},
    {"natives_bind", mod_natives_bind, METH_VARARGS,
     "natives_bind(client, javaclass, [(name, signature, callable), ...]): binds each "
     "native method to its callable (libffi closures + RegisterNatives)."},
    {NULL, NULL, 0, NULL},
};
