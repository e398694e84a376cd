package org.py4jni;

import java.lang.ref.Cleaner;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;

/**
 * Python objects as Java objects: {@code java.lang.reflect.Proxy} instances whose
 * handler calls Python through JNI (py4j's callbacks, without a callback server).
 *
 * <p>Lifetime: each proxy owns one count of the binding's handle on the Python object;
 * when the proxy becomes unreachable a Cleaner (not finalize()) gives the count back
 * and the binding drops its reference to the Python object under the GIL. The C side
 * keeps a weak reference to reuse one proxy per Python object while it lives.
 *
 * <p>Callers: the C side (bridge/inproc/callbacks.c) and {@link PythonEntryPoint}. Any thread.
 */
public final class PythonProxies {
    private static final Cleaner CLEANER = Cleaner.create();

    private PythonProxies() {
    }

    /**
     * A new proxy for Python handle `handle` implementing the interfaces named (binary
     * names, "a.b.C$D"). Throws BridgeException naming an interface that does not exist
     * or is not an interface.
     */
    public static Object create(long handle, String[] interfaceNames, String pythonType) {
        Class<?>[] ifaces = new Class<?>[interfaceNames.length];
        for (int i = 0; i < ifaces.length; i++) {
            ifaces[i] = load(interfaceNames[i], pythonType);
        }
        return create(handle, ifaces);
    }

    /** A new proxy for `handle` implementing `interfaces`. */
    public static Object create(long handle, Class<?>[] interfaces) {
        if (interfaces.length == 0) {
            throw new BridgeException("py4jni: a Python proxy needs at least one interface "
                    + "(class Java: implements = [...])");
        }
        for (Class<?> c : interfaces) {
            if (!c.isInterface()) {
                throw new BridgeException(c.getName()
                        + " is not an interface and cannot be used as a Python Proxy.");
            }
        }
        Object proxy = Proxy.newProxyInstance(loaderFor(interfaces), interfaces,
                new PythonProxyHandler(handle));
        retain(handle);
        CLEANER.register(proxy, new Release(handle));
        return proxy;
    }

    /** True when `c` is a Proxy class (instances may be Python proxies). */
    public static boolean isProxyClass(Class<?> c) {
        return Proxy.isProxyClass(c);
    }

    /** The Python handle of `o` when it is a Python proxy, else 0. */
    public static long handleOf(Object o) {
        if (o == null || !Proxy.isProxyClass(o.getClass())) {
            return 0;
        }
        InvocationHandler h = Proxy.getInvocationHandler(o);
        return h instanceof PythonProxyHandler ? ((PythonProxyHandler) h).handle : 0;
    }

    /** True when `o` is a Python proxy. */
    public static boolean isPythonProxy(Object o) {
        return handleOf(o) != 0;
    }

    private static Class<?> load(String name, String pythonType) {
        ClassLoader l = Thread.currentThread().getContextClassLoader();
        if (l == null) {
            l = ClassLoader.getSystemClassLoader();
        }
        try {
            return Class.forName(name, false, l);
        } catch (ClassNotFoundException | LinkageError e) {
            throw new BridgeException("py4jni: interface " + name + " listed in "
                    + pythonType + ".Java.implements does not exist in the JVM");
        }
    }

    /** A loader that sees every interface: the first non-bootstrap one, else the system's. */
    private static ClassLoader loaderFor(Class<?>[] interfaces) {
        for (Class<?> c : interfaces) {
            if (c.getClassLoader() != null) {
                return c.getClassLoader();
            }
        }
        return ClassLoader.getSystemClassLoader();
    }

    /** Gives one count of a handle back when its proxy is unreachable. */
    private static final class Release implements Runnable {
        private final long handle;

        Release(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            release(handle);
        }
    }

    /** Takes one count of the binding's handle (takes the GIL). */
    static native void retain(long handle);

    /** Gives one count back; the Python object is released at zero (takes the GIL). */
    static native void release(long handle);
}
