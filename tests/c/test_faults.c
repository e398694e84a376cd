/* tests/c/test_faults.c - error paths of jni/ and bridge/inproc/ through named fault points
 * (jni/fault.h).
 *
 * Linked against p4j_inproc_faults (bridge/inproc/ and jni/ compiled with
 * P4J_FAULT_INJECTION). Each test
 * arms one point, checks that the failure surfaces as a clean error value with no
 * leaked reference, disarms it and checks that the same operation then succeeds.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fault.h"
#include "inproc.h"
#include "jvm.h"

static p4j_client *client;

static int setup(void **state)
{
    (void)state;
    p4j_jvm_options o = {.helper_jar = getenv("P4J_HELPER_JAR"),
                         .classpath = getenv("P4J_FIXTURES_JAR"), .check_jni = true};
    p4j_error err = {0};
    if (!o.helper_jar || !o.classpath || p4j_inproc_client_new(&o, &client, &err) != P4J_OK) {
        fprintf(stderr, "JVM start failed: %s\n", err.message ? err.message : "jars unset");
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    client->ops->shutdown(client);
    client->ops->destroy(client);
    return 0;
}

static p4j_status resolve(const char *fqn, p4j_value *out, p4j_error *err)
{
    return client->ops->resolve(client, NULL, fqn, out, err);
}

static p4j_status call_static(const p4j_value *cls, const char *name, const p4j_value *args,
                              size_t n, p4j_value *out, p4j_error *err)
{
    return client->ops->call(client, &cls->ref, P4J_CALL_STATIC, name, strlen(name), args, n,
                             out, err);
}

static void test_member_alloc(void **state)
{
    (void)state;
    p4j_value cls, out;
    p4j_error err = {0};
    assert_int_equal(resolve("java.lang.Math", &cls, &err), P4J_OK);
    p4j_value_clear(&cls);
    p4j_value arg = {.kind = P4J_INT};
    arg.u.i = -7;
    p4j_fault_arm("member.alloc");
    assert_int_equal(call_static(&cls, "abs", &arg, 1, &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_MEMORY);
    p4j_error_clear(client, &err);
    p4j_fault_arm(NULL);
    assert_int_equal(call_static(&cls, "abs", &arg, 1, &out, &err), P4J_OK);
    assert_int_equal(out.u.i, 7);
    client->ops->release(client, &cls.ref);
}

static void test_global_ref_failure_leaks_nothing(void **state)
{
    (void)state;
    p4j_value cls, obj;
    p4j_error err = {0};
    assert_int_equal(resolve("java.lang.StringBuilder", &cls, &err), P4J_OK);
    p4j_value_clear(&cls);
    assert_int_equal(client->ops->construct(client, &cls.ref, NULL, 0, &obj, &err), P4J_OK);
    client->ops->release(client, &obj.ref);
    long before = p4j_jvm_global_count();
    p4j_fault_arm("jvm.global_new");
    assert_int_equal(client->ops->construct(client, &cls.ref, NULL, 0, &obj, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_MEMORY);
    p4j_error_clear(client, &err);
    p4j_fault_arm(NULL);
    assert_int_equal(p4j_jvm_global_count(), before);
    assert_int_equal(client->ops->construct(client, &cls.ref, NULL, 0, &obj, &err), P4J_OK);
    client->ops->release(client, &obj.ref);
    client->ops->release(client, &cls.ref);
}

/* A byte[] result of a call (declared byte[], or Object) is handed over as the calling
 * thread's local reference: with global references failing, it still succeeds, and its
 * content is read once. */
static void test_bytes_result_needs_no_global_ref(void **state)
{
    (void)state;
    p4j_value cls, out, arg = {.kind = P4J_INT};
    p4j_error err = {0};
    arg.u.i = 300;
    assert_int_equal(resolve("org.py4jni.fixtures.Bytes", &cls, &err), P4J_OK);
    p4j_value_clear(&cls);
    /* declared byte[], and declared Object with a byte[] at run time */
    for (int k = 0; k < 2; k++) {
        const char *name = k ? "makeObject" : "make";
        assert_int_equal(call_static(&cls, name, &arg, 1, &out, &err), P4J_OK); /* resolved */
        assert_int_equal(client->ops->read_bytes(client, &out, NULL, &err), P4J_OK);
        long before = p4j_jvm_global_count();
        p4j_fault_arm("jvm.global_new");
        assert_int_equal(call_static(&cls, name, &arg, 1, &out, &err), P4J_OK);
        p4j_fault_arm(NULL);
        assert_int_equal(out.kind, P4J_BYTES);
        assert_int_equal(out.u.bytes.len, 300);
        uint8_t got[300];
        assert_int_equal(client->ops->read_bytes(client, &out, got, &err), P4J_OK);
        assert_null(out.ref.handle);
        for (int i = 0; i < 300; i++)
            assert_int_equal(got[i], (uint8_t)i);
        assert_int_equal(p4j_jvm_global_count(), before);
    }
    client->ops->release(client, &cls.ref);
}

static void test_string_alloc(void **state)
{
    (void)state;
    uint32_t text[1000];
    for (size_t i = 0; i < 1000; i++)
        text[i] = 'q';
    p4j_value cls, out, arg = {.kind = P4J_STRING};
    arg.u.s.data = text;
    arg.u.s.len = 1000;
    arg.u.s.enc = P4J_ENC_UCS4; /* converted through a heap buffer above 256 units */
    p4j_error err = {0};
    assert_int_equal(resolve("org.py4jni.fixtures.Strings", &cls, &err), P4J_OK);
    p4j_value_clear(&cls);
    p4j_fault_arm("string.alloc");
    assert_int_equal(call_static(&cls, "length", &arg, 1, &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_MEMORY);
    p4j_error_clear(client, &err);
    p4j_fault_arm(NULL);
    assert_int_equal(call_static(&cls, "length", &arg, 1, &out, &err), P4J_OK);
    assert_int_equal(out.u.i, 1000);
    client->ops->release(client, &cls.ref);
}

/* A caller-sensitive method whose plan fails: a clean error, no reference kept; then
 * the same call resolves and runs through CallerFrame. */
static void test_caller_plan(void **state)
{
    (void)state;
    p4j_value cls, out;
    p4j_error err = {0};
    assert_int_equal(resolve("java.lang.invoke.MethodHandles$Lookup", &cls, &err), P4J_OK);
    client->ops->release(client, &cls.ref); /* the result's class is registered for good */
    p4j_value_clear(&cls);
    assert_int_equal(resolve("java.lang.invoke.MethodHandles", &cls, &err), P4J_OK);
    p4j_value_clear(&cls);
    long before = p4j_jvm_global_count();
    p4j_fault_arm("caller.plan");
    assert_int_equal(call_static(&cls, "lookup", NULL, 0, &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    p4j_error_clear(client, &err);
    p4j_fault_arm(NULL);
    assert_int_equal(p4j_jvm_global_count(), before);
    assert_int_equal(call_static(&cls, "lookup", NULL, 0, &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_REF); /* a Lookup (JDK 19+: IllegalCallerException
                                          * without a Java caller) */
    client->ops->release(client, &out.ref);
    client->ops->release(client, &cls.ref);
}

static void test_class_lookup(void **state)
{
    (void)state;
    p4j_value cls, list, out;
    p4j_error err = {0};
    assert_int_equal(resolve("java.util.LinkedList", &cls, &err), P4J_OK);
    p4j_value_clear(&cls);
    assert_int_equal(client->ops->construct(client, &cls.ref, NULL, 0, &list, &err), P4J_OK);
    p4j_ref fresh = {.handle = list.ref.handle, .cls = NULL}; /* forces a class lookup */
    p4j_fault_arm("class.lookup");
    assert_int_equal(client->ops->call(client, &fresh, 0, "size", 4, NULL, 0, &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    p4j_error_clear(client, &err);
    p4j_fault_arm(NULL);
    assert_int_equal(client->ops->call(client, &fresh, 0, "size", 4, NULL, 0, &out, &err), P4J_OK);
    assert_int_equal(out.u.i, 0);
    client->ops->release(client, &list.ref);
    client->ops->release(client, &cls.ref);
}

static void *attach_and_call(void *arg)
{
    p4j_error *err = arg;
    p4j_value cls;
    p4j_status st = resolve("java.lang.Math", &cls, err);
    if (st == P4J_OK) {
        p4j_value_clear(&cls);
        client->ops->release(client, &cls.ref);
    }
    return (void *)(intptr_t)st;
}

static void test_attach_failure(void **state)
{
    (void)state;
    pthread_t t;
    void *st;
    p4j_error err = {0};
    p4j_fault_arm("jvm.attach");
    pthread_create(&t, NULL, attach_and_call, &err);
    pthread_join(t, &st);
    assert_int_equal((intptr_t)st, P4J_ERROR);
    assert_non_null(strstr(err.message, "attach"));
    p4j_error_clear(client, &err);
    p4j_fault_arm(NULL);
    pthread_create(&t, NULL, attach_and_call, &err);
    pthread_join(t, &st);
    assert_int_equal((intptr_t)st, P4J_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_member_alloc),
        cmocka_unit_test(test_global_ref_failure_leaks_nothing),
        cmocka_unit_test(test_bytes_result_needs_no_global_ref),
        cmocka_unit_test(test_string_alloc),
        cmocka_unit_test(test_caller_plan),
        cmocka_unit_test(test_class_lookup),
        cmocka_unit_test(test_attach_failure),
    };
    return cmocka_run_group_tests_name("faults", tests, setup, teardown);
}
