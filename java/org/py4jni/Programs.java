package org.py4jni;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.MalformedURLException;
import java.net.ServerSocket;
import java.net.URL;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.net.ServerSocketFactory;

/**
 * Programs whose {@code java} launch py4jni took over (python-binding/py4jni/_launch.py
 * decides and calls this class), and the py4j servers they started, by port.
 *
 * <p>A first launch, before the JVM existed, started the JVM with the program's class
 * path and options: its classes are the system class loader's, and that loader's py4j
 * GatewayServer classes are loaded through the armed hook ({@link #loadEdited}). A later
 * launch gets a {@link ProgramLoader} of its own. In both, the GatewayServer's
 * {@code startSocket()} calls {@link #startSocket}, which registers the server here under
 * its port instead of listening; py4jni's gateways for that port get it from
 * {@link #serverAt}.
 */
public final class Programs {
    /** The thread group of py4jni's own threads and of the programs' groups. */
    static final ThreadGroup ROOT = rootGroup();
    private static final Map<Integer, HeldPort> BY_PORT = new HashMap<>();
    private static final List<Program> RUNNING = new ArrayList<>();
    private static int launches;
    private static boolean prepared;
    private static volatile Listener listener;

    /** Told when a taken-over program's py4j server starts or stops being served
     * (py4jni's Python side: its gateways for that port are in-process). Called on the
     * program's thread that starts or stops the server. */
    public interface Listener {
        /** `server` (a py4j GatewayServer of `program`) is served under `port`. */
        void served(int port, Object server, Program program);

        /** Nothing serves `port` any more. */
        void unserved(int port);
    }

    /** Sets the listener (replacing any). */
    public static void listen(Listener l) {
        listener = l;
    }

    private Programs() {
    }

    private static ThreadGroup rootGroup() {
        ThreadGroup g = Thread.currentThread().getThreadGroup();
        while (g.getParent() != null && !"main".equals(g.getName())) {
            g = g.getParent();
        }
        return g;
    }

    /**
     * Prepares this JVM for taken-over programs (once): Runtime.exit and halt gated by
     * {@link ProgramExits}, System.out/err/in dispatching by program. Throws
     * IllegalStateException when JVMTI refuses (the message says why).
     */
    public static synchronized void prepare() {
        if (prepared) {
            return;
        }
        ClassHooks.arm(new String[] {"java/lang/Runtime"});
        try {
            ClassHooks.retransform(new Class<?>[] {Runtime.class});
        } finally {
            ClassHooks.arm(null);
        }
        ProgramStreams.install();
        prepared = true;
    }

    /**
     * Loads the named GatewayServer classes (binary names) in the system class loader
     * with the hook armed, so their startSocket() is edited; one loaded before is
     * retransformed. Names the loader does not have are skipped.
     */
    public static synchronized void loadEdited(String[] names) {
        String[] internal = new String[names.length];
        for (int i = 0; i < names.length; i++) {
            internal[i] = names[i].replace('.', '/');
        }
        ClassLoader system = ClassLoader.getSystemClassLoader();
        ClassHooks.arm(internal);
        try {
            List<Class<?>> again = new ArrayList<>();
            for (String name : names) {
                Class<?> c = ClassHooks.findLoaded(system, name);
                if (c != null) {
                    again.add(c);
                    continue;
                }
                try {
                    Class.forName(name, false, system);
                } catch (ClassNotFoundException | LinkageError e) {
                    // not on this class path after all
                }
            }
            if (!again.isEmpty()) {
                ClassHooks.retransform(again.toArray(new Class<?>[0]));
            }
        } finally {
            ClassHooks.arm(null);
        }
    }

    /**
     * Starts a program: {@code mainClass.main(args)} on a thread of its own.
     * {@code classPath} null: the system class loader's classes (the launch that
     * started the JVM); else the entries of the program's own class loader. Streams:
     * "inherit", "null", "fd:N" (stderr also "stdout"). Returns the program.
     */
    public static Program launch(String mainClass, String[] args, String[] classPath,
                                 String stdin, String stdout, String stderr) throws IOException {
        ClassLoader loader = ClassLoader.getSystemClassLoader();
        int id;
        synchronized (Programs.class) {
            id = ++launches;
        }
        if (classPath != null) {
            URL[] urls = new URL[classPath.length];
            for (int i = 0; i < classPath.length; i++) {
                urls[i] = url(classPath[i]);
            }
            loader = new ProgramLoader(urls, "py4jni-program-" + id);
        }
        Program p = new Program(id, mainClass, args, loader, stdin, stdout, stderr);
        synchronized (Programs.class) {
            RUNNING.add(p);
        }
        p.start();
        return p;
    }

    private static URL url(String entry) throws MalformedURLException {
        File f = new File(entry);
        String s = f.getAbsoluteFile().toURI().toString();
        if (f.isDirectory() && !s.endsWith("/")) {
            s += "/";
        }
        return new URL(s);
    }

    static synchronized void ended(Program p) {
        RUNNING.remove(p);
    }

    /** The py4j server a taken-over program registered under `port`, or null. */
    public static synchronized Object serverAt(int port) {
        HeldPort h = BY_PORT.get(port);
        return h == null ? null : h.server;
    }

    /** The program that registered a server under `port`, or null. */
    public static synchronized Program programAt(int port) {
        HeldPort h = BY_PORT.get(port);
        return h == null ? null : h.program;
    }

    /** The auth token a py4j server requires (its {@code authToken} field), or null. */
    public static String authToken(Object server) {
        try {
            return (String) field(gatewayServerClass(server.getClass()), "authToken").get(server);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    static void register(HeldPort h) {
        synchronized (Programs.class) {
            BY_PORT.put(h.port(), h);
        }
        h.program.held(h);
        Listener l = listener;
        if (l != null) {
            l.served(h.port(), h.server, h.program);
        }
    }

    static void unregister(HeldPort h) {
        boolean mine;
        synchronized (Programs.class) {
            mine = BY_PORT.get(h.port()) == h;
            if (mine) {
                BY_PORT.remove(h.port());
            }
        }
        h.program.released(h);
        Listener l = listener;
        if (mine && l != null) {
            l.unserved(h.port());
        }
    }

    /**
     * The body of every edited GatewayServer's startSocket(): a server of a taken-over
     * program (its class is a program loader's, or its starting thread a program's)
     * holds its port and registers; any other binds a listening socket as py4j does.
     * Throws the server's own Py4JNetworkException when the port is taken.
     */
    public static void startSocket(Object server) {
        Class<?> gs = gatewayServerClass(server.getClass());
        Program program = Program.current();
        try {
            InetAddress address = (InetAddress) field(gs, "address").get(server);
            int port = field(gs, "port").getInt(server);
            Field socket = field(gs, "sSocket");
            try {
                if (program != null) {
                    socket.set(server, new HeldPort(address, port, server, program));
                    return;
                }
                ServerSocketFactory factory = (ServerSocketFactory) field(gs, "sSocketFactory").get(server);
                ServerSocket s = factory.createServerSocket();
                s.setSoTimeout(field(gs, "connectTimeout").getInt(server));
                s.setReuseAddress(true);
                s.bind(new InetSocketAddress(address, port), -1);
                socket.set(server, s);
            } catch (IOException e) {
                throw networkError(gs, "Failed to bind to " + address + ":" + port, e);
            }
        } catch (IllegalAccessException | NoSuchFieldException e) {
            throw new IllegalStateException("py4jni: a py4j GatewayServer of another shape: " + gs, e);
        }
    }

    private static RuntimeException networkError(Class<?> gs, String message, Throwable cause) {
        String name = gs.getName().substring(0, gs.getName().lastIndexOf('.') + 1) + "Py4JNetworkException";
        try {
            Constructor<?> c = Class.forName(name, true, gs.getClassLoader())
                .getConstructor(String.class, Throwable.class);
            return (RuntimeException) c.newInstance(message, cause);
        } catch (ReflectiveOperationException | ClassCastException e) {
            return new IllegalStateException(message, cause);
        }
    }

    private static Class<?> gatewayServerClass(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            if (ClassHooks.isGatewayServer(k.getName().replace('.', '/'))) {
                return k;
            }
        }
        throw new IllegalArgumentException("py4jni: not a py4j GatewayServer: " + c);
    }

    private static Field field(Class<?> c, String name) throws NoSuchFieldException {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }
}
