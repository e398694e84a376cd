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
     * signature. Throws BridgeException when the class declares none.
     */
    public static Object[] describe(Class<?> cls) {
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
