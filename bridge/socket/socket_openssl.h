/* bridge/socket/socket_openssl.h - the OpenSSL functions the socket transport's TLS
 * calls, resolved at run time from the libssl already loaded in the process (the one
 * Python's ssl module runs on), never linked: the extension needs no libssl to load,
 * and TLS runs on exactly the library that made the caller's SSL_CTX. OpenSSL's headers
 * give the types and constants only; every call goes through p4j_ossl, which
 * p4j_socket_tls_load (socket_transport.h) fills. Works with OpenSSL 1.1.1 and 3.x.
 */
#ifndef P4J_SOCKET_OPENSSL_H
#define P4J_SOCKET_OPENSSL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/* One row per function: return type, OpenSSL's name, parameters. SSL_CTX_get_options
 * returns unsigned long in 1.1.1 and uint64_t in 3.x: the same 64-bit register on the
 * LP64 targets py4jni builds for. SSL_set_tlsext_host_name is a macro over SSL_ctrl. */
#define P4J_OPENSSL_FUNCS(X)                                                       \
    X(SSL *, SSL_new, (SSL_CTX *))                                                 \
    X(void, SSL_free, (SSL *))                                                     \
    X(int, SSL_set_fd, (SSL *, int))                                               \
    X(int, SSL_connect, (SSL *))                                                   \
    X(int, SSL_accept, (SSL *))                                                    \
    X(int, SSL_read_ex, (SSL *, void *, size_t, size_t *))                         \
    X(int, SSL_write_ex, (SSL *, const void *, size_t, size_t *))                  \
    X(int, SSL_peek_ex, (SSL *, void *, size_t, size_t *))                         \
    X(int, SSL_pending, (const SSL *))                                             \
    X(int, SSL_get_error, (const SSL *, int))                                      \
    X(long, SSL_get_verify_result, (const SSL *))                                  \
    X(X509_VERIFY_PARAM *, SSL_get0_param, (SSL *))                                \
    X(int, SSL_set1_host, (SSL *, const char *))                                   \
    X(long, SSL_ctrl, (SSL *, int, long, void *))                                  \
    X(int, SSL_CTX_up_ref, (SSL_CTX *))                                            \
    X(void, SSL_CTX_free, (SSL_CTX *))                                             \
    X(uint64_t, SSL_CTX_get_options, (const SSL_CTX *))                            \
    X(int, X509_VERIFY_PARAM_set1_ip_asc, (X509_VERIFY_PARAM *, const char *))     \
    X(const char *, X509_verify_cert_error_string, (long))                         \
    X(void, ERR_clear_error, (void))                                               \
    X(unsigned long, ERR_peek_error, (void))                                       \
    X(void, ERR_error_string_n, (unsigned long, char *, size_t))                   \
    X(unsigned long, OpenSSL_version_num, (void))

/* The resolved functions (fields named as OpenSSL names them) and the library's
 * version (OpenSSL_version_num()). Written once by p4j_socket_tls_load before any
 * client holds an SSL_CTX; read-only afterwards. */
typedef struct p4j_openssl {
#define P4J_OPENSSL_FIELD(ret, name, params) ret(*name) params;
    P4J_OPENSSL_FUNCS(P4J_OPENSSL_FIELD)
#undef P4J_OPENSSL_FIELD
    unsigned long version;
} p4j_openssl;

extern p4j_openssl p4j_ossl;

/* True when OpenSSL error `code` (ERR_peek_error) is 3.x's "unexpected eof while
 * reading" (the peer closed TCP without close_notify). 1.1.1 has no such error: there
 * the same event is SSL_ERROR_SYSCALL with nothing queued. */
bool p4j_ossl_unexpected_eof(unsigned long code);

#endif /* P4J_SOCKET_OPENSSL_H */
