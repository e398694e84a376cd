/* jni/jvm_classes.h - every class, method ID and field ID py4jni caches, in one list.
 *
 * Resolved once, right after the JVM starts (p4j_classes_init); a missing row fails
 * start-up with its name. Entries are global refs / IDs valid for the process life and
 * readable from any thread without locks once init has returned.
 */
#ifndef P4J_JVM_CLASSES_H
#define P4J_JVM_CLASSES_H

#include <jni.h>

#include "client.h"

/* X(field, "binary/name") */
#define P4J_CLASS_TABLE(X)                                   \
    X(Object, "java/lang/Object")                            \
    X(String, "java/lang/String")                            \
    X(Class, "java/lang/Class")                              \
    X(Throwable, "java/lang/Throwable")                      \
    X(Boolean, "java/lang/Boolean")                          \
    X(Byte, "java/lang/Byte")                                \
    X(Character, "java/lang/Character")                      \
    X(Short, "java/lang/Short")                              \
    X(Integer, "java/lang/Integer")                          \
    X(Long, "java/lang/Long")                                \
    X(Float, "java/lang/Float")                              \
    X(Double, "java/lang/Double")                            \
    X(Number, "java/lang/Number")                            \
    X(Charset, "java/nio/charset/Charset")                   \
    X(Executable, "java/lang/reflect/Executable")            \
    X(Field, "java/lang/reflect/Field")                      \
    X(Method, "java/lang/reflect/Method")                    \
    X(ByteArray, "[B")                                       \
    X(Bridge, "org/py4jni/Bridge")                           \
    X(BridgeException, "org/py4jni/BridgeException")         \
    X(JVMView, "org/py4jni/JVMView")

/* X(field, class, is_static, "name", "signature") */
#define P4J_METHOD_TABLE(X)                                                                  \
    X(Object_toString, Object, 0, "toString", "()Ljava/lang/String;")                        \
    X(Class_getName, Class, 0, "getName", "()Ljava/lang/String;")                            \
    X(Class_getModifiers, Class, 0, "getModifiers", "()I")                                   \
    X(Method_getReturnType, Method, 0, "getReturnType", "()Ljava/lang/Class;")               \
    X(Executable_getModifiers, Executable, 0, "getModifiers", "()I")                         \
    X(Executable_getParameterTypes, Executable, 0, "getParameterTypes", "()[Ljava/lang/Class;") \
    X(Executable_getDeclaringClass, Executable, 0, "getDeclaringClass", "()Ljava/lang/Class;") \
    X(Field_getType, Field, 0, "getType", "()Ljava/lang/Class;")                             \
    X(Field_getModifiers, Field, 0, "getModifiers", "()I")                                   \
    X(Throwable_getMessage, Throwable, 0, "getMessage", "()Ljava/lang/String;")              \
    X(Boolean_valueOf, Boolean, 1, "valueOf", "(Z)Ljava/lang/Boolean;")                      \
    X(Byte_valueOf, Byte, 1, "valueOf", "(B)Ljava/lang/Byte;")                               \
    X(Character_valueOf, Character, 1, "valueOf", "(C)Ljava/lang/Character;")                \
    X(Short_valueOf, Short, 1, "valueOf", "(S)Ljava/lang/Short;")                            \
    X(Integer_valueOf, Integer, 1, "valueOf", "(I)Ljava/lang/Integer;")                      \
    X(Long_valueOf, Long, 1, "valueOf", "(J)Ljava/lang/Long;")                               \
    X(Float_valueOf, Float, 1, "valueOf", "(F)Ljava/lang/Float;")                            \
    X(Double_valueOf, Double, 1, "valueOf", "(D)Ljava/lang/Double;")                         \
    X(Boolean_value, Boolean, 0, "booleanValue", "()Z")                                      \
    X(Character_value, Character, 0, "charValue", "()C")                                     \
    X(Number_long, Number, 0, "longValue", "()J")                                            \
    X(Number_double, Number, 0, "doubleValue", "()D")                                        \
    X(Number_float, Number, 0, "floatValue", "()F")                                          \
    X(String_newBytes, String, 0, "<init>", "([BLjava/nio/charset/Charset;)V")               \
    X(Charset_forName, Charset, 1, "forName", "(Ljava/lang/String;)Ljava/nio/charset/Charset;") \
    X(Bridge_findMethod, Bridge, 1, "findMethod",                                            \
      "(Ljava/lang/Class;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/Class;Z)"            \
      "Ljava/lang/reflect/Executable;")                                                      \
    X(Bridge_findConstructor, Bridge, 1, "findConstructor",                                  \
      "(Ljava/lang/Class;Ljava/lang/String;[Ljava/lang/Class;)Ljava/lang/reflect/Executable;") \
    X(Bridge_callerSensitive, Bridge, 1, "callerSensitive",                                  \
      "(Ljava/lang/reflect/Executable;)Ljava/lang/reflect/Method;")                          \
    X(Bridge_jniSignature, Bridge, 1, "jniSignature",                                        \
      "(Ljava/lang/reflect/Executable;)Ljava/lang/String;")                                  \
    X(Bridge_findField, Bridge, 1, "findField",                                              \
      "(Ljava/lang/Class;Ljava/lang/String;Z)Ljava/lang/reflect/Field;")                     \
    X(Bridge_fieldSignature, Bridge, 1, "fieldSignature",                                    \
      "(Ljava/lang/reflect/Field;)Ljava/lang/String;")                                       \
    X(Bridge_staticMemberKind, Bridge, 1, "staticMemberKind",                                \
      "(Ljava/lang/Class;Ljava/lang/String;)I")                                              \
    X(Bridge_nestedClass, Bridge, 1, "nestedClass",                                          \
      "(Ljava/lang/Class;Ljava/lang/String;)Ljava/lang/Class;")                               \
    X(Bridge_newView, Bridge, 1, "newView", "(Ljava/lang/String;)Lorg/py4jni/JVMView;")      \
    X(Bridge_resolveClass, Bridge, 1, "resolveClass",                                        \
      "(Lorg/py4jni/JVMView;Ljava/lang/String;)Ljava/lang/Class;")                           \
    X(Bridge_dir, Bridge, 1, "dir", "(Ljava/lang/Object;C)Ljava/lang/String;")               \
    X(Bridge_help, Bridge, 1, "help",                                                        \
      "(Ljava/lang/Object;ZLjava/lang/String;Z)Ljava/lang/String;")                          \
    X(Bridge_stackTrace, Bridge, 1, "stackTrace", "(Ljava/lang/Throwable;)Ljava/lang/String;") \
    X(Bridge_classInfo, Bridge, 1, "classInfo", "(Ljava/lang/Class;)J")                      \
    X(Bridge_isInstanceOf, Bridge, 1, "isInstanceOf",                                        \
      "(Ljava/lang/Object;Ljava/lang/Object;)Z")                                             \
    X(JVMView_addImport, JVMView, 0, "addImport", "(Ljava/lang/String;)V")                   \
    X(JVMView_removeImport, JVMView, 0, "removeImport", "(Ljava/lang/String;)Z")

typedef struct p4j_jclasses {
#define P4J_CLASS_FIELD(field, name) jclass field;
    P4J_CLASS_TABLE(P4J_CLASS_FIELD)
#undef P4J_CLASS_FIELD
#define P4J_METHOD_FIELD(field, cls, is_static, name, sig) jmethodID field;
    P4J_METHOD_TABLE(P4J_METHOD_FIELD)
#undef P4J_METHOD_FIELD
} p4j_jclasses;

/* ---- Resolver tables: the one mechanism every file that caches JNI IDs uses. ----
 * A file lists its classes, methods and fields as X-macro rows, turns them into
 * p4j_row entries with the P4J_*_ROW macros below (pointing into its own struct) and
 * resolves them with p4j_rows_resolve. */

typedef enum p4j_row_kind {
    P4J_ROW_CLASS,         /* FindClass, kept as a counting global ref */
    P4J_ROW_METHOD,        /* GetMethodID                              */
    P4J_ROW_STATIC_METHOD, /* GetStaticMethodID                        */
    P4J_ROW_FIELD,         /* GetFieldID                               */
    P4J_ROW_STATIC_FIELD,  /* GetStaticFieldID                         */
} p4j_row_kind;

typedef struct p4j_row {
    p4j_row_kind kind;
    void *slot;        /* where the result goes: jclass *, jmethodID * or jfieldID *    */
    const jclass *cls; /* member rows: the slot of its class (a row resolved earlier)   */
    const char *owner; /* member rows: the class's name, for messages                  */
    const char *name;  /* class rows: the binary name; member rows: the member's name  */
    const char *sig;   /* member rows: the JNI descriptor                              */
} p4j_row;

/* Rows of table struct `tbl` (an lvalue), one per X-macro row of the usual shapes:
 * X(field, "binary/name") and X(field, cls, is_static, "name", "descriptor"). */
#define P4J_CLASS_ROW(tbl, field, bin) {P4J_ROW_CLASS, &(tbl).field, NULL, NULL, bin, NULL},
#define P4J_METHOD_ROW(tbl, field, c, is_static, nm, sg) \
    {(is_static) ? P4J_ROW_STATIC_METHOD : P4J_ROW_METHOD, &(tbl).field, &(tbl).c, #c, nm, sg},
#define P4J_FIELD_ROW(tbl, field, c, is_static, nm, sg) \
    {(is_static) ? P4J_ROW_STATIC_FIELD : P4J_ROW_FIELD, &(tbl).field, &(tbl).c, #c, nm, sg},

/* Resolves `rows` in order: classes as counting global refs (p4j_jvm_global_new),
 * methods and fields by name and descriptor. A missing row fails with P4J_ERR_BRIDGE
 * naming it, prefixed with `who` ("py4jni start-up"); classes resolved before the
 * failure stay referenced (a missing row means the helper jar does not match). */
p4j_status p4j_rows_resolve(JNIEnv *env, const p4j_row *rows, size_t n, const char *who,
                            p4j_error *err);

/* The resolved table; valid after p4j_classes_init returned P4J_OK. */
extern p4j_jclasses p4j_jc;

/* Resolves every row of the tables; on failure `err` names the missing row. */
p4j_status p4j_classes_init(JNIEnv *env, p4j_error *err);

/* java.math.BigDecimal and its (String) constructor, resolved on the first Decimal
 * argument rather than at start-up (resolving them runs BigDecimal's static
 * initialiser, ~1 ms of every start). Any thread; sets *cls and, when `ctor` is not
 * NULL, *ctor (valid for the process life). */
p4j_status p4j_jc_decimal(JNIEnv *env, jclass *cls, jmethodID *ctor, p4j_error *err);

#endif /* P4J_JVM_CLASSES_H */
