/* python-binding/src/transport.c - the transport factory (see transport.h): the only
 * file of the binding that names a transport's constructor. */
#include <Python.h>

#include "binding.h"
#include "transport.h"

#include "inproc.h"
#include "socket_transport.h"

/* A socket client's unlock/relock (socket_transport.h): its releases come from
 * destructors holding the GIL, or from threads without it; the GIL is let go while the
 * release waits for the server, whose answer may come from a Python thread. */
static void *gil_release_if_held(void)
{
    return PyGILState_Check() ? (void *)PyEval_SaveThread() : NULL;
}

static void gil_retake(void *saved)
{
    if (saved)
        PyEval_RestoreThread(saved);
}

p4j_status p4jpy_transport_new(const p4jpy_transport_spec *spec, p4j_client **out,
                               p4j_error *err)
{
    p4j_status st;
    switch (spec->kind) {
    case P4JPY_TRANSPORT_INPROC:
        return p4j_inproc_client_new(&spec->jvm, out, err);
    case P4JPY_TRANSPORT_SOCKET:
        if (spec->pinned)
            st = p4j_socket_client_new_pinned(spec->address, spec->port, spec->auth_token,
                                              spec->read_timeout_s, out, err);
        else
            st = p4j_socket_client_new(spec->address, spec->port, spec->auth_token,
                                       spec->read_timeout_s, out, err);
        if (st == P4J_OK) {
            (*out)->unlock = gil_release_if_held;
            (*out)->relock = gil_retake;
            /* Ctrl-C abandons a wait, as it ends py4j's socket read */
            p4j_socket_client_set_interrupt(*out, p4jpy_socket_interrupted, NULL);
        }
        return st;
    }
    *out = NULL;
    return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: unknown transport %d", (int)spec->kind);
}

p4j_status p4jpy_transport_inproc_context(p4j_client *c, const void *context, p4j_error *err)
{
    return p4j_inproc_set_context(c, (jobject)context, err);
}
