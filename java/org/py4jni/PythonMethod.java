package org.py4jni;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One Java method that Python implements: an interface method called on a Python
 * proxy, or a {@code native} method bound with {@code register_natives}. The C side
 * (bridge/inproc/callbacks.c) reads the final fields once per id and caches what it needs, so a
 * callback passes this object and C looks its id up in an array.
 */
final class PythonMethod {
    /** Flags read by C: which Object method this is, whether Java has a fallback. */
    static final int TO_STRING = 1;
    static final int HASH_CODE = 2;
    static final int EQUALS = 4;
    static final int HAS_DEFAULT = 8;   // an interface default method: Java runs it when Python lacks it
    static final int CALL_TARGET = 16;  // a native: call the Python callable itself
    static final int STATIC = 32;       // a static native (no receiver)

    /** Returned by the native call when Python does not define the method and Java should. */
    static final Object NO_METHOD = new Object();

    private static final AtomicInteger NEXT_ID = new AtomicInteger();
    private static final ConcurrentHashMap<Method, PythonMethod> BY_METHOD = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<Method, PythonMethod> BY_NATIVE = new ConcurrentHashMap<>();

    final int id;
    final String name;
    final String signature;
    final int flags;
    final Class<?> returnType;
    final Method method;

    private PythonMethod(Method m, int extraFlags) {
        this.id = NEXT_ID.getAndIncrement();
        this.name = m.getName();
        this.signature = Bridge.jniSignature(m);
        this.returnType = m.getReturnType();
        this.method = m;
        int f = extraFlags;
        if (m.getDeclaringClass() == Object.class) {
            switch (m.getName()) {
                case "toString": f |= TO_STRING | HAS_DEFAULT; break;
                case "hashCode": f |= HASH_CODE | HAS_DEFAULT; break;
                case "equals": f |= EQUALS | HAS_DEFAULT; break;
                default: break;
            }
        } else if (m.isDefault()) {
            f |= HAS_DEFAULT;
        }
        if (Modifier.isStatic(m.getModifiers())) {
            f |= STATIC;
        }
        this.flags = f;
    }

    /** The entry of interface method `m` (created once, then a lock-free lookup). */
    static PythonMethod of(Method m) {
        PythonMethod pm = BY_METHOD.get(m);
        return pm != null ? pm : BY_METHOD.computeIfAbsent(m, k -> new PythonMethod(k, 0));
    }

    /**
     * The entry of native method `m`: one per method for the process, so registering it
     * again reuses the C side's method entry and closure.
     */
    static PythonMethod forNative(Method m) {
        PythonMethod pm = BY_NATIVE.get(m);
        return pm != null ? pm : BY_NATIVE.computeIfAbsent(m, k -> new PythonMethod(k, CALL_TARGET));
    }
}
