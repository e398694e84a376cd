package org.py4jni;

/**
 * The Python entry point of the in-process gateway ({@code JavaGateway(...,
 * python_server_entry_point=obj)}): Java obtains it as an object implementing the
 * interfaces it asks for, as py4j's {@code GatewayServer.getPythonServerEntryPoint}.
 */
public final class PythonEntryPoint {
    private static long handle; // guarded by the class lock; 0 = none

    private PythonEntryPoint() {
    }

    /**
     * The Python entry point as a proxy implementing `interfaces`. Throws
     * Py4JException when Python registered none.
     */
    public static synchronized Object get(Class<?>[] interfaces) {
        if (handle == 0) {
            throw new Py4JException("py4jni: no Python entry point (pass "
                    + "python_server_entry_point= to JavaGateway or ClientServer)");
        }
        return PythonProxies.create(handle, interfaces);
    }

    /** py4j's name for {@link #get}. */
    public static Object getPythonServerEntryPoint(Class<?>[] interfaces) {
        return get(interfaces);
    }

    /** True when a Python entry point is registered. */
    public static synchronized boolean isSet() {
        return handle != 0;
    }

    /** Registers `h` (0 clears), taking a count of it and giving the previous one back. */
    static synchronized void set(long h) {
        if (h != 0) {
            PythonProxies.retain(h);
        }
        long old = handle;
        handle = h;
        if (old != 0) {
            PythonProxies.release(old);
        }
    }

    /** Clears the entry point when it is `h` (the gateway that set it shut down). */
    static synchronized void clear(long h) {
        if (handle == h && h != 0) {
            set(0);
        }
    }
}
