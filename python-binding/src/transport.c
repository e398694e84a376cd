/* python-binding/src/transport.c - the transport factory (see transport.h): the only
 * file of the binding that names a transport's constructor. */
#include "transport.h"

#include "inproc.h"
#include "socket_transport.h"

p4j_status p4jpy_transport_new(const p4jpy_transport_spec *spec, p4j_client **out,
                               p4j_error *err)
{
    switch (spec->kind) {
    case P4JPY_TRANSPORT_INPROC:
        return p4j_inproc_client_new(&spec->jvm, out, err);
    case P4JPY_TRANSPORT_SOCKET:
        if (spec->pinned)
            return p4j_socket_client_new_pinned(spec->address, spec->port, spec->auth_token,
                                                spec->read_timeout_s, out, err);
        return p4j_socket_client_new(spec->address, spec->port, spec->auth_token,
                                     spec->read_timeout_s, out, err);
    }
    *out = NULL;
    return p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: unknown transport %d", (int)spec->kind);
}
