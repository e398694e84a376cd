package org.py4jni;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.URLConnection;
import java.security.CodeSource;
import java.security.ProtectionDomain;

/**
 * The class loader of a program launched while the JVM runs already: its class path
 * (as the system class loader would read it, manifest Class-Path included) over the
 * platform class loader, so its classes are its own as in a process of its own. Its
 * py4j GatewayServer classes are edited as {@link ClassHooks} edits them; the one
 * py4jni class the edit calls is the helper's.
 */
final class ProgramLoader extends URLClassLoader {
    static {
        registerAsParallelCapable();
    }

    ProgramLoader(URL[] classPath, String name) {
        super(name, classPath, ClassLoader.getPlatformClassLoader());
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (name.equals("org.py4jni.Programs")) {
            return Programs.class;
        }
        return super.loadClass(name, resolve);
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        String internal = name.replace('.', '/');
        if (!ClassHooks.isGatewayServer(internal)) {
            return super.findClass(name);
        }
        URL url = findResource(internal + ".class");
        if (url == null) {
            throw new ClassNotFoundException(name);
        }
        try {
            URLConnection c = url.openConnection();
            byte[] bytes;
            try (InputStream s = c.getInputStream()) {
                bytes = s.readAllBytes();
            }
            byte[] edited = ClassHooks.transform(this, internal, bytes);
            if (edited != null) {
                bytes = edited;
            }
            URL where = c instanceof JarURLConnection ? ((JarURLConnection) c).getJarFileURL() : url;
            String pkg = name.substring(0, name.lastIndexOf('.'));
            if (getDefinedPackage(pkg) == null) {
                try {
                    definePackage(pkg, null, null, null, null, null, null, null);
                } catch (IllegalArgumentException raced) {
                    // another thread defined it
                }
            }
            ProtectionDomain pd = new ProtectionDomain(new CodeSource(where, (java.security.CodeSigner[]) null),
                                                       null, this, null);
            return defineClass(name, bytes, 0, bytes.length, pd);
        } catch (IOException e) {
            throw new ClassNotFoundException(name, e);
        }
    }
}
