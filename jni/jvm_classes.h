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
    X(BigDecimal, "java/math/BigDecimal")                    \
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
    X(BigDecimal_new, BigDecimal, 0, "<init>", "(Ljava/lang/String;)V")                      \
    X(String_newBytes, String, 0, "<init>", "([BLjava/nio/charset/Charset;)V")               \
    X(Charset_forName, Charset, 1, "forName", "(Ljava/lang/String;)Ljava/nio/charset/Charset;") \
    X(Bridge_findMethod, Bridge, 1, "findMethod",                                            \
      "(Ljava/lang/Class;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/Class;Z)"            \
      "Ljava/lang/reflect/Executable;")                                                      \
    X(Bridge_findConstructor, Bridge, 1, "findConstructor",                                  \
      "(Ljava/lang/Class;Ljava/lang/String;[Ljava/lang/Class;)Ljava/lang/reflect/Executable;") \
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
    X(Bridge_defaultView, Bridge, 1, "defaultView", "()Lorg/py4jni/JVMView;")                \
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

/* The resolved table; valid after p4j_classes_init returned P4J_OK. */
extern p4j_jclasses p4j_jc;

/* Resolves every row of the tables; on failure `err` names the missing row. */
p4j_status p4j_classes_init(JNIEnv *env, p4j_error *err);

#endif /* P4J_JVM_CLASSES_H */
