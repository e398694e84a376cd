/* bridge/socket/socket_openssl.h - the OpenSSL functions the socket transport's TLS
 * calls, resolved at run time from the libssl already loaded in the process (the one
 * Python's ssl module runs on), never linked: the extension needs no libssl to load,
 * and TLS runs on exactly the library that made the caller's SSL_CTX. Every call goes
 * through p4j_ossl, which p4j_socket_tls_load (socket_transport.h) fills. Works with
 * OpenSSL 1.1.1 and 3.x. No OpenSSL header is needed to build: the opaque types and
 * the constants of OpenSSL's public ABI that py4jni uses are declared here (the same
 * in 1.1.1 and 3.x), and tests/c/test_socket_tls.c checks each against OpenSSL's own
 * headers (the release wheels are built against an old glibc, with no OpenSSL).
 */
#ifndef P4J_SOCKET_OPENSSL_H
#define P4J_SOCKET_OPENSSL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* OpenSSL's opaque types, as its headers name them (the same typedefs may repeat). */
typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct X509_VERIFY_PARAM_st X509_VERIFY_PARAM;

/* OpenSSL's constants (ssl.h, x509_vfy.h, tls1.h). */
#define P4J_SSL_ERROR_WANT_READ 2
#define P4J_SSL_ERROR_WANT_WRITE 3
#define P4J_SSL_ERROR_SYSCALL 5
#define P4J_SSL_ERROR_ZERO_RETURN 6
#define P4J_X509_V_OK 0
#define P4J_SSL_CTRL_SET_TLSEXT_HOSTNAME 55
#define P4J_TLSEXT_NAMETYPE_host_name 0
/* 3.x's library code of SSL errors and its reason "unexpected eof while reading". */
#define P4J_OSSL3_LIB_SSL 20UL
#define P4J_OSSL3_UNEXPECTED_EOF_WHILE_READING 294UL

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
    X(void *, SSL_CTX_get_keylog_callback, (const SSL_CTX *))                      \
    X(void, SSL_set_msg_callback, (SSL *, void (*)(int, int, int, const void *,    \
                                                   size_t, SSL *, void *)))        \
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
