package org.py4jni;

import java.io.BufferedOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * One taken-over program: a {@code java ... Main args} command run in this JVM instead
 * of a child process. Its {@code main(args)} runs on a thread named "main" of the
 * program's own thread group, whose threads (and every thread they start) are the
 * program's: their System.out, System.err and System.in are the program's streams
 * ({@link ProgramStreams}), and System.exit on them ends the program
 * ({@link ProgramExits}). Like a JVM, the program ends when main has returned and no
 * non-daemon thread of its group is left (status 0, or 1 when main threw), when one of
 * its threads calls System.exit / Runtime.halt, or when py4jni ends it
 * ({@link #signal}, {@link #kill}); then its shutdown hooks run (not for kill or halt),
 * its py4j servers close, its threads are interrupted and its streams closed.
 */
public final class Program {
    private static final InheritableThreadLocal<Program> CURRENT = new InheritableThreadLocal<>();

    final int id;
    final String mainClass;
    final ClassLoader loader;          // the system class loader, or the program's own
    final ThreadGroup group;
    final OutputStream out;            // null: the process's own
    final OutputStream err;
    final InputStream in;
    private final String[] args;
    private final List<HeldPort> ports = new ArrayList<>();
    private final CountDownLatch ended = new CountDownLatch(1);
    private boolean endRequested;
    private volatile int status;
    private final CallContext context;

    Program(int id, String mainClass, String[] args, ClassLoader loader, String stdin,
            String stdout, String stderr) throws IOException {
        this.id = id;
        this.mainClass = mainClass;
        this.args = args.clone();
        this.loader = loader;
        this.group = new Group(Programs.ROOT, "py4jni-program-" + id + " " + mainClass);
        this.out = output(stdout);
        this.err = "stdout".equals(stderr) ? out : output(stderr);
        this.in = input(stdin);
        this.context = new Context(this);
    }

    /** "inherit" (the process's stream: null), "null", or "fd:N" (this process's fd N,
     * opened anew, so the caller may close its own). */
    private static OutputStream output(String spec) throws IOException {
        if (spec.equals("inherit")) {
            return null;
        }
        if (spec.equals("null")) {
            return OutputStream.nullOutputStream();
        }
        // as the java launcher's System.out: 128 bytes of buffer, flushed by the
        // dispatching PrintStream at each println
        return new BufferedOutputStream(new FileOutputStream(fdPath(spec)), 128);
    }

    private static InputStream input(String spec) throws IOException {
        if (spec.equals("inherit")) {
            return null;
        }
        if (spec.equals("null")) {
            return InputStream.nullInputStream();
        }
        return new FileInputStream(fdPath(spec));
    }

    private static String fdPath(String spec) {
        if (!spec.startsWith("fd:")) {
            throw new IllegalArgumentException("py4jni: stream " + spec);
        }
        return "/proc/self/fd/" + Integer.parseInt(spec.substring(3));
    }

    /** The program of the calling thread, or null. */
    static Program current() {
        Program p = CURRENT.get();
        if (p != null) {
            return p;
        }
        for (ThreadGroup g = Thread.currentThread().getThreadGroup(); g != null; g = g.getParent()) {
            if (g instanceof Group) {
                return ((Group) g).program();
            }
        }
        return null;
    }

    /** The call context of py4jni's gateways over this program's servers: a Java thread
     * running their calls runs for the program (its streams, System.exit ending it),
     * with the program's class loader as context class loader. */
    public CallContext context() {
        return context;
    }

    /** A CallContext that makes the entering thread one of the program's. */
    private static final class Context extends CallContext {
        private final Program program;

        Context(Program program) {
            super(program.loader);
            this.program = program;
        }

        @Override
        protected void entered() {
            CURRENT.set(program);
        }

        @Override
        protected void left() {
            CURRENT.remove();
        }
    }

    /** This program's id (py4jni's count of launches in this process). */
    public int id() {
        return id;
    }

    /** Starts main on the program's "main" thread: not a daemon, as the java launcher's
     * (a new thread inherits its creator's daemon status, and the calling thread here is
     * a Python thread's, which py4jni attaches as a daemon), so the threads main starts,
     * such as a py4j server's, keep the program running after main returns. */
    void start() {
        Thread main = new Thread(group, new Main(), "main", 0, false);
        main.setDaemon(false);
        main.setContextClassLoader(loader);
        main.start();
    }

    /** The program's main thread: main(args), then the non-daemon threads, then the end. */
    private final class Main implements Runnable {
        @Override
        public void run() {
            CURRENT.set(Program.this);
            int code = 0;
            try {
                Method main = Class.forName(mainClass, true, loader).getMethod("main", String[].class);
                main.invoke(null, (Object) args);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (!(cause instanceof ProgramExits.ProgramExit)) {
                    code = 1;
                    group.uncaughtException(Thread.currentThread(), cause);
                }
            } catch (ProgramExits.ProgramExit e) {
                // System.exit in a static initializer of the main class
            } catch (ReflectiveOperationException | LinkageError e) {
                code = 1;
                // as the java launcher says it
                System.err.println("Error: Could not find or load main class " + mainClass);
                System.err.println("Caused by: " + e);
            }
            waitForThreads();
            requestEnd(code, true, false);
        }
    }

    /** Joins the program's non-daemon threads (other than the caller) until none is left
     * or the program is ending. */
    private void waitForThreads() {
        Thread me = Thread.currentThread();
        while (!isEnding()) {
            Thread[] all = new Thread[group.activeCount() + 16];
            int n = group.enumerate(all, true);
            Thread wait = null;
            for (int i = 0; i < n && wait == null; i++) {
                if (all[i] != me && !all[i].isDaemon() && all[i].isAlive()) {
                    wait = all[i];
                }
            }
            if (wait == null) {
                return;
            }
            try {
                wait.join();
            } catch (InterruptedException e) {
                return; // the program is being ended
            }
        }
    }

    private synchronized boolean isEnding() {
        return endRequested;
    }

    /** System.exit / Runtime.halt on one of the program's threads: the program ends with
     * `code` on a thread of py4jni's; returns what the calling thread throws. */
    ProgramExits.ProgramExit exitFrom(int code, boolean hooks) {
        requestEnd(code, hooks, false);
        return new ProgramExits.ProgramExit(code);
    }

    /** A signal py4jni relays to the program (the JVM's handling of SIGHUP, SIGINT,
     * SIGTERM: the shutdown hooks run, exit status 128 + signal). */
    public void signal(int signal) {
        requestEnd(128 + signal, true, false);
    }

    /** Ends the program as SIGKILL ends a JVM: no shutdown hook runs (they are
     * dropped). */
    public void kill() {
        requestEnd(128 + 9, false, true);
    }

    private void requestEnd(int code, boolean hooks, boolean drop) {
        synchronized (this) {
            if (endRequested) {
                return;
            }
            endRequested = true;
            status = code;
        }
        Thread ender = new Thread(Programs.ROOT, new Ender(hooks), "py4jni-program-end-" + id, 0, false);
        ender.setDaemon(true);
        ender.start();
    }

    /** Ends the program: hooks, servers, threads, streams, in that order. */
    private final class Ender implements Runnable {
        private final boolean hooks;

        Ender(boolean hooks) {
            this.hooks = hooks;
        }

        @Override
        public void run() {
            try {
                runHooks(hooks);
            } finally {
                List<HeldPort> open;
                synchronized (ports) {
                    open = new ArrayList<>(ports);
                    ports.clear();
                }
                for (HeldPort p : open) {
                    try {
                        p.close();
                    } catch (IOException e) {
                        // nothing holds it any more
                    }
                }
                group.interrupt();
                closeQuietly(out);
                if (err != out) {
                    closeQuietly(err);
                }
                closeQuietly(in);
                Programs.ended(Program.this);
                CallContext.release(context.id());
                ended.countDown();
            }
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        if (c == null) {
            return;
        }
        try {
            if (c instanceof OutputStream) {
                ((OutputStream) c).flush();
            }
            c.close();
        } catch (IOException e) {
            // the reader went away
        }
    }

    /** The program's shutdown hooks (those whose thread belongs to its group), taken out
     * of the JVM's; started and joined when `run`, else dropped. */
    private void runHooks(boolean run) {
        List<Thread> mine = new ArrayList<>();
        try {
            Class<?> hooksClass = Class.forName("java.lang.ApplicationShutdownHooks");
            synchronized (hooksClass) {
                Object map = ClassHooks.staticField(hooksClass, "hooks", "Ljava/util/IdentityHashMap;");
                if (map == null) {
                    return; // the JVM is shutting down: its own shutdown runs them
                }
                for (Object t : ((IdentityHashMap<?, ?>) map).keySet()) {
                    if (belongs(((Thread) t).getThreadGroup())) {
                        mine.add((Thread) t);
                    }
                }
            }
        } catch (ClassNotFoundException | UnsatisfiedLinkError e) {
            return;
        }
        for (Thread t : mine) {
            try {
                Runtime.getRuntime().removeShutdownHook(t);
            } catch (IllegalStateException e) {
                return; // the JVM is shutting down and runs them
            }
        }
        if (!run) {
            return;
        }
        for (Thread t : mine) {
            t.start();
        }
        for (Thread t : mine) {
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    // the JVM waits for its hooks too
                }
            }
        }
    }

    /** Whether `t` is a thread of a taken-over program (its group or one below). */
    static boolean owns(Thread t) {
        for (ThreadGroup g = t.getThreadGroup(); g != null; g = g.getParent()) {
            if (g instanceof Group) {
                return true;
            }
        }
        return false;
    }

    private boolean belongs(ThreadGroup g) {
        for (; g != null; g = g.getParent()) {
            if (g == group) {
                return true;
            }
        }
        return false;
    }

    void held(HeldPort port) {
        synchronized (ports) {
            ports.add(port);
        }
    }

    void released(HeldPort port) {
        synchronized (ports) {
            ports.remove(port);
        }
    }

    /** Waits until the program has ended and returns its exit status (for a signal or
     * kill: 128 + the signal's number, as a JVM's). */
    public int waitFor() throws InterruptedException {
        ended.await();
        return status;
    }

    /** True until the program has ended. */
    public boolean isAlive() {
        return ended.getCount() > 0;
    }

    /** The program's thread group: its uncaught exceptions print as the JVM's default
     * handler does (on the program's System.err), except the unwinding of System.exit. */
    private final class Group extends ThreadGroup {
        Group(ThreadGroup parent, String name) {
            super(parent, name);
        }

        Program program() {
            return Program.this;
        }

        @Override
        public void uncaughtException(Thread t, Throwable e) {
            if (!(e instanceof ProgramExits.ProgramExit)) {
                super.uncaughtException(t, e);
            }
        }
    }
}
