package org.py4jni;

/**
 * The class-file edits a taken-over program needs, and the JVMTI calls that apply them
 * to classes the JVM loads itself (natives in jni/classhooks.c, registered by
 * {@code _py4jni.class_hooks_install}; a JVM without them, such as CDS's warm-up run,
 * never calls them). The load hook is armed only for named classes and only while
 * py4jni loads or retransforms them, so the program's own class loading runs with no
 * hook enabled.
 *
 * <ul>
 * <li>{@code .../py4j/GatewayServer} (py4j's own class or a shaded copy; ClientServer's
 * JavaServer extends it): the body of {@code startSocket()} becomes
 * {@code Programs.startSocket(this)}, which registers the server with py4jni instead of
 * binding a listening socket (or binds one as py4j does, for a server no taken-over
 * program starts).</li>
 * <li>{@code java/lang/Runtime}: {@code exit(int)} and {@code halt(int)} first call
 * {@link ProgramExits}, found through the system class loader (Runtime's own loader
 * cannot see py4jni's classes), which ends the calling thread's program instead of the
 * process; other threads go on to the JDK's code.</li>
 * </ul>
 */
final class ClassHooks {
    private ClassHooks() {
    }

    /** Arms the load hook for classes of these internal names (null: disarms it). */
    static native void arm(String[] internalNames);

    /** JVMTI RetransformClasses: loaded classes pass through the armed hook again. */
    static native void retransform(Class<?>[] classes);

    /** A static field read through JNI, which no access rule applies to. */
    static native Object staticField(Class<?> owner, String name, String signature);

    /** ClassLoader.findLoadedClass through JNI (protected, in a package java.base does
     * not open): the class `loader` loaded under that binary name, or null. */
    static native Class<?> findLoaded(ClassLoader loader, String name);

    /** Called by the load hook (jni/classhooks.c) and by ProgramLoader: the edited class
     * file, or null to keep it as it is. */
    static byte[] transform(ClassLoader loader, String name, byte[] classFile) {
        if (name.equals("java/lang/Runtime")) {
            byte[] out = ClassFiles.prepend(classFile, "exit", "(I)V", 5, new Gate("exiting"));
            return out == null ? null
                : ClassFiles.prepend(out, "halt", "(I)V", 5, new Gate("halting"));
        }
        if (isGatewayServer(name)) {
            return ClassFiles.replaceBody(classFile, "startSocket", "()V", 1, new StartSocket());
        }
        return null;
    }

    /** True for the internal name of a py4j GatewayServer class, shaded or not. */
    static boolean isGatewayServer(String internalName) {
        return internalName.equals("py4j/GatewayServer")
            || internalName.endsWith("/py4j/GatewayServer");
    }

    /** startSocket's new body: {@code Programs.startSocket(this)}. (Named classes, not
     * lambdas: a JVM's first lambda costs milliseconds of the launch.) */
    private static final class StartSocket implements ClassFiles.Body {
        @Override
        public byte[] emit(ClassFiles cf) {
            return new ClassFiles.Asm()
                .op(0x2a)                                                 // aload_0
                .op2(0xb8, cf.methodRef("org/py4jni/Programs", "startSocket",
                                        "(Ljava/lang/Object;)V"))         // invokestatic
                .op(0xb1)                                                 // return
                .bytes();
        }
    }

    /** The prologue of Runtime.exit / halt calling ProgramExits' method of that name. */
    private static final class Gate implements ClassFiles.Body {
        private final String method;

        Gate(String method) {
            this.method = method;
        }

        @Override
        public byte[] emit(ClassFiles cf) {
            return gate(cf, method);
        }
    }

    /**
     * {@code MethodHandles.publicLookup().findStatic(Class.forName("org.py4jni.ProgramExits",
     * false, ClassLoader.getSystemClassLoader()), method, (I)V).invokeExact(status)}:
     * straight-line, and an exception the gate throws reaches the caller unwrapped.
     */
    private static byte[] gate(ClassFiles cf, String method) {
        return new ClassFiles.Asm()
            .op2(0x13, cf.stringConst("org.py4jni.ProgramExits"))              // ldc_w
            .op(0x03)                                                          // iconst_0
            .op2(0xb8, cf.methodRef("java/lang/ClassLoader", "getSystemClassLoader",
                                    "()Ljava/lang/ClassLoader;"))
            .op2(0xb8, cf.methodRef("java/lang/Class", "forName",
                                    "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;"))
            .op2(0xb8, cf.methodRef("java/lang/invoke/MethodHandles", "publicLookup",
                                    "()Ljava/lang/invoke/MethodHandles$Lookup;"))
            .op(0x5f)                                                          // swap
            .op2(0x13, cf.stringConst(method))
            .op2(0x13, cf.methodTypeConst("(I)V"))
            .op2(0xb6, cf.methodRef("java/lang/invoke/MethodHandles$Lookup", "findStatic",
                                    "(Ljava/lang/Class;Ljava/lang/String;Ljava/lang/invoke/MethodType;)"
                                    + "Ljava/lang/invoke/MethodHandle;"))
            .op(0x1b)                                                          // iload_1
            .op2(0xb6, cf.methodRef("java/lang/invoke/MethodHandle", "invokeExact", "(I)V"))
            .bytes();
    }
}
