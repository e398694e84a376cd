package org.py4jni;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Facts about a class's {@code native} methods for {@code register_natives}: the C side
 * builds a libffi closure per method from the JNI signature found here.
 */
public final class PythonNatives {
    private PythonNatives() {
    }

    /**
     * One entry per native method declared by `cls` (not inherited), sorted by name then
     * signature. Throws BridgeException when the class declares none, or is a JDK class
     * (boot or platform loader) or one of py4jni's helpers: their natives are not Python's.
     */
    public static Object[] describe(Class<?> cls) {
        ClassLoader loader = cls.getClassLoader();
        if (loader == null || loader == ClassLoader.getPlatformClassLoader()) {
            throw new BridgeException("py4jni: register_natives refuses " + cls.getName()
                    + ": it is a JDK class (boot or platform class loader), and rebinding "
                    + "its native methods would break the JVM itself");
        }
        if (cls.getPackageName().equals(PythonNatives.class.getPackageName())) {
            throw new BridgeException("py4jni: register_natives refuses " + cls.getName()
                    + ": py4jni's own helper classes bind their natives themselves");
        }
        List<PythonMethod> out = new ArrayList<>();
        Method[] methods = cls.getDeclaredMethods();
        Arrays.sort(methods, Comparator.comparing(Method::getName)
                .thenComparing(Bridge::jniSignature));
        for (Method m : methods) {
            if (Modifier.isNative(m.getModifiers())) {
                out.add(PythonMethod.forNative(m));
            }
        }
        if (out.isEmpty()) {
            throw new BridgeException("py4jni: " + cls.getName() + " declares no native methods");
        }
        return out.toArray();
    }
}
