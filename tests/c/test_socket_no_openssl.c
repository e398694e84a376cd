/* tests/c/test_socket_no_openssl.c - TLS asked of the socket transport in a process
 * that has no OpenSSL loaded (this test links none): p4j_socket_tls_load and
 * p4j_socket_client_set_tls fail with P4J_ERR_BRIDGE saying so, the context is not
 * touched, and plain connections still work (a client is made and destroyed). */
#define _GNU_SOURCE 1
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "socket_client.h"

static int count_libssl(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (strstr(info->dlpi_name, "libssl.so"))
        ++*(int *)data;
    return 0;
}

static void test_no_libssl_is_a_clear_error(void **state)
{
    (void)state;
    int n = 0;
    dl_iterate_phdr(count_libssl, &n);
    assert_int_equal(n, 0); /* the premise: nothing in this process loaded OpenSSL */

    p4j_error err = {0};
    assert_int_equal(p4j_socket_tls_load(&err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "no OpenSSL library (libssl.so) is loaded"));
    p4j_error_clear(NULL, &err);
    assert_null(p4j_socket_tls_function("SSL_new"));

    p4j_client *c;
    assert_int_equal(p4j_socket_client_new("127.0.0.1", 25333, NULL, 1, &c, &err), P4J_OK);
    /* never dereferenced: the transport fails before it would take a reference */
    struct ssl_ctx_st *bogus = (struct ssl_ctx_st *)(uintptr_t)0x10;
    assert_int_equal(p4j_socket_client_set_tls(c, bogus, "localhost", true, NULL, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "no OpenSSL library"));
    p4j_error_clear(NULL, &err);
    /* no context: plain TCP, which needs no OpenSSL */
    assert_int_equal(p4j_socket_client_set_tls(c, NULL, NULL, false, NULL, &err), P4J_OK);
    c->ops->destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_libssl_is_a_clear_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
