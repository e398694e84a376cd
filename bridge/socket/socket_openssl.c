/* bridge/socket/socket_openssl.c - finds the libssl loaded in this process and resolves
 * the transport's OpenSSL functions from it (socket_openssl.h, P4J_OPENSSL_FUNCS).
 * Nothing is loaded that the process did not load already: dlopen with RTLD_NOLOAD only
 * pins the library found. The handle is never closed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "socket_openssl.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "socket_transport.h"

p4j_openssl p4j_ossl;

static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;
static bool loaded; /* p4j_ossl is complete (written under load_mu, then read-only) */

/* 3.x packs an error code as: bit 31 system error, bits 23-30 library, bits 0-22 reason
 * (1.1.1 packed library in 24-31, reason in 0-11). The constants are 3.x's. */
#define OSSL3_SYSTEM_FLAG 0x80000000UL
#define OSSL3_LIB(code) (((code) >> 23) & 0xFFUL)
#define OSSL3_REASON(code) ((code) & 0x7FFFFFUL)
#define OSSL_LIB_SSL P4J_OSSL3_LIB_SSL
#define OSSL3_UNEXPECTED_EOF_WHILE_READING P4J_OSSL3_UNEXPECTED_EOF_WHILE_READING

bool p4j_ossl_unexpected_eof(unsigned long code)
{
    if (p4j_ossl.version < 0x30000000UL || (code & OSSL3_SYSTEM_FLAG))
        return false;
    return OSSL3_LIB(code) == OSSL_LIB_SSL &&
           OSSL3_REASON(code) == OSSL3_UNEXPECTED_EOF_WHILE_READING;
}

/* What find_libssl saw: how many libssl.so* objects are loaded, and the first one's path. */
typedef struct {
    int n;
    char path[512];
} libssl_seen;

static int find_libssl(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    libssl_seen *s = data;
    const char *slash = strrchr(info->dlpi_name, '/');
    if (strncmp(slash ? slash + 1 : info->dlpi_name, "libssl.so", 9) != 0)
        return 0;
    if (s->n++ == 0)
        snprintf(s->path, sizeof s->path, "%s", info->dlpi_name);
    return 0;
}

/* Resolves every row of P4J_OPENSSL_FUNCS from `h` (the libssl and, through it, its
 * libcrypto) into p4j_ossl; fails naming the first missing function. */
static p4j_status resolve(void *h, const char *path, p4j_error *err)
{
    p4j_openssl t;
    void *sym;
#define P4J_OPENSSL_RESOLVE(ret, name, params)                                              \
    if (!(sym = dlsym(h, #name)))                                                           \
        return p4j_error_set(err, P4J_ERR_BRIDGE,                                           \
                             "TLS needs OpenSSL 1.1.1 or later: %s has no function " #name, \
                             path);                                                         \
    memcpy(&t.name, &sym, sizeof t.name);
    P4J_OPENSSL_FUNCS(P4J_OPENSSL_RESOLVE)
#undef P4J_OPENSSL_RESOLVE
    t.version = t.OpenSSL_version_num();
    if (t.version < 0x10101000UL)
        return p4j_error_set(err, P4J_ERR_BRIDGE, "TLS needs OpenSSL 1.1.1 or later: %s is "
                             "version %#lx", path, t.version);
    p4j_ossl = t;
    return P4J_OK;
}

p4j_status p4j_socket_tls_load(p4j_error *err)
{
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE))
        return P4J_OK;
    p4j_status st = P4J_OK;
    pthread_mutex_lock(&load_mu);
    if (!loaded) {
        libssl_seen s = {0};
        dl_iterate_phdr(find_libssl, &s);
        void *h = NULL;
        if (s.n == 0)
            st = p4j_error_set(err, P4J_ERR_BRIDGE, "no OpenSSL library (libssl.so) is loaded "
                               "in this process (TLS runs on the OpenSSL of Python's ssl "
                               "module, or of the program that made the SSL_CTX)");
        else if (s.n > 1)
            st = p4j_error_set(err, P4J_ERR_BRIDGE, "%d OpenSSL libraries (libssl.so) are "
                               "loaded in this process; TLS needs exactly one", s.n);
        else if (!(h = dlopen(s.path, RTLD_NOW | RTLD_NOLOAD)))
            st = p4j_error_set(err, P4J_ERR_BRIDGE, "cannot open the loaded OpenSSL %s: %s",
                               s.path, dlerror());
        else if ((st = resolve(h, s.path, err)) != P4J_OK)
            dlclose(h);
        if (st == P4J_OK)
            __atomic_store_n(&loaded, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&load_mu);
    return st;
}

void *p4j_socket_tls_function(const char *name)
{
    if (!__atomic_load_n(&loaded, __ATOMIC_ACQUIRE) || !name)
        return NULL;
    void *p = NULL;
#define P4J_OPENSSL_LOOKUP(ret, fn, params)                                                  \
    if (!strcmp(name, #fn))                                                                  \
        memcpy(&p, &p4j_ossl.fn, sizeof p);
    P4J_OPENSSL_FUNCS(P4J_OPENSSL_LOOKUP)
#undef P4J_OPENSSL_LOOKUP
    return p;
}

uint64_t p4j_socket_tls_ctx_options(const struct ssl_ctx_st *ctx)
{
    return p4j_ossl.SSL_CTX_get_options(ctx);
}
