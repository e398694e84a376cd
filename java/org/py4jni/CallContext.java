package org.py4jni;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the calls of one in-process client run for: the Java thread's context class
 * loader while it runs them (null: the thread's own), and whatever a subclass adds
 * ({@link #entered}, {@link #left}: a taken-over program's state, for instance).
 *
 * <p>The C side (bridge/inproc/inproc.c) remembers per thread the id of the context it entered
 * last and calls {@link #enter} only when a call comes through a client of another
 * context, so a thread that keeps to one client pays a compare per call. A context
 * entered stays the thread's until another is entered: Java code that changes the
 * thread's context class loader during a call is not undone at the next call through
 * the same client (as a py4j server's connection thread keeps it). Entering no context
 * (null) gives the thread back the loader it had before its first context. A Python
 * callback running on a Java thread gives that thread back the context it had when
 * Python was entered ({@link #restore}).
 */
public class CallContext {
    private static final AtomicLong IDS = new AtomicLong();
    /** Live contexts by id, so that {@link #restore} never needs a reference C kept. */
    private static final Map<Long, CallContext> LIVE = new ConcurrentHashMap<>();
    /** The context a thread entered last (absent: none). */
    private static final ThreadLocal<CallContext> CURRENT = new ThreadLocal<>();
    /** The context class loader a thread had before its first context. */
    private static final ThreadLocal<ClassLoader> OWN = new ThreadLocal<>();

    private final long id;
    private final ClassLoader loader;

    /** A context whose calls run with `loader` as context class loader (null: the
     * thread's own); registered until {@link #release}d. */
    protected CallContext(ClassLoader loader) {
        this.loader = loader;
        this.id = IDS.incrementAndGet();
        LIVE.put(id, this);
    }

    /** A context whose calls run with `loader` as the thread's context class loader. */
    public static CallContext of(ClassLoader loader) {
        return new CallContext(loader);
    }

    /** This context's id (never 0, the id of "no context"). */
    public final long id() {
        return id;
    }

    /** The class loader of this context (null: the thread's own). */
    public final ClassLoader loader() {
        return loader;
    }

    /** Forgets the context `id` (its client is gone): {@link #restore} no longer finds it. */
    public static void release(long id) {
        LIVE.remove(id);
    }

    /** Called on the entering thread once its context class loader is set. */
    protected void entered() {
    }

    /** Called on a thread that enters another context (or none) after this one. */
    protected void left() {
    }

    /**
     * Makes `ctx` the calling thread's context (null: none): the previous one is left,
     * the thread's context class loader becomes ctx's loader (or the thread's own).
     */
    public static void enter(CallContext ctx) {
        CallContext prev = CURRENT.get();
        if (prev == ctx) {
            return;
        }
        Thread t = Thread.currentThread();
        if (prev != null) {
            prev.left();
        } else {
            OWN.set(t.getContextClassLoader());
        }
        if (ctx == null) {
            t.setContextClassLoader(OWN.get());
            OWN.remove();
            CURRENT.remove();
            return;
        }
        t.setContextClassLoader(ctx.loader != null ? ctx.loader : OWN.get());
        CURRENT.set(ctx);
        ctx.entered();
    }

    /** {@link #enter} of the live context with this id (0, or one released: none). */
    public static void restore(long id) {
        enter(id == 0 ? null : LIVE.get(id));
    }

    @Override
    public String toString() {
        return "CallContext(" + id + ", " + loader + ")";
    }
}
