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

    /** Adds the hook (once, from the C side when the JVM is ready). A named class, not a
     * method reference: a JVM's first lambda bootstraps invokedynamic, milliseconds of
     * every start-up. */
    static void install() {
        Runtime.getRuntime().addShutdownHook(new Hook());
    }

    /** The shutdown hook thread. */
    private static final class Hook extends Thread {
        Hook() {
            super("py4jni-python-exit");
        }

        @Override
        public void run() {
            atJavaExit();
        }
    }
}
