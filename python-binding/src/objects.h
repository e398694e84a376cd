/* python-binding/src/objects.h - What the extension's Java types share: JavaMember
 * (java_member.c), JavaObject (java_object.c), JavaClass (java_class.c) and Namespace
 * (namespace.c), with objects.c: the JavaMember free list and the inline constructor
 * the attribute fast paths use, member name checks, py4j's help pages and dir(), and
 * the end of a reference holder's life (a JavaObject's or a JavaClass's).
 */
#ifndef P4JPY_OBJECTS_H
#define P4JPY_OBJECTS_H

#include <string.h>

#include "binding.h"

/* The free lists are shared by every thread: free-threaded builds allocate instead. */
#ifdef Py_GIL_DISABLED
#define P4JPY_FREELISTS 0
#else
#define P4JPY_FREELISTS 1
#endif
#define P4JPY_MEMBER_FREELIST_MAX 64
extern JavaMemberObject *p4jpy_member_freelist[P4JPY_MEMBER_FREELIST_MAX];
extern int p4jpy_member_freelist_len;

/* Calls a JavaMember: one transport call (java_member.c). */
PyObject *p4jpy_member_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames);

/* True for a `__dunder__` str. */
static inline int p4jpy_is_dunder(PyObject *name)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(name);
    return len > 4 && PyUnicode_READ_CHAR(name, 0) == '_' && PyUnicode_READ_CHAR(name, 1) == '_' &&
           PyUnicode_READ_CHAR(name, len - 1) == '_' && PyUnicode_READ_CHAR(name, len - 2) == '_';
}

/* Refuses a Java member name holding NUL (Java would see it cut there): 0, or -1 with
 * Py4JError. Callers skip interned names: Python interns the identifiers of code
 * (obj.name), which cannot hold NUL; getattr(obj, s) passes s itself. */
__attribute__((noinline, cold)) int p4jpy_check_member_name(PyObject *name, const char *cname,
                                                            Py_ssize_t len);

/* A JavaMember for `name`, whose NUL check the caller made (or was not needed). */
static inline __attribute__((always_inline)) PyObject *
p4jpy_member_new_checked(PyObject *owner, PyObject *name, unsigned flags, const char *cname,
                         Py_ssize_t len)
{
    JavaMemberObject *m;
    if (P4JPY_FREELISTS && p4jpy_member_freelist_len > 0) {
        m = p4jpy_member_freelist[--p4jpy_member_freelist_len];
        _Py_NewReference((PyObject *)m);
    } else {
        m = PyObject_GC_New(JavaMemberObject, &JavaMemberType);
        if (!m)
            return NULL;
    }
    m->cached = 0;
    Py_INCREF(owner);
    Py_INCREF(name);
    m->owner = owner;
    m->name = name;
    m->cname = cname;
    m->cname_len = len;
    m->flags = flags;
    m->vectorcall = p4jpy_member_vectorcall;
    m->site = NULL;
    return (PyObject *)m;
}

/* p4jpy_member_new for an interned compact ASCII `name` (its characters are its UTF-8;
 * no NUL check: see p4jpy_check_member_name). */
static inline PyObject *p4jpy_member_new_interned(PyObject *owner, PyObject *name)
{
    return p4jpy_member_new_checked(owner, name, 0, (const char *)((PyASCIIObject *)name + 1),
                                    PyUnicode_GET_LENGTH(name));
}

/* The arguments of a call (JavaMember or constructor) made into `pack` (none made for no
 * arguments), after the signal handlers owed ran: 0, or -1 with an exception (and the
 * pack released). */
static inline __attribute__((always_inline)) int
p4jpy_call_args(ClientObject *cl, PyObject *const *args, Py_ssize_t n, p4j_argpack *pack)
{
    pack->vals = NULL; /* no arguments: no pack to make and release */
    if (n && p4j_args_from_py(cl, args, n, pack) < 0)
        return -1;
    if (P4JPY_SIGNALS_CATCH_UP() < 0) { /* a SIGINT just before: its handler raised */
        if (n)
            p4j_args_release(pack);
        return -1;
    }
    return 0;
}

/* Looks `name` up in the instance __dict__ of `self`: 1 with a new reference in *out,
 * 0 when absent (or no __dict__), -1 with an exception. */
int p4jpy_instance_dict_get(PyObject *self, PyObject *name, PyObject **out);

/* Records `name` as a method of `o` (dir() lists it; auto_field asks no field again).
 * Returns 0, or -1 with an exception (java_object.c). */
int p4jpy_jobject_note_method(JavaObject *o, PyObject *name);

/* py4j's __doc__: the help page of `target` (a JavaObject or JavaClass), restricted to
 * the overloads of `name` when given; `fallback` (the type's doc) when it fails. */
PyObject *p4jpy_help_doc(PyObject *target, PyObject *name, const char *fallback);

/* Calls the transport's dir on `ref` and returns a list of names. */
PyObject *p4jpy_dir_names(ClientObject *cl, const p4j_ref *ref, p4j_dir_kind kind);

/* Returns the Client argument of JavaObject(...)/JavaClass(...), or NULL with TypeError. */
ClientObject *p4jpy_client_arg(PyObject *client);

/* The start of a JavaObject's or JavaClass's deallocation: out of the GC, its weak
 * references cleared. */
static inline void p4jpy_holder_dealloc_begin(PyObject *self, PyObject *const *weakreflist)
{
    PyObject_GC_UnTrack(self);
    if (*weakreflist)
        PyObject_ClearWeakRefs(self);
}

/* The end of it: the Java reference released (unless `honour_keep` and the client
 * keeps dropped objects: py4j's enable_memory_management=False), a `parked` one (a
 * JavaObject's handle detached during a call; may be NULL), then the client. */
static inline void p4jpy_holder_release(ClientObject **client, p4j_ref *ref, p4j_ref *parked,
                                        int honour_keep)
{
    if (!*client) /* (read through `client` after each call: no register kept across) */
        return;
    if (ref->handle && !(honour_keep && (*client)->keep_dropped))
        (*client)->c->ops->release((*client)->c, ref);
    if (parked && parked->handle)
        (*client)->c->ops->release((*client)->c, parked);
    Py_CLEAR(*client);
}

/* Each type file's part of p4j_objects_init: its interned names and derived types. */
int p4jpy_java_object_init(void);
int p4jpy_namespace_init(void);

#endif
