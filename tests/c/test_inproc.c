/* tests/c/test_inproc.c - the in-process transport (bridge/inproc/ on jni/) against a real
 * embedded JVM (one per binary).
 *
 * Needs P4J_HELPER_JAR and P4J_FIXTURES_JAR (set by ctest). Exercises the transport
 * API exactly as the Python binding uses it, with no Python involved.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inproc.h"
#include "inproc_internal.h"
#include "jvm.h"
#include "jvm_classes.h"

static p4j_client *client;

static int setup(void **state)
{
    (void)state;
    const char *helper = getenv("P4J_HELPER_JAR"), *fixtures = getenv("P4J_FIXTURES_JAR");
    if (!helper || !fixtures) {
        fprintf(stderr, "P4J_HELPER_JAR and P4J_FIXTURES_JAR must be set\n");
        return -1;
    }
    p4j_jvm_options o = {.helper_jar = helper, .classpath = fixtures, .check_jni = true};
    p4j_error err = {0};
    if (p4j_inproc_client_new(&o, &client, &err) != P4J_OK) {
        fprintf(stderr, "JVM start failed: %s\n", err.message);
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

/* Resolves class `fqn` into `out` (a CLASS value). */
static void resolve(const char *fqn, p4j_value *out)
{
    p4j_error err = {0};
    assert_int_equal(client->ops->resolve(client, NULL, fqn, out, &err), P4J_OK);
    assert_int_equal(out->kind, P4J_CLASS);
    p4j_value_clear(out);
}

static p4j_value str_arg(const char *utf8)
{
    p4j_value v = {.kind = P4J_STRING};
    v.u.s.data = utf8;
    v.u.s.len = strlen(utf8);
    v.u.s.enc = P4J_ENC_UTF8;
    return v;
}

static p4j_value int_arg(int32_t i)
{
    p4j_value v = {.kind = P4J_INT};
    v.u.i = i;
    return v;
}

static p4j_status call_static(const char *fqn, const char *name, const p4j_value *args,
                              size_t n, p4j_value *out, p4j_error *err)
{
    p4j_value cls;
    resolve(fqn, &cls);
    p4j_status st = client->ops->call(client, &cls.ref, P4J_CALL_STATIC, name, strlen(name),
                                      args, n, out, err);
    client->ops->release(client, &cls.ref);
    return st;
}

static void test_find_libjvm(void **state)
{
    (void)state;
    char out[4096];
    assert_true(p4j_jvm_find_libjvm(NULL, out, sizeof out));
    assert_non_null(strstr(out, "libjvm.so"));
    assert_false(p4j_jvm_find_libjvm("/no/such/libjvm.so", out, sizeof out));
    assert_non_null(strstr(out, "/no/such/libjvm.so"));
    assert_true(p4j_jvm_started());
}

static void test_resolve_class_and_package(void **state)
{
    (void)state;
    p4j_value out;
    p4j_error err = {0};
    assert_int_equal(client->ops->resolve(client, NULL, "java.util", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_PACKAGE);
    assert_int_equal(client->ops->resolve(client, NULL, "java.util.ArrayList", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_CLASS);
    assert_int_equal(out.u.s.enc, P4J_ENC_UTF16);
    assert_int_equal(out.u.s.len, strlen("java.util.ArrayList"));
    client->ops->release(client, &out.ref);
    p4j_value_clear(&out);
}

static void test_static_call(void **state)
{
    (void)state;
    p4j_value out;
    p4j_error err = {0};
    assert_int_equal(call_static("java.lang.System", "currentTimeMillis", NULL, 0, &out, &err),
                     P4J_OK);
    assert_int_equal(out.kind, P4J_LONG);
    assert_true(out.u.l > 1600000000000LL);
    p4j_value args[2] = {int_arg(3), int_arg(9)};
    assert_int_equal(call_static("java.lang.Math", "max", args, 2, &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_INT);
    assert_int_equal(out.u.i, 9);
}

static void test_construct_and_instance_calls(void **state)
{
    (void)state;
    p4j_value cls, sb, out;
    p4j_error err = {0};
    resolve("java.lang.StringBuilder", &cls);
    p4j_value a = str_arg("a");
    assert_int_equal(client->ops->construct(client, &cls.ref, &a, 1, &sb, &err), P4J_OK);
    assert_int_equal(sb.kind, P4J_REF);
    p4j_value i = int_arg(42);
    assert_int_equal(client->ops->call(client, &sb.ref, 0, "append", 6, &i, 1, &out, &err), P4J_OK);
    client->ops->release(client, &out.ref);
    assert_int_equal(client->ops->call(client, &sb.ref, 0, "toString", 8, NULL, 0, &out, &err),
                     P4J_OK);
    assert_int_equal(out.kind, P4J_STRING);
    assert_int_equal(out.u.s.len, 3);
    const uint16_t *u = out.u.s.data;
    assert_true(u[0] == 'a' && u[1] == '4' && u[2] == '2');
    p4j_value_clear(&out);
    client->ops->release(client, &sb.ref);
    client->ops->release(client, &cls.ref);
}

static void test_strings_nul_and_supplementary(void **state)
{
    (void)state;
    /* "a\0b" + U+1F600 as UTF-16: NUL and a surrogate pair must survive. */
    static const uint16_t text[] = {'a', 0, 'b', 0xD83D, 0xDE00};
    p4j_value arg = {.kind = P4J_STRING};
    arg.u.s.data = text;
    arg.u.s.len = 5;
    arg.u.s.enc = P4J_ENC_UTF16;
    p4j_value out;
    p4j_error err = {0};
    assert_int_equal(call_static("org.py4jni.fixtures.Strings", "echo", &arg, 1, &out, &err),
                     P4J_OK);
    assert_int_equal(out.u.s.len, 5);
    assert_memory_equal(out.u.s.data, text, sizeof text);
    p4j_value_clear(&out);
    /* UCS-4 and Latin-1 inputs convert exactly too. */
    static const uint32_t ucs4[] = {0x1F600, 'x'};
    arg.u.s.data = ucs4;
    arg.u.s.len = 2;
    arg.u.s.enc = P4J_ENC_UCS4;
    assert_int_equal(call_static("org.py4jni.fixtures.Strings", "length", &arg, 1, &out, &err),
                     P4J_OK);
    assert_int_equal(out.u.i, 3); /* a pair + one unit */
    /* Malformed UTF-8 is refused, not passed on. */
    p4j_value bad = str_arg("\xC3");
    assert_int_equal(call_static("org.py4jni.fixtures.Strings", "echo", &bad, 1, &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    p4j_error_clear(client, &err);
}

static void test_bytes_result(void **state)
{
    (void)state;
    p4j_value n = int_arg(1000), out;
    p4j_error err = {0};
    assert_int_equal(call_static("org.py4jni.fixtures.Bytes", "make", &n, 1, &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_BYTES);
    assert_int_equal(out.u.bytes.len, 1000);
    uint8_t buf[1000];
    assert_int_equal(client->ops->read_bytes(client, &out, buf, &err), P4J_OK);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(buf[i], i & 0xff);
    p4j_value arg = {.kind = P4J_BYTES};
    arg.u.bytes.data = buf;
    arg.u.bytes.len = 1000;
    assert_int_equal(call_static("org.py4jni.fixtures.Bytes", "length", &arg, 1, &out, &err), P4J_OK);
    assert_int_equal(out.u.i, 1000);
}

static void test_java_exception_is_captured(void **state)
{
    (void)state;
    p4j_value msg = str_arg("boom"), out, trace;
    p4j_error err = {0};
    assert_int_equal(call_static("org.py4jni.fixtures.Thrower", "unchecked", &msg, 1, &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_JAVA);
    assert_string_equal(err.java_class, "java.lang.IllegalStateException");
    assert_non_null(strstr(err.message, "boom"));
    assert_non_null(err.throwable.handle);
    p4j_error err2 = {0};
    assert_int_equal(client->ops->stack_trace(client, &err.throwable, &trace, &err2), P4J_OK);
    assert_true(trace.u.s.len > 20);
    p4j_value_clear(&trace);
    p4j_error_clear(client, &err);
    assert_null(err.throwable.handle);
}

/* P4J_CALL_NO_ERROR_TEXT: a Java exception comes as its throwable alone (no toString or
 * getName call); a bridge error keeps its message. */
static void test_java_exception_without_text(void **state)
{
    (void)state;
    p4j_value cls, msg = str_arg("boom"), out;
    p4j_error err = {0};
    resolve("org.py4jni.fixtures.Thrower", &cls);
    assert_int_equal(client->ops->call(client, &cls.ref, P4J_CALL_STATIC | P4J_CALL_NO_ERROR_TEXT,
                                       "unchecked", 9, &msg, 1, &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_JAVA);
    assert_null(err.message);
    assert_null(err.java_class);
    assert_non_null(err.throwable.handle);
    p4j_error_clear(client, &err);
    assert_int_equal(client->ops->call(client, &cls.ref, P4J_CALL_STATIC | P4J_CALL_NO_ERROR_TEXT,
                                       "noSuchMethod", 12, NULL, 0, &out, &err),
                     P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "noSuchMethod"));
    p4j_error_clear(client, &err);
    client->ops->release(client, &cls.ref);
}

/* The allowlist of calls that may keep the GIL: by declaring class, name and plain
 * parameters (primitive or String, or given a JDK value: null, a box, a String). */
static void test_short_call_allowlist(void **state)
{
    (void)state;
    assert_true(p4jj_short_call("java.lang.Math", "max", "(JJ)J", NULL));
    assert_true(p4jj_short_call("java.lang.System", "currentTimeMillis", "()J", NULL));
    assert_true(p4jj_short_call("java.lang.StringBuilder", "append",
                                "(Ljava/lang/String;)Ljava/lang/StringBuilder;", NULL));
    assert_true(p4jj_short_call("java.lang.StringBuilder", "append", "(I)Ljava/lang/StringBuilder;", NULL));
    /* a parameter that could be a Python proxy: toString()/charAt() may call back */
    assert_false(p4jj_short_call("java.lang.StringBuilder", "append",
                                 "(Ljava/lang/Object;)Ljava/lang/StringBuilder;", NULL));
    assert_false(p4jj_short_call("java.lang.StringBuilder", "append",
                                 "(Ljava/lang/CharSequence;)Ljava/lang/StringBuilder;", NULL));
    assert_false(p4jj_short_call("java.lang.StringBuilder", "append", "([C)Ljava/lang/StringBuilder;", NULL));
    assert_false(p4jj_short_call("java.lang.Object", "wait", "(J)V", NULL));            /* blocks */
    assert_false(p4jj_short_call("java.lang.StringBuffer", "append", "(I)Ljava/lang/StringBuffer;", NULL));
    assert_false(p4jj_short_call("java.lang.System", "exit", "(I)V", NULL));
    assert_false(p4jj_short_call("java.lang.String", "matches", "(Ljava/lang/String;)Z", NULL));
    assert_false(p4jj_short_call("java.lang.String", "repeat", "(I)Ljava/lang/String;", NULL));
    assert_false(p4jj_short_call("java.lang.Thread", "sleep", "(J)V", NULL));
    assert_false(p4jj_short_call(NULL, "max", "(JJ)J", NULL));
    /* an Object parameter: short only for arguments that reach Java as JDK values */
    const char *hash = "(Ljava/lang/Object;)I", *eq = "(Ljava/lang/Object;Ljava/lang/Object;)Z";
    assert_true(p4jj_short_call("java.util.Objects", "hashCode", hash, "s"));
    assert_true(p4jj_short_call("java.util.Objects", "hashCode", hash, "n"));
    assert_true(p4jj_short_call("java.util.Objects", "equals", eq, "iL"));
    assert_false(p4jj_short_call("java.util.Objects", "hashCode", hash, "r"));  /* user code */
    assert_false(p4jj_short_call("java.util.Objects", "hashCode", hash, "f"));  /* a proxy */
    assert_false(p4jj_short_call("java.util.Objects", "equals", eq, "sr"));
    assert_false(p4jj_short_call("java.util.Objects", "equals", eq, "s"));      /* too few */
    assert_false(p4jj_short_call("java.util.Objects", "hashCode", hash, "j"));
    assert_false(p4jj_short_call("java.util.Objects", "hashCode", hash, NULL));
    assert_false(p4jj_short_call("java.util.Objects", "compare",
                                 "(Ljava/lang/Object;Ljava/lang/Object;Ljava/util/Comparator;)I",
                                 "ssn"));                                  /* not listed */
    assert_true(p4jj_short_call("java.lang.StringBuilder", "append",
                                "(Ljava/lang/Object;)Ljava/lang/StringBuilder;", "d"));
    assert_false(p4jj_short_call("java.lang.StringBuilder", "append",
                                 "([C)Ljava/lang/StringBuilder;", "r"));
}

/* call_at: a site reused for another target class or other argument kinds resolves
 * again instead of reusing the method it holds. */
static void test_call_site_is_checked(void **state)
{
    (void)state;
    p4j_value sbcls, lcls, sb, lst, out, text = str_arg("ab"), i7 = int_arg(7);
    p4j_error err = {0};
    void *site = NULL;
    resolve("java.lang.StringBuilder", &sbcls);
    resolve("java.util.ArrayList", &lcls);
    assert_int_equal(client->ops->construct(client, &sbcls.ref, &text, 1, &sb, &err), P4J_OK);
    assert_int_equal(client->ops->construct(client, &lcls.ref, NULL, 0, &lst, &err), P4J_OK);
    assert_int_equal(client->ops->call_at(client, &site, &sb.ref, 0, "toString", 8, NULL, 0,
                                          &out, &err), P4J_OK);
    assert_non_null(site);
    assert_int_equal(out.kind, P4J_STRING);
    p4j_value_clear(&out);
    /* the same site on an ArrayList: ArrayList.toString, not StringBuilder's */
    assert_int_equal(client->ops->call_at(client, &site, &lst.ref, 0, "toString", 8, NULL, 0,
                                          &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_STRING);
    assert_int_equal(out.u.s.len, 2); /* "[]" */
    p4j_value_clear(&out);
    /* append(String) then append(int) through one site: each its own overload */
    void *append = NULL;
    assert_int_equal(client->ops->call_at(client, &append, &sb.ref, 0, "append", 6, &text, 1,
                                          &out, &err), P4J_OK);
    p4j_value_clear(&out);
    assert_int_equal(client->ops->call_at(client, &append, &sb.ref, 0, "append", 6, &i7, 1,
                                          &out, &err), P4J_OK);
    p4j_value_clear(&out);
    /* a site copied to another name: length, not append */
    assert_int_equal(client->ops->call_at(client, &append, &sb.ref, 0, "length", 6, NULL, 0,
                                          &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_INT);
    assert_int_equal(out.u.i, 5); /* "ab" + "ab" + "7" */
    client->ops->release(client, &sb.ref);
    client->ops->release(client, &lst.ref);
    client->ops->release(client, &sbcls.ref);
    client->ops->release(client, &lcls.ref);
}

static void test_bridge_errors(void **state)
{
    (void)state;
    p4j_value out;
    p4j_error err = {0};
    assert_int_equal(call_static("java.lang.Math", "noSuchMethod", NULL, 0, &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_BRIDGE);
    assert_non_null(strstr(err.message, "noSuchMethod"));
    p4j_error_clear(client, &err);
    /* 300 does not fit a byte: an error, not truncation. */
    p4j_value cls, ov, big = int_arg(300);
    resolve("org.py4jni.fixtures.Overloads", &cls);
    assert_int_equal(client->ops->construct(client, &cls.ref, NULL, 0, &ov, &err), P4J_OK);
    assert_int_equal(client->ops->call(client, &ov.ref, 0, "byteOnly", 8, &big, 1, &out, &err),
                     P4J_ERROR);
    assert_non_null(strstr(err.message, "out of range"));
    p4j_error_clear(client, &err);
    /* A null target is refused. */
    p4j_ref null_ref = {0};
    assert_int_equal(client->ops->call(client, &null_ref, 0, "x", 1, NULL, 0, &out, &err), P4J_ERROR);
    p4j_error_clear(client, &err);
    client->ops->release(client, &ov.ref);
    client->ops->release(client, &cls.ref);
}

/* Conversions check what they convert: a JavaObject never becomes a char (this read a
 * REF as string data: heap-use-after-free) nor a Character (type confusion). */
static void test_conversions_check_their_input(void **state)
{
    (void)state;
    assert_int_equal(p4j_conv_for("C", 'r'), CONV_INVALID);
    assert_int_equal(p4j_conv_for("C", 's'), CONV_C);
    assert_int_equal(p4j_conv_for("I", 'd'), CONV_INVALID);
    assert_int_equal(p4j_conv_for("J", 'L'), CONV_J);
    assert_int_equal(p4j_conv_for("Z", 'i'), CONV_INVALID);
    p4j_value cls, sb, out;
    p4j_error err = {0};
    resolve("java.lang.StringBuilder", &cls);
    p4j_value text = str_arg("abc");
    assert_int_equal(client->ops->construct(client, &cls.ref, &text, 1, &sb, &err), P4J_OK);
    JNIEnv *env = p4j_jvm_env(&err);
    assert_non_null(env);
    p4jj_member plan = {.nargs = 1};
    plan.keys[0] = 'r';
    plan.conv[0] = CONV_C; /* a plan that planning would refuse: the conversion refuses too */
    jvalue j;
    assert_int_equal(p4j_args_to_java(env, &plan, &sb, &j, &err), P4J_ERROR);
    assert_non_null(strstr(err.message, "a JavaObject cannot be a Java char"));
    p4j_error_clear(client, &err);
    /* A failure after an argument that made a reference deletes that one and reads no
     * slot past the failure (-Xcheck:jni aborts on a bad ref passed to DeleteLocalRef). */
    p4jj_member two = {.nargs = 2};
    two.keys[0] = 's';
    two.conv[0] = CONV_STRING;
    two.keys[1] = 'y';
    two.conv[1] = CONV_BYTES; /* refused before a byte[] is made: too long */
    p4j_value pair[2] = {str_arg("xyz"), {.kind = P4J_BYTES}};
    pair[1].u.bytes.len = (size_t)INT32_MAX + 1;
    jvalue js[2] = {{.l = NULL}, {.l = (jobject)(uintptr_t)0x8}}; /* slot 1: not a ref */
    assert_int_equal(p4j_args_to_java(env, &two, pair, js, &err), P4J_ERROR);
    assert_non_null(js[0].l); /* the String was made, then deleted */
    assert_non_null(err.message);
    p4j_error_clear(client, &err);
    jclass sbcls = (*env)->GetObjectClass(env, (jobject)sb.ref.handle);
    assert_int_equal(p4j_check_conversion(env, CONV_REF, 'r', sbcls, p4j_jc.Character, &err),
                     P4J_ERROR);
    assert_non_null(strstr(err.message, "java.lang.StringBuilder"));
    assert_non_null(strstr(err.message, "java.lang.Character"));
    p4j_error_clear(client, &err);
    assert_int_equal(p4j_check_conversion(env, CONV_REF, 'r', sbcls, p4j_jc.Object, &err), P4J_OK);
    assert_int_equal(p4j_check_conversion(env, CONV_BOX_I, 'i', NULL, p4j_jc.String, &err),
                     P4J_ERROR);
    p4j_error_clear(client, &err);
    (*env)->DeleteLocalRef(env, sbcls);
    /* Through the resolver: no char overload for a StringBuilder, the whole of it. */
    assert_int_equal(client->ops->call(client, &sb.ref, 0, "append", 6, &sb, 1, &out, &err), P4J_OK);
    p4j_value_clear(&out);
    assert_int_equal(client->ops->call(client, &sb.ref, 0, "toString", 8, NULL, 0, &out, &err),
                     P4J_OK);
    assert_int_equal(out.kind, P4J_STRING);
    assert_int_equal(out.u.s.len, 6); /* "abcabc", not "abca" */
    p4j_value_clear(&out);
    client->ops->release(client, &sb.ref);
    client->ops->release(client, &cls.ref);
}

static void test_fields(void **state)
{
    (void)state;
    p4j_value cls, obj, out;
    p4j_error err = {0};
    resolve("org.py4jni.fixtures.Fields", &cls);
    assert_int_equal(client->ops->construct(client, &cls.ref, NULL, 0, &obj, &err), P4J_OK);
    assert_int_equal(client->ops->field_get(client, &obj.ref, 0, "i", &out, &err), P4J_OK);
    assert_int_equal(out.u.i, 3);
    p4j_value v = int_arg(11);
    assert_int_equal(client->ops->field_set(client, &obj.ref, 0, "i", &v, &err), P4J_OK);
    assert_int_equal(client->ops->field_get(client, &obj.ref, 0, "i", &out, &err), P4J_OK);
    assert_int_equal(out.u.i, 11);
    assert_int_equal(client->ops->field_set(client, &obj.ref, 0, "finalInt", &v, &err), P4J_ERROR);
    p4j_error_clear(client, &err);
    assert_int_equal(client->ops->field_get(client, &cls.ref, P4J_CALL_STATIC, "CONSTANT", &out, &err),
                     P4J_OK);
    assert_int_equal(out.u.i, 42);
    assert_int_equal(client->ops->static_member(client, &cls.ref, "resetStatics", &out, &err), P4J_OK);
    assert_int_equal(out.kind, P4J_METHOD);
    client->ops->release(client, &obj.ref);
    client->ops->release(client, &cls.ref);
}

static void *thread_call(void *arg)
{
    long *result = arg;
    p4j_value out;
    p4j_error err = {0};
    p4j_value a = int_arg(-5);
    *result = call_static("java.lang.Math", "abs", &a, 1, &out, &err) == P4J_OK ? out.u.i : -1;
    return NULL;
}

static void test_other_threads_attach(void **state)
{
    (void)state;
    pthread_t t[4];
    long results[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, thread_call, &results[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(results[i], 5);
    }
}

static void test_refs_are_released(void **state)
{
    (void)state;
    p4j_value cls, obj;
    p4j_error err = {0};
    resolve("java.lang.StringBuilder", &cls);
    assert_int_equal(client->ops->construct(client, &cls.ref, NULL, 0, &obj, &err), P4J_OK);
    client->ops->release(client, &obj.ref);
    long before = p4j_jvm_global_count();
    for (int i = 0; i < 10000; i++) {
        assert_int_equal(client->ops->construct(client, &cls.ref, NULL, 0, &obj, &err), P4J_OK);
        client->ops->release(client, &obj.ref);
    }
    assert_int_equal(p4j_jvm_global_count(), before);
    client->ops->release(client, &cls.ref);
}

static void test_float_as_printed(void **state)
{
    (void)state;
    assert_true(p4j_float_as_printed(0.1f) == 0.1);
    assert_true(p4j_float_as_printed(1.5f) == 1.5);
    assert_true(p4j_float_as_printed(3.4028235e38f) == 3.4028235e38);
    assert_true(p4j_float_as_printed(0.0f) == 0.0);
}

static void test_value_helpers(void **state)
{
    (void)state;
    assert_int_equal(p4j_kind_letter(P4J_LIST), 'l');
    assert_int_equal(p4j_kind_letter(P4J_CLASS), 0);
    assert_string_equal(p4j_kind_name(P4J_BYTES), "P4J_BYTES");
    assert_true(p4j_kind_has_ref(P4J_MAP));
    assert_false(p4j_kind_has_ref(P4J_STRING));
    p4j_value v;
    assert_int_equal(p4j_value_set_string(&v, P4J_STRING, "short", 5, P4J_ENC_UTF8), 0);
    assert_null(v.owned); /* inline */
    char big[200];
    memset(big, 'x', sizeof big);
    assert_int_equal(p4j_value_set_string(&v, P4J_STRING, big, sizeof big, P4J_ENC_UTF8), 0);
    assert_non_null(v.owned);
    assert_memory_equal(v.u.s.data, big, sizeof big);
    p4j_value_clear(&v);
    assert_null(v.owned);
}

static void test_closed_client(void **state)
{
    (void)state;
    p4j_jvm_options o = {.helper_jar = getenv("P4J_HELPER_JAR"),
                         .classpath = getenv("P4J_FIXTURES_JAR"), .check_jni = true};
    p4j_client *second;
    p4j_error err = {0};
    assert_int_equal(p4j_inproc_client_new(&o, &second, &err), P4J_OK);
    second->ops->shutdown(second);
    p4j_value out;
    assert_int_equal(second->ops->resolve(second, NULL, "java.lang.String", &out, &err), P4J_ERROR);
    assert_int_equal(err.kind, P4J_ERR_CLOSED);
    p4j_error_clear(second, &err);
    second->ops->destroy(second);
    /* A conflicting classpath is refused with a clear message. */
    o.classpath = "/elsewhere.jar";
    assert_int_equal(p4j_inproc_client_new(&o, &second, &err), P4J_ERROR);
    assert_non_null(strstr(err.message, "already running"));
    p4j_error_clear(NULL, &err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_libjvm),
        cmocka_unit_test(test_resolve_class_and_package),
        cmocka_unit_test(test_static_call),
        cmocka_unit_test(test_construct_and_instance_calls),
        cmocka_unit_test(test_strings_nul_and_supplementary),
        cmocka_unit_test(test_bytes_result),
        cmocka_unit_test(test_java_exception_is_captured),
        cmocka_unit_test(test_java_exception_without_text),
        cmocka_unit_test(test_short_call_allowlist),
        cmocka_unit_test(test_call_site_is_checked),
        cmocka_unit_test(test_bridge_errors),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_conversions_check_their_input),
        cmocka_unit_test(test_other_threads_attach),
        cmocka_unit_test(test_refs_are_released),
        cmocka_unit_test(test_float_as_printed),
        cmocka_unit_test(test_value_helpers),
        cmocka_unit_test(test_closed_client),
    };
    return cmocka_run_group_tests_name("inproc", tests, setup, teardown);
}
