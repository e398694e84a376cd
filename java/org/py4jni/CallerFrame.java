package org.py4jni;

import java.lang.annotation.Annotation;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;

/**
 * The Java caller of the JDK's caller-sensitive methods called from Python in-process.
 *
 * <p>A caller-sensitive method ({@code @jdk.internal.reflect.CallerSensitive}:
 * Logger.getLogger, ResourceBundle.getBundle, ServiceLoader.load, Class.forName,
 * AccessibleObject.setAccessible, MethodHandles.lookup, StackWalker.getCallerClass,
 * Field.get, Method.invoke, ...) asks the JVM which class called it. Called by JNI from a
 * thread with no Java frame it gets no class (null: NullPointerException,
 * IllegalCallerException, the boot loader instead of the application's). py4j's server
 * calls every method through {@link Method#invoke} from its own classes, on the
 * application class loader; the C side routes exactly the methods {@link #wants}
 * accepts (asked through {@link Bridge#callerSensitive}) through the invoke* methods
 * here, so that their caller is this class, on the same loader and in the same
 * (unnamed) module as py4j's. Decided once per resolved method
 * (bridge/inproc/inproc_callers.c). Constructors are never caller-sensitive (the annotation
 * targets methods only).
 *
 * <p>Each invoke* method is called by JNI and calls {@link #call}, which calls
 * Method.invoke: the frame of invoke* is the caller of the method that called
 * StackWalker.getCallerClass. A Java exception of the method is rethrown as itself.
 * All methods may be called from any thread.
 */
public final class CallerFrame {
    private CallerFrame() {
    }

    private static final ClassLoader PLATFORM = ClassLoader.getPlatformClassLoader();

    /** The JDK's marker of caller-sensitive methods, or null if this JDK has none. */
    private static final Class<? extends Annotation> MARKER = marker();

    @SuppressWarnings("unchecked")
    private static Class<? extends Annotation> marker() {
        try {
            return (Class<? extends Annotation>) Class.forName(
                "jdk.internal.reflect.CallerSensitive", false, null);
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /**
     * The method to invoke through this class for resolved method `m`, or null when `m`
     * is not caller-sensitive (then it is called by JNI directly): `m` itself, or, when
     * `m`'s class is not accessible here (a JDK-internal implementation class), the
     * public declaration it overrides (invoked virtually, so `m` runs). Null too when
     * no accessible declaration exists (py4j cannot call it either).
     */
    public static Method wants(Method m) {
        Class<?> decl = m.getDeclaringClass();
        ClassLoader loader = decl.getClassLoader();
        if (MARKER == null || (loader != null && loader != PLATFORM)
                || !m.isAnnotationPresent(MARKER)) {
            return null;
        }
        if (accessible(m)) {
            return m;
        }
        ArrayDeque<Class<?>> todo = new ArrayDeque<>();
        todo.add(decl);
        while (!todo.isEmpty()) {
            Class<?> c = todo.poll();
            for (Class<?> i : c.getInterfaces()) {
                todo.add(i);
            }
            if (c.getSuperclass() != null) {
                todo.add(c.getSuperclass());
            }
            if (c == decl) {
                continue;
            }
            try {
                Method up = c.getDeclaredMethod(m.getName(), m.getParameterTypes());
                if (accessible(up)) {
                    return up;
                }
            } catch (NoSuchMethodException e) {
                // not declared there: look further up
            }
        }
        return null;
    }

    /** True when `m` is public in a public class of a package exported to this class. */
    private static boolean accessible(Method m) {
        Class<?> c = m.getDeclaringClass();
        return Modifier.isPublic(m.getModifiers()) && Modifier.isPublic(c.getModifiers())
            && c.getModule().isExported(c.getPackageName(), CallerFrame.class.getModule());
    }

    /** Invokes `m` on `target` (null for a static method): Method.invoke from here. */
    private static Object call(Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** {@link #call} for a void method. */
    public static void invokeV(Method m, Object target, Object[] args) throws Throwable {
        call(m, target, args);
    }

    /** {@link #call} for a boolean result. */
    public static boolean invokeZ(Method m, Object target, Object[] args) throws Throwable {
        return (Boolean) call(m, target, args);
    }

    /** {@link #call} for a byte result. */
    public static byte invokeB(Method m, Object target, Object[] args) throws Throwable {
        return (Byte) call(m, target, args);
    }

    /** {@link #call} for a char result. */
    public static char invokeC(Method m, Object target, Object[] args) throws Throwable {
        return (Character) call(m, target, args);
    }

    /** {@link #call} for a short result. */
    public static short invokeS(Method m, Object target, Object[] args) throws Throwable {
        return (Short) call(m, target, args);
    }

    /** {@link #call} for an int result. */
    public static int invokeI(Method m, Object target, Object[] args) throws Throwable {
        return (Integer) call(m, target, args);
    }

    /** {@link #call} for a long result. */
    public static long invokeJ(Method m, Object target, Object[] args) throws Throwable {
        return (Long) call(m, target, args);
    }

    /** {@link #call} for a float result. */
    public static float invokeF(Method m, Object target, Object[] args) throws Throwable {
        return (Float) call(m, target, args);
    }

    /** {@link #call} for a double result. */
    public static double invokeD(Method m, Object target, Object[] args) throws Throwable {
        return (Double) call(m, target, args);
    }

    /** {@link #call} for a reference result. */
    public static Object invokeL(Method m, Object target, Object[] args) throws Throwable {
        return call(m, target, args);
    }
}
