package org.py4jni;

/**
 * What every first call needs, done right after the JVM starts on a thread of its own
 * (a native thread jni/jvm.c attaches as a daemon), while Python goes on with its own
 * start-up: the application class loader opens the class path (the jars a class-name
 * lookup that misses reads: {@code gateway.jvm.java} asks for a class named "java"
 * first), and the reflection behind the first method lookup (public methods, the
 * overload resolver, JNI signatures) loads and initialises. The first call then finds
 * this done, or waits for the part still running (the class path is locked while a jar
 * opens). Nothing here is visible to the program: no class is defined and no program
 * class initialised, and failures are ignored (the first call meets them again and
 * reports them).
 */
final class StartWarmup {
    /** A name no class has: looking it up reads every jar of the class path. */
    private static final String ABSENT = "org.py4jni.StartWarmup$Absent";

    private StartWarmup() {
    }

    /** Does the work on the calling thread; never throws. */
    static void run() {
        try {
            Class.forName(ABSENT, false, ClassLoader.getSystemClassLoader());
        } catch (ClassNotFoundException expected) {
            // the class path is open now
        } catch (Throwable ignored) {
            return;
        }
        try {
            Bridge.jniSignature(Bridge.findMethod(Object.class, "hashCode", "",
                    new Class<?>[0], false));
        } catch (Throwable ignored) {
            // the first call meets it again
        }
    }
}
