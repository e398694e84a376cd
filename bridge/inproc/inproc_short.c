/* bridge/inproc/inproc_short.c - which resolved methods are "short calls": a caller holding the
 * Python GIL may keep it across them (P4J_CALL_LOCK_HELD).
 *
 * Keeping the GIL around a Java call is safe only when the call can neither block nor
 * call back into Python: a Java thread that waits for something (a monitor, I/O,
 * another thread, a class being initialised elsewhere) held by a thread that waits for
 * the GIL would deadlock, and a long call would starve every other Python thread. No
 * test at run time can tell that beforehand, so the answer is a short allowlist of JDK
 * methods that take no lock, do no I/O, load no user class and call no user code:
 * java.lang.Math and StrictMath, System.currentTimeMillis/nanoTime, StringBuilder (not
 * StringBuffer: synchronized), a few pure methods of String and the boxes, and the
 * accessors of java.nio's buffers (array() hands out the backing array; ByteBuffer's
 * subclasses all live in java.nio, so none of them is user code). The rule
 * is on the class that *declares* the resolved method, so Object.wait() on a
 * StringBuilder is not short, and every parameter must be a primitive or a String, or
 * receive a JDK value in this call: null, a String or a box (the member is resolved for
 * the kinds of its arguments, so java.util.Objects.hashCode(Object) given a str is short,
 * given a Java object or a Python proxy it is not: its hashCode() may be user code).
 * A constructor is named "<init>" ("*" covers it): new StringBuilder() allocates only.
 * Methods whose time grows without bound with an argument (String.repeat, regular
 * expressions) are left out; the caller also bounds the length of String arguments.
 * GC and safepoints need no GIL: threads waiting for the GIL are in native code and
 * count as stopped. That holds as long as no thread waits for the GIL inside a JNI
 * critical region (Get*Critical, which would hold GC off): py4jni uses none; keep it so.
 */
#include <stdbool.h>
#include <string.h>

#include "inproc_internal.h"

/* Declaring class -> its short methods ("*": every method of the class). */
static const struct {
    const char *cls;
    const char *const *methods;
} allow[] = {
    {"java.lang.Math", (const char *const[]){"*", NULL}},
    {"java.lang.StrictMath", (const char *const[]){"*", NULL}},
    {"java.lang.System", (const char *const[]){"currentTimeMillis", "nanoTime", NULL}},
    {"java.lang.StringBuilder", (const char *const[]){"*", NULL}},
    {"java.lang.AbstractStringBuilder", (const char *const[]){"*", NULL}},
    {"java.lang.String",
     (const char *const[]){"length", "isEmpty", "charAt", "codePointAt", "substring",
                           "indexOf", "lastIndexOf", "startsWith", "endsWith", "concat",
                           "hashCode", "compareTo", "compareToIgnoreCase",
                           "equalsIgnoreCase", "toString", "trim", "strip", "isBlank",
                           "valueOf", NULL}},
    {"java.lang.Integer",
     (const char *const[]){"parseInt", "valueOf", "toString", "toHexString", "compare",
                           "hashCode", "intValue", "longValue", "doubleValue", NULL}},
    {"java.lang.Long",
     (const char *const[]){"parseLong", "valueOf", "toString", "toHexString", "compare",
                           "hashCode", "intValue", "longValue", "doubleValue", NULL}},
    {"java.nio.ByteBuffer",
     (const char *const[]){"array", "arrayOffset", "hasArray", "isDirect", NULL}},
    {"java.nio.Buffer",
     (const char *const[]){"capacity", "position", "limit", "remaining", "hasRemaining",
                           "isReadOnly", NULL}},
    {"java.util.Objects",
     (const char *const[]){"hashCode", "equals", "toString", "isNull", "nonNull",
                           "requireNonNull", "requireNonNullElse", "checkIndex", NULL}},
    {"java.lang.Double",
     (const char *const[]){"parseDouble", "valueOf", "toString", "compare", "hashCode",
                           "isNaN", "isInfinite", "doubleValue", NULL}},
};

/* The argument kinds (p4j_arg_key) that reach Java as a JDK value whose methods run no
 * user code and take no lock: null, a boolean, int, long or double box, a String. */
static bool value_key(char key) { return key && strchr("nbiLds", key); }

/* True when every parameter of method descriptor `sig` is a primitive or a String, or
 * its argument kind in `keys` (a C string; NULL: none known) is a JDK value. */
static bool plain_parameters(const char *sig, const char *keys)
{
    if (sig[0] != '(')
        return false;
    for (const char *p = sig + 1; *p && *p != ')'; keys = keys && *keys ? keys + 1 : keys) {
        const char *start = p;
        while (*p == '[')
            p++;
        if (*p == 'L' && !(p = strchr(p, ';')))
            return false;
        p++;
        bool primitive = p - start == 1 && strchr("ZBCSIJFD", *start);
        bool string = p - start == 18 && strncmp(start, "Ljava/lang/String;", 18) == 0;
        if (!primitive && !string && !(keys && value_key(*keys)))
            return false;
    }
    return true;
}

bool p4jj_short_call(const char *decl, const char *name, const char *sig, const char *keys)
{
    if (!decl || !plain_parameters(sig, keys))
        return false;
    for (size_t i = 0; i < sizeof allow / sizeof allow[0]; i++) {
        if (strcmp(allow[i].cls, decl) != 0)
            continue;
        for (const char *const *m = allow[i].methods; *m; m++)
            if (strcmp(*m, "*") == 0 || strcmp(*m, name) == 0)
                return true;
        return false;
    }
    return false;
}
