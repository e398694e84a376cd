/* bridge/error.c - captured errors (see client.h). */
#include "client.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void p4j_error_clear(p4j_client *c, p4j_error *err)
{
    free(err->message);
    free(err->java_class);
    if (err->throwable.handle && c)
        c->ops->release(c, &err->throwable);
    memset(err, 0, sizeof *err);
}

p4j_status p4j_error_set(p4j_error *err, p4j_error_kind kind, const char *fmt, ...)
{
    va_list ap;
    char *msg = NULL;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    free(err->message);
    err->kind = kind;
    err->timed_out = false;
    err->os_errno = 0;
    err->message = msg; /* NULL only when out of memory; readers treat NULL as "" */
    return P4J_ERROR;
}
