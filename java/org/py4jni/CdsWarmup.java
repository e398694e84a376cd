package org.py4jni;

import java.net.URL;
import java.security.CodeSource;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Loads what py4jni's start-up and first calls load, in a plain {@code java} process
 * that py4jni runs with {@code -XX:ArchiveClassesAtExit} to create its class-data-sharing
 * archive (python-binding/py4jni/_cds.py): every class of the helper jar (loaded and
 * linked, not initialized: their natives are registered only in an embedded JVM) and
 * the JDK classes a first reflective call needs.
 */
public final class CdsWarmup {
    private CdsWarmup() {
    }

    /**
     * Loads the helper jar's classes (the jar: args[0], else where this class came
     * from); exits 0, or 1 when the jar cannot be read.
     */
    public static void main(String[] args) throws Exception {
        java.io.File path;
        if (args.length > 0) {
            path = new java.io.File(args[0]);
        } else {
            CodeSource src = CdsWarmup.class.getProtectionDomain().getCodeSource();
            URL jar = src == null ? null : src.getLocation();
            if (jar == null || !"file".equals(jar.getProtocol())) {
                System.exit(1);
                return;
            }
            path = new java.io.File(jar.toURI());
        }
        ClassLoader loader = CdsWarmup.class.getClassLoader(); // null: the boot loader
        try (JarFile file = new JarFile(path)) {
            for (Enumeration<JarEntry> e = file.entries(); e.hasMoreElements();) {
                String name = e.nextElement().getName();
                if (name.endsWith(".class") && !name.contains("-")) {
                    Class.forName(name.substring(0, name.length() - 6).replace('/', '.'),
                                  false, loader);
                }
            }
        }
        // What a first call to a static method loads (py4jni resolves members by
        // reflection): public method lookup, parameter types, boxing.
        System.class.getMethod("currentTimeMillis").getParameterTypes();
        for (java.lang.reflect.Method m : String.class.getMethods()) {
            m.getModifiers();
        }
        Long.valueOf(System.nanoTime()).hashCode();
    }
}
