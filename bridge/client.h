/* bridge/client.h - the py4j command set as a C API, independent of transport.
 *
 * A p4j_client is one connection to one JVM: in-process (bridge/inproc/inproc.c, JNI) or
 * socket (bridge/socket/socket_client.c, py4j's wire protocol). Each transport exposes only
 * its constructor (bridge/inproc/include/inproc.h, bridge/socket/include/socket_transport.h);
 * everything above this seam (the Python binding) is written once against the ops
 * table below, and asks `caps` or an optional operation where the transports differ.
 *
 * Conventions for every operation:
 *  - returns P4J_OK or P4J_ERROR; on error `err` holds the captured error and `out`
 *    is P4J_NULL; the caller frees the error with p4j_error_clear();
 *  - a result that carries a ref (p4j_kind_has_ref) passes ownership of that ref to
 *    the caller, who ends it with ops->release(); a P4J_BYTES result's content is
 *    read (and freed) once with ops->read_bytes(), on the thread that made the call
 *    (in-process, the result of call/call_at is a JNI local reference of that thread);
 *  - arguments are borrowed for the duration of the call;
 *  - any thread may call; a transport attaches/locks what it needs itself.
 */
#ifndef P4J_CLIENT_H
#define P4J_CLIENT_H

#include "value.h"

typedef enum p4j_status { P4J_OK = 0, P4J_ERROR = -1 } p4j_status;

typedef enum p4j_error_kind {
    P4J_ERR_NONE = 0,
    P4J_ERR_JAVA,    /* a Java exception: `throwable` holds it (Py4JJavaError)      */
    P4J_ERR_BRIDGE,  /* the bridge refused: no such method, bad argument (Py4JError) */
    P4J_ERR_NETWORK, /* socket failed (Py4JNetworkError)                           */
    P4J_ERR_AUTH,    /* authentication refused (Py4JAuthenticationError)          */
    P4J_ERR_MEMORY,  /* out of memory (MemoryError)                                */
    P4J_ERR_CLOSED,  /* the gateway was shut down (Py4JError)                      */
    P4J_ERR_INTERRUPTED, /* a wait was abandoned because the caller's interrupt check
                            asked (socket: p4j_socket_client_set_interrupt); the caller
                            holds the reason (Python: the signal handler's exception) */
} p4j_error_kind;

/* A captured error. Strings are malloc'd and owned by the error. */
typedef struct p4j_error {
    p4j_error_kind kind;
    char *message;    /* UTF-8 text: the Java message, or the bridge's explanation */
    char *java_class; /* for P4J_ERR_JAVA: the throwable's class name             */
    p4j_ref throwable;/* for P4J_ERR_JAVA: the throwable (owned by the error)     */
    bool timed_out;   /* for P4J_ERR_NETWORK: a wait ran out of its time-out (py4j's
                         socket.timeout cause); p4j_error_set clears it             */
    int os_errno;     /* for P4J_ERR_NETWORK: errno of the system call that failed
                         (py4j's OSError cause), 0 if none; p4j_error_set clears it */
} p4j_error;

/* Call flags. */
#define P4J_CALL_STATIC 1u /* target is a class ref: call a static method */
#define P4J_CALL_NO_ERROR_TEXT 2u /* call, construct: on a Java exception the caller
                                     reads `throwable` only, so a transport may leave
                                     message and java_class NULL (in-process: no
                                     toString() and getName() calls)               */
#define P4J_CALL_LOCK_HELD 4u /* call: the caller holds its lock (the Python GIL) and
                                 set c->unlock/c->relock; the transport keeps the lock
                                 only for a call it knows to be short, never blocking
                                 and never calling back, and releases it around
                                 anything else (transports with P4J_CAP_LOCK_HELD)  */

/* What `dir` lists (py4j's `d` sub-commands). */
typedef enum p4j_dir_kind {
    P4J_DIR_FIELDS = 'f',  /* public instance fields of an object    */
    P4J_DIR_METHODS = 'm', /* public instance methods of an object   */
    P4J_DIR_STATIC = 's',  /* static members of a class              */
    P4J_DIR_VIEW = 'v',    /* names imported in a JVM view           */
} p4j_dir_kind;

typedef struct p4j_client p4j_client;

/* What conn_ctl does to one connection named by an id of idle_list (py4j's
 * GatewayClient.deque). Each returns -1 when the connection is not in a state the
 * operation applies to (gone, in use by a call, not held, a pinned one for TAKE/PUT). */
typedef enum p4j_conn_op {
    P4J_CONN_STATE,    /* 0 gone, 1 idle, 2 held by the caller (TAKE), 3 in use by a call */
    P4J_CONN_TAKE,     /* an idle pooled one leaves the pool: held by the caller until PUT
                          or CLOSE (py4j's deque.pop/remove); 0                           */
    P4J_CONN_PUT,      /* a held one goes back to the pool, the one used next (py4j's
                          deque.append); closed instead once the client is shut down; 0   */
    P4J_CONN_PUT_LAST, /* as PUT, the one used last (deque.appendleft); 0                 */
    P4J_CONN_CLOSE,    /* an idle or held one closes (pinned: its socket is shut down and
                          its thread's next command goes out on a new connection); 0      */
    P4J_CONN_RESET,    /* as CLOSE, with a RST (SO_LINGER 0, py4j's set_linger); 0        */
    P4J_CONN_DUP_FD,   /* a duplicate of its socket's descriptor (close-on-exec, owned by
                          the caller), of a connection in any state                       */
} p4j_conn_op;

/* Runs one command the peer sent on the calling thread's connection (pinned-thread mode):
 * `command` holds its lines (each ending in '\n', the last "e\n"), `len` bytes. Sets
 * *answer to the answer line (malloc'd, *answer_len bytes, ending in '\n') and returns
 * 0, or returns -1 when it has no answer (the transport then answers py4j's "!x"), or
 * P4J_COMMAND_ABANDON: no answer, the connection is dropped and the waits below the
 * command fail with P4J_ERR_INTERRUPTED (the handler's caller holds why: Python's
 * KeyboardInterrupt or SystemExit). Called on the thread that waits on the connection,
 * with no lock held. */
#define P4J_COMMAND_ABANDON (-2)
typedef int (*p4j_command_fn)(void *ctx, const char *command, size_t len, char **answer,
                              size_t *answer_len);

/* What a transport can do beyond the command set (p4j_client_ops.caps). The binding
 * asks these instead of asking which transport it has. */
#define P4J_CAP_SHARED_REFS 1u  /* refs of one client are valid in every other client of
                                   this transport (one JVM per process)               */
#define P4J_CAP_CLASS_ARG 2u    /* a CLASS ref passes as its java.lang.Class argument */
#define P4J_CAP_CALLBACKS 4u    /* Java calls Python in-process
                                   (bridge/inproc/include/callbacks.h)                */
#define P4J_CAP_NATIVES 8u      /* Java natives bound to Python
                                   (bridge/inproc/include/natives.h)                  */
#define P4J_CAP_BUFFERS 16u     /* zero-copy buffers (bridge/inproc/include/inproc_buffers.h) */
#define P4J_CAP_TEXT_PROXIES 32u/* PROXY arguments are py4j's "<id>;<iface>;..." text and
                                   callbacks come over py4j's callback protocol
                                   (decode_arg, encode_answer)                         */
#define P4J_CAP_PINNED 64u      /* py4j's pinned-thread mode (a py4j ClientServer): each
                                   thread has its own connection, and commands the peer
                                   sends on it while the thread waits for an answer run on
                                   that thread (set_command_handler, serve)            */
#define P4J_CAP_LOCK_HELD 128u  /* call honours P4J_CALL_LOCK_HELD                      */

/* The transport's operations. Every function pointer is required unless noted. */
typedef struct p4j_client_ops {
    const char *name; /* "inproc" or "socket" */
    unsigned caps;    /* P4J_CAP_* */
    /* Calls method `name` on `target` (an object, or a class when flags has STATIC). */
    p4j_status (*call)(p4j_client *c, const p4j_ref *target, unsigned flags,
                       const char *name, size_t name_len, const p4j_value *args,
                       size_t nargs, p4j_value *out, p4j_error *err);
    /* Constructs an instance of class `cls` (a CLASS ref). */
    p4j_status (*construct)(p4j_client *c, const p4j_ref *cls, const p4j_value *args,
                            size_t nargs, p4j_value *out, p4j_error *err);
    /* Reads public field `name` of `target` (static when flags has STATIC). */
    p4j_status (*field_get)(p4j_client *c, const p4j_ref *target, unsigned flags,
                            const char *name, p4j_value *out, p4j_error *err);
    /* Writes public field `name` of `target`. */
    p4j_status (*field_set)(p4j_client *c, const p4j_ref *target, unsigned flags,
                            const char *name, const p4j_value *value, p4j_error *err);
    /* Resolves dotted `name` in JVM view `view` (NULL: the default view): out is
     * P4J_CLASS (ref + fqn) or P4J_PACKAGE. */
    p4j_status (*resolve)(p4j_client *c, const p4j_ref *view, const char *name,
                          p4j_value *out, p4j_error *err);
    /* Resolves static member `name` of class `cls`: a field's value, P4J_METHOD, or
     * P4J_CLASS for a nested class. */
    p4j_status (*static_member)(p4j_client *c, const p4j_ref *cls, const char *name,
                                p4j_value *out, p4j_error *err);
    /* Creates a new JVM view named `name`: out is a P4J_REF. */
    p4j_status (*view_new)(p4j_client *c, const char *name, p4j_value *out,
                           p4j_error *err);
    /* Adds (remove=false) or removes an import ("a.b.C" or "a.b.*") in `view`. */
    p4j_status (*view_import)(p4j_client *c, const p4j_ref *view, const char *pattern,
                              bool remove, p4j_error *err);
    /* Lists names (newline-separated, sorted) of `target`: out is P4J_STRING. */
    p4j_status (*dir)(p4j_client *c, const p4j_ref *target, p4j_dir_kind kind,
                      p4j_value *out, p4j_error *err);
    /* Help page of an object or class (`pattern` may be NULL): out is P4J_STRING. */
    p4j_status (*help)(p4j_client *c, const p4j_ref *target, bool is_class,
                       const char *pattern, bool short_name, p4j_value *out,
                       p4j_error *err);
    /* Copies the content of a P4J_BYTES result into `dst` (v->u.bytes.len bytes) and
     * frees its source. Call exactly once per BYTES result; dst NULL only frees. */
    p4j_status (*read_bytes)(p4j_client *c, const p4j_value *v, uint8_t *dst,
                             p4j_error *err);
    /* Full Java stack trace of a throwable: out is P4J_STRING. */
    p4j_status (*stack_trace)(p4j_client *c, const p4j_ref *throwable, p4j_value *out,
                              p4j_error *err);
    /* Releases a ref the caller owns. Never fails; safe after shutdown. */
    void (*release)(p4j_client *c, p4j_ref *ref);
    /* Copies a ref (the copy is owned by the caller). */
    p4j_status (*dup)(p4j_client *c, const p4j_ref *ref, p4j_ref *out, p4j_error *err);
    /* Shuts the connection down; later calls fail with P4J_ERR_CLOSED. */
    void (*shutdown)(p4j_client *c);
    /* Frees the client (after shutdown). */
    void (*destroy)(p4j_client *c);
    /* Writes the py4j object id text of `ref` ("o12"; "null" for a NULL handle) into
     * buf (size cap, truncated, always NUL-terminated). */
    void (*ref_id)(p4j_client *c, const p4j_ref *ref, char *buf, size_t cap);

    /* ---- Transport-specific operations: each one is optional (NULL when the
     * transport lacks it). ---- */

    /* As call, with `site`: a pointer-sized cache the caller keeps (NULL at first,
     * opaque to the caller, which may copy it from one site to another). The
     * transport keeps the method it resolved there and reuses it while the name, the
     * target's class and the kinds and classes of the arguments are the ones it was
     * resolved for, so an overloaded name called with other argument types resolves
     * again. Read and written atomically: calls on several threads may share a site. */
    p4j_status (*call_at)(p4j_client *c, void **site, const p4j_ref *target, unsigned flags,
                          const char *name, size_t name_len, const p4j_value *args,
                          size_t nargs, p4j_value *out, p4j_error *err);

    /* As construct, with a `site` kept as call_at's (the constructor resolved for these
     * argument kinds) and call_at's flags (P4J_CALL_LOCK_HELD: the caller's lock is kept
     * only for a constructor known to be short). */
    p4j_status (*construct_at)(p4j_client *c, void **site, const p4j_ref *cls, unsigned flags,
                               const p4j_value *args, size_t nargs, p4j_value *out,
                               p4j_error *err);

    /* A new ref (owned by the caller) for object id `id` named by the server
     * ("t", "j", "GATEWAY_SERVER", an id from elsewhere). */
    p4j_status (*ref_from_id)(p4j_client *c, const char *id, p4j_ref *out, p4j_error *err);
    /* Asks the server to stop, then shuts the client down as shutdown does. */
    p4j_status (*shutdown_server)(p4j_client *c, p4j_error *err);
    /* Decodes one argument of a callback command in place: buf holds the part (len
     * bytes, type prefix + value, '\n' optional) followed by at least 3 spare bytes;
     * out may point into buf, which must outlive it. Converted as call results are. */
    p4j_status (*decode_arg)(p4j_client *c, char *buf, size_t len, p4j_value *out,
                             p4j_error *err);
    /* Encodes the answer to a callback ("!y<part>\n", or "!x<part>\n" when `error`)
     * from `v` (converted as call arguments are) into *out, malloc'd (*len bytes). */
    p4j_status (*encode_answer)(p4j_client *c, const p4j_value *v, bool error, char **out,
                                size_t *len, p4j_error *err);
    /* Pinned-thread mode (P4J_CAP_PINNED): installs the handler of commands the peer
     * sends while a thread waits for an answer (NULL: answered "!x"). Call before other
     * threads use the client. */
    void (*set_command_handler)(p4j_client *c, p4j_command_fn fn, void *ctx);
    /* Pinned-thread mode: serves socket `fd`, a connection the peer opened to us (py4j's
     * PythonServer), on the calling thread until the peer closes it: reads commands,
     * runs them through the command handler and answers; meanwhile `fd` is the thread's
     * connection, so commands the handler sends go out on it. With `auth_token` the
     * first command must be py4j's "A" with that token (else P4J_ERR_AUTH). Takes
     * ownership of fd (closed on return); `read_timeout_s` bounds each wait (0: none).
     * P4J_OK when the peer closed the connection or the client was shut down. */
    p4j_status (*serve)(p4j_client *c, int fd, const char *auth_token, double read_timeout_s,
                        p4j_error *err);
    /* Sends `text` (`len` bytes: one or more lines of py4j command text, as py4j's
     * GatewayClient.send_command takes it) on the calling thread's connection (pinned)
     * or a pooled one, and sets *answer to the answer line without its '\n' (malloc'd,
     * *answer_len bytes, NUL-terminated; empty when the peer closed the connection). In
     * pinned-thread mode commands the peer sends meanwhile run as during any call.
     * *stage tells how far a failed command got: 0 no connection, 1 sending, 2 sent. */
    p4j_status (*raw_command)(p4j_client *c, const char *text, size_t len, char **answer,
                              size_t *answer_len, int *stage, p4j_error *err);
    /* Closes the connections nobody is using (py4j's GatewayClient.close): the idle
     * pooled ones, and in pinned-thread mode the calling thread's when it is idle. The
     * client stays usable: later commands open new connections. */
    void (*close_idle)(p4j_client *c);
    /* The idle connections, as py4j's GatewayClient.deque holds them: writes their ids
     * (first the one used last, last the one used next) into ids[0..n) when n <= cap,
     * and returns n. Pooled: the connections in the pool; pinned-thread mode: the
     * threads' own connections (not served ones) that no call is using. An id names one
     * socket: a connection resent on a new socket gets a new id; ids are never reused. */
    size_t (*idle_list)(p4j_client *c, uint64_t *ids, size_t cap);
    /* Acts on connection `id` (see p4j_conn_op); never blocks on the network. */
    int (*conn_ctl)(p4j_client *c, uint64_t id, p4j_conn_op op);

    /* ---- Bulk operations for collections and arrays. Each one is optional: NULL when
     * the transport lacks it; callers then fall back to plain Java method calls. ---- */

    /* optional: NULL when the transport lacks it.
     * Opens a batched walk over `source`: a Map (mode 'k' its keys, 'v' its values, 'e'
     * its entries as key, value pairs), an Iterable or an object array (its elements),
     * or an Iterator (walked as it is; elements it hands out are consumed). out is a
     * P4J_REF to the cursor, released with release(). */
    p4j_status (*cursor_open)(p4j_client *c, const p4j_ref *source, char mode,
                              p4j_value *out, p4j_error *err);
    /* optional: NULL when the transport lacks it.
     * Fills vals[0..*n) with the next elements of `cursor`, at most `max` (mode 'e'
     * fills pairs and needs an even max), converted as results are; the caller owns
     * them as it owns results. *n == 0 at the end of the walk (NoSuchElementException
     * also ends it). Any other Java exception of the walk, e.g.
     * ConcurrentModificationException, is the error. */
    p4j_status (*cursor_next)(p4j_client *c, const p4j_ref *cursor, p4j_value *vals,
                              size_t max, size_t *n, p4j_error *err);
    /* optional: NULL when the transport lacks it.
     * Builds a new collection from `n` argument values in one round trip: kind 'l'
     * java.util.ArrayList, 'h' java.util.HashSet, 'a' java.util.HashMap from key,
     * value pairs (n even). Values convert as Object arguments do (int -> Integer, ...).
     * out is the P4J_LIST / P4J_SET / P4J_MAP. */
    p4j_status (*collection_new)(p4j_client *c, char kind, const p4j_value *vals,
                                 size_t n, p4j_value *out, p4j_error *err);
    /* optional: NULL when the transport lacks it.
     * Describes array `arr`: *elem is the JNI descriptor letter of its component type
     * ('Z' 'B' 'C' 'S' 'I' 'J' 'F' 'D'; 'L' for any reference type, arrays included)
     * and *len its length. */
    p4j_status (*array_info)(p4j_client *c, const p4j_ref *arr, char *elem, size_t *len,
                             p4j_error *err);
    /* optional: NULL when the transport lacks it.
     * Copies elements [start, start + count) of primitive array `arr` (component `elem`)
     * into `dst` in native layout (boolean: one byte, 0 or 1). One copy, no Java call. */
    p4j_status (*array_read)(p4j_client *c, const p4j_ref *arr, char elem, size_t start,
                             size_t count, void *dst, p4j_error *err);
    /* optional: NULL when the transport lacks it.
     * Copies `count` elements from `src` (native layout; booleans 0 or 1) into elements
     * [start, start + count) of primitive array `arr` (component `elem`). */
    p4j_status (*array_write)(p4j_client *c, const p4j_ref *arr, char elem, size_t start,
                              size_t count, const void *src, p4j_error *err);
    /* optional: NULL when the transport lacks it.
     * Creates a primitive array of component `elem` and length `count`, filled from
     * `src` (native layout) or zeroed when src is NULL. out is a P4J_ARRAY, byte[]
     * included (so that it stays a mutable Java array on the Python side). */
    p4j_status (*array_new)(p4j_client *c, char elem, size_t count, const void *src,
                            p4j_value *out, p4j_error *err);
} p4j_client_ops;

/* The common head of every transport's client struct. */
struct p4j_client {
    const p4j_client_ops *ops;
    volatile int closed; /* set once by shutdown */
    /* Set by the caller for P4J_CALL_LOCK_HELD: unlock() releases the caller's lock and
     * returns what relock() needs to take it back. */
    void *(*unlock)(void);
    void (*relock)(void *saved);
};

/* Frees what `err` owns (releasing its throwable through `c` when c is non-NULL). */
void p4j_error_clear(p4j_client *c, p4j_error *err);

/* Fills `err` with a bridge-side error of `kind` and a printf-style message.
 * Always returns P4J_ERROR so callers can `return p4j_error_set(...)`. */
p4j_status p4j_error_set(p4j_error *err, p4j_error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* P4J_CLIENT_H */
