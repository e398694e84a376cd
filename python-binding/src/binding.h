/* python-binding/src/binding.h - the CPython side of py4jni: shared types.
 *
 * Client wraps one p4j_client (in-process or socket); JavaObject, JavaClass and
 * JavaMember are the hot objects of py4j's API, written in C so that attribute access,
 * calls and conversions of the hot path never run Python code.
 */
#ifndef P4J_BINDING_H
#define P4J_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "client.h"

typedef struct ClientObject {
    PyObject_HEAD
    p4j_client *c;
    PyObject *converter; /* callable(obj) -> JavaObject for other Python types, or None */
    PyObject *weakreflist;
} ClientObject;

typedef struct JavaObject {
    PyObject_HEAD
    ClientObject *client;
    p4j_ref ref;
    PyObject *weakreflist;
} JavaObject;

typedef struct JavaClassObject {
    PyObject_HEAD
    ClientObject *client;
    p4j_ref ref;         /* CLASS ref: the java.lang.Class */
    PyObject *fqn;       /* str, binary name ("java.util.Map$Entry") */
    PyObject *members;   /* dict: name -> 1 (static field), 2 (method) or nested JavaClass */
    PyObject *weakreflist;
    vectorcallfunc vectorcall; /* constructs an instance */
} JavaClassObject;

typedef struct JavaMemberObject {
    PyObject_HEAD
    PyObject *owner;     /* JavaObject or JavaClass (strong) */
    PyObject *name;      /* str */
    const char *cname;   /* UTF-8 of name, owned by name */
    Py_ssize_t cname_len;
    unsigned flags;      /* P4J_CALL_STATIC for static methods */
    vectorcallfunc vectorcall;
} JavaMemberObject;

extern PyTypeObject ClientType, JavaObjectType, JavaClassType, JavaMemberType, NamespaceType;

/* Exception classes and collection wrappers registered by the py4jni package. */
typedef struct p4j_registry {
    PyObject *Py4JError, *Py4JJavaError, *Py4JNetworkError, *Py4JAuthenticationError;
    PyObject *wrappers[P4J_KIND_COUNT]; /* type per ref kind (LIST, SET, ...) or NULL */
    PyObject *Decimal;                  /* decimal.Decimal, imported lazily */
} p4j_registry;
extern p4j_registry p4j_reg;

#define P4J_IS_JAVAOBJECT(o) PyObject_TypeCheck((o), &JavaObjectType)
#define P4J_IS_JAVACLASS(o) PyObject_TypeCheck((o), &JavaClassType)

/* Argument conversion state for one call: Python buffers and temporaries to release. */
#define P4J_ARGS_STACK 8
typedef struct p4j_argpack {
    p4j_value *vals;
    Py_ssize_t n;
    p4j_value stack_vals[P4J_ARGS_STACK];
    PyObject *temps;       /* list of temporaries (converted arguments) or NULL */
    Py_buffer *bufs;       /* exported buffers, one slot per argument */
    char *has_buf;         /* 1 where bufs[i] must be released */
    JavaObject *owners[P4J_ARGS_STACK]; /* argument objects whose cls cache we update */
} p4j_argpack;

/* Converts `n` Python arguments into pack->vals. Returns 0, or -1 with an exception. */
int p4j_args_from_py(ClientObject *cl, PyObject *const *args, Py_ssize_t n, p4j_argpack *pack);

/* Releases what p4j_args_from_py took (buffers, temporaries) and writes back caches. */
void p4j_args_release(p4j_argpack *pack);

/* Converts one Python value (for field set). Same contract as p4j_args_from_py. */
int p4j_value_from_py(ClientObject *cl, PyObject *o, p4j_value *v, p4j_argpack *pack,
                      Py_ssize_t index);

/* Converts a result into a new Python object and clears `v` (its ref passes to the
 * new object). Returns NULL with an exception set on failure. */
PyObject *p4j_value_to_py(ClientObject *cl, p4j_value *v);

/* Sets the Python exception for `err` and clears it. `where` is py4j's
 * "<target id>.<name>" of the failed call (or NULL). Returns NULL. */
PyObject *p4j_raise(ClientObject *cl, p4j_error *err, const char *where);

/* Returns a new JavaObject (or registered wrapper for `kind`) owning `ref`. */
PyObject *p4j_wrap_ref(ClientObject *cl, p4j_kind kind, p4j_ref *ref);

/* Returns a new JavaClass owning `ref` for class `fqn`. */
PyObject *p4j_wrap_class(ClientObject *cl, p4j_ref *ref, PyObject *fqn);

/* Writes py4j's target id of `ref` ("o7f3a..." in-process, the server's id in socket
 * mode) into buf. */
void p4j_ref_id(ClientObject *cl, const p4j_ref *ref, char *buf, size_t cap);

/* Returns a new JavaMember bound to `owner`. */
PyObject *p4j_member_new(PyObject *owner, PyObject *name, unsigned flags);

/* Returns the client of a JavaObject/JavaClass with an exception when closed. */
int p4j_check_open(ClientObject *cl);

#endif /* P4J_BINDING_H */
