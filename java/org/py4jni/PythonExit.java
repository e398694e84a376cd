package org.py4jni;

import java.util.HashSet;
import java.util.Set;

/**
 * Lets Python's exit handlers run when Java ends the process: System.exit (on any
 * thread) runs the shutdown hooks, and this one's native body (jni/jvm.c) runs
 * Python's atexit handlers and flushes its stdio before the JVM halts. When Python
 * exits first, py4jni runs the shutdown hooks itself and this hook does nothing.
 */
final class PythonExit {
    /** How long the set of non-daemon threads may stay the same before the wait ends. */
    static final long QUIET_MS = 300;
    /** The longest wait for non-daemon threads at Python's exit. */
    static final long LIMIT_MS = 3000;
    private static final long POLL_MS = 5;

    private PythonExit() {
    }

    /**
     * Called from C when Python exits, before Java's shutdown hooks: waits, as a JVM whose
     * main method returned does, for the non-daemon threads Java code started (an
     * asynchronous close still cleaning up), but bounded. The wait ends when none is left,
     * when their set has not changed for {@link #QUIET_MS} (threads that live until
     * the JVM ends, idle), or after {@link #LIMIT_MS}. Threads of a taken-over program
     * are its own and not waited for; the caller is the attached Python thread (a daemon).
     */
    static void awaitThreads() {
        long start = System.nanoTime();
        long changed = start;
        Set<Thread> last = live();
        while (!last.isEmpty()) {
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            Set<Thread> seen = live();
            if (!seen.equals(last)) {
                last = seen;
                changed = now;
            }
            if (now - changed >= QUIET_MS * 1_000_000L || now - start >= LIMIT_MS * 1_000_000L) {
                return;
            }
        }
    }

    /** The live non-daemon threads, other than the caller and taken-over programs'. */
    private static Set<Thread> live() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] all;
        int n;
        do {
            all = new Thread[root.activeCount() + 16];
            n = root.enumerate(all, true);
        } while (n == all.length);
        Set<Thread> live = new HashSet<>();
        Thread me = Thread.currentThread();
        for (int i = 0; i < n; i++) {
            Thread t = all[i];
            if (t != me && !t.isDaemon() && t.isAlive() && !Program.owns(t)) {
                live.add(t);
            }
        }
        return live;
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
