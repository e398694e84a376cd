package org.py4jni;

/**
 * Lets Python's exit handlers run when Java ends the process: System.exit (on any
 * thread) runs the shutdown hooks, and this one's native body (jni/jvm.c) runs
 * Python's atexit handlers and flushes its stdio before the JVM halts. When Python
 * exits first, py4jni runs the shutdown hooks itself and this hook does nothing.
 */
final class PythonExit {
    private PythonExit() {
    }

    private static native void atJavaExit();

    /** Adds the hook (once, from the C side when the JVM is ready). */
    static void install() {
        Runtime.getRuntime().addShutdownHook(new Thread(PythonExit::atJavaExit, "py4jni-python-exit"));
    }
}
