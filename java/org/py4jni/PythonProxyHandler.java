package org.py4jni;

import java.lang.invoke.MethodHandles;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;

/**
 * The InvocationHandler behind every Python proxy: forwards each call to Python
 * through one native method (registered by bridge/inproc/callbacks.c). `handle` is the binding's
 * opaque reference to the Python object; the proxy owns one count of it, given back by
 * a Cleaner when the proxy becomes unreachable (see {@link PythonProxies}).
 *
 * <p>toString, hashCode and equals go to Python methods of those names when the
 * object defines them; otherwise toString is Python's str(obj) and hashCode/equals are
 * identity-based. An interface default method Python does not define runs Java's body.
 */
final class PythonProxyHandler implements InvocationHandler {
    final long handle;

    PythonProxyHandler(long handle) {
        this.handle = handle;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        PythonMethod pm = PythonMethod.of(method);
        Object r = call(handle, pm, args);
        if (r != PythonMethod.NO_METHOD) {
            return r;
        }
        if ((pm.flags & PythonMethod.HASH_CODE) != 0) {
            return System.identityHashCode(proxy);
        }
        if ((pm.flags & PythonMethod.EQUALS) != 0) {
            return proxy == args[0];
        }
        if ((pm.flags & PythonMethod.TO_STRING) != 0) {
            return "PythonProxy@" + Integer.toHexString(System.identityHashCode(proxy));
        }
        return invokeDefault(proxy, method, args);
    }

    /** Runs an interface's default body (InvocationHandler.invokeDefault on Java 16+). */
    private static Object invokeDefault(Object proxy, Method method, Object[] args) throws Throwable {
        Method viaJdk = INVOKE_DEFAULT;
        if (viaJdk != null) {
            try {
                return viaJdk.invoke(null, proxy, method, args);
            } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
            }
        }
        Class<?> iface = method.getDeclaringClass();
        return MethodHandles.privateLookupIn(iface, MethodHandles.lookup())
                .unreflectSpecial(method, iface).bindTo(proxy).invokeWithArguments(args);
    }

    private static final Method INVOKE_DEFAULT = findInvokeDefault();

    private static Method findInvokeDefault() {
        try {
            return InvocationHandler.class.getMethod("invokeDefault", Object.class, Method.class,
                    Object[].class);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /**
     * Calls Python: returns the converted result (boxed for primitive returns), or
     * {@link PythonMethod#NO_METHOD} when Python lacks a method Java can supply.
     * Throws Py4JException (with the Python traceback) when Python raised.
     */
    private static native Object call(long handle, PythonMethod method, Object[] args);
}
