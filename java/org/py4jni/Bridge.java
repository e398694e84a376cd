package org.py4jni;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Java half of py4jni's in-process transport: every method the C side
 * (bridge/inproc/) calls through JNI is a public static method here. Reflection and
 * py4j's rules live in Java; the C side caches what these methods answer and makes the
 * calls itself.
 *
 * <p>Errors: a {@link BridgeException} is the bridge refusing (it becomes Py4JError
 * with the exception's message); any other Throwable is a Java error
 * (Py4JJavaError). All methods may be called from any thread.
 *
 * <p>Where py4jni deliberately differs from py4j 0.10.9.9:
 * <ul>
 * <li>Overloads of equal cost: py4j takes the first in Class.getMethods() order,
 * which HotSpot does not fix for overloads of one name (it varies between runs);
 * py4jni sorts the candidates, more specific parameter types first (see
 * {@link OverloadResolver}). Where the costs differ the choice is py4j's.
 * <li>Static calls consider static methods only (py4j also tries instance methods
 * and then fails invoking them without an object). Instance calls consider both, as
 * in py4j, so findMethod for an instance target may return a static method.
 * <li>A Python int passed to a short or byte parameter: py4j truncates silently;
 * here resolution accepts it at py4j's cost and the C side raises a clear error when
 * the value does not fit. Overflow is not checked in Java.
 * <li>"Does not exist" messages name the class, the Python argument types and
 * every public overload of that name, instead of py4j's list of Java classes.
 * <li>{@link #staticMemberKind}: a static method is found even when an instance
 * overload of the same name exists (py4j looks at the first method of that name only
 * and may refuse).
 * <li>{@link #findField} returns fields of the asked staticness only; py4j's
 * get_field on an object also reads static fields (the caller may retry as static).
 * <li>Class lookup never initialises a class (py4j runs static initialisers when it
 * resolves a name). Star imports are searched in the order they were added, then
 * java.lang (py4j searches them in alphabetical order of package, java.lang
 * included).
 * <li>{@link #classInfo}: Number subclasses other than the boxes and BigDecimal
 * (AtomicLong, LongAdder, ...) are references ('r'); py4j sends their toString()
 * as an int.
 * <li>Help pages: patterns treat only '*' and '?' as wildcards (py4j passes other
 * characters on to a regular expression); overloads of one name are listed in a
 * fixed order (py4j: the order getDeclaredMethods() happens to give).
 * </ul>
 */
public final class Bridge {
    private Bridge() {
    }

    // --- calls ------------------------------------------------------------------------

    /**
     * Resolves the public method `name` of `cls` for arguments of the given kinds
     * (py4j wire letters, one per argument: n b i L d D s j r f) and classes (non-null
     * for 'r' and 'f' only). With isStatic only static methods are candidates; else
     * instance and static ones. Throws BridgeException when no method applies.
     */
    public static Executable findMethod(Class<?> cls, String name, String kinds,
                                        Class<?>[] argClasses, boolean isStatic) {
        return OverloadResolver.findMethod(cls, name, kinds, argClasses, isStatic);
    }

    /**
     * The names of the JDK's caller-sensitive methods (JDK 17 and 25): a first test that
     * spares other methods the annotation lookup of {@link CallerFrame#wants}.
     */
    private static final Set<String> CALLER_SENSITIVE_NAMES = Set.of(
        "addExports", "addOpens", "addReads", "addUses", "asInterfaceInstance", "canAccess",
        "clearCache", "debug", "deregisterDriver", "doPrivileged", "doPrivilegedWithCombiner",
        "downcallHandle", "drivers", "enableNativeAccess", "forClass", "forEach", "forName",
        "get", "getAnonymousLogger", "getBoolean", "getBundle", "getByte", "getCallerClass",
        "getChar", "getClassLoader", "getClasses", "getConnection", "getConstructor",
        "getConstructors", "getContextClassLoader", "getDeclaredClasses",
        "getDeclaredConstructor", "getDeclaredConstructors", "getDeclaredField",
        "getDeclaredFields", "getDeclaredMethod", "getDeclaredMethods", "getDeclaringClass",
        "getDouble", "getDriver", "getDrivers", "getEnclosingClass", "getEnclosingConstructor",
        "getEnclosingMethod", "getField", "getFields", "getFloat", "getInt",
        "getInvocationHandler", "getLogger", "getLong", "getMethod", "getMethods",
        "getNestHost", "getNestMembers", "getPackage", "getPackages", "getParent",
        "getPermittedSubclasses", "getPlatformClassLoader", "getProxyClass",
        "getRecordComponents", "getResource", "getResourceAsStream", "getShort",
        "getSystemClassLoader", "getType", "getUnsafe", "invoke", "invokeDefault",
        "libraryLookup", "load", "loadInstalled", "loadLibrary", "loaderLookup", "lookup",
        "newInstance", "newProxyInstance", "newUpdater", "registerAsParallelCapable",
        "reinterpret", "set", "setAccessible", "setBoolean", "setByte", "setChar", "setDouble",
        "setFloat", "setInt", "setLong", "setSecurityManager", "setShort", "trySetAccessible",
        "upcallStub", "walk", "withTargetLayout");

    /**
     * The method to invoke through {@link CallerFrame} for resolved method `e`, or null
     * when JNI calls `e` directly (it is not caller-sensitive, or a constructor).
     */
    public static Method callerSensitive(Executable e) {
        return e instanceof Method && CALLER_SENSITIVE_NAMES.contains(e.getName())
            ? CallerFrame.wants((Method) e) : null;
    }

    /** Resolves a public constructor of `cls` like {@link #findMethod}. */
    public static Executable findConstructor(Class<?> cls, String kinds, Class<?>[] argClasses) {
        return OverloadResolver.findConstructor(cls, kinds, argClasses);
    }

    /** JNI method descriptor, e.g. "(ILjava/lang/String;[B)V"; constructors return V. */
    public static String jniSignature(Executable e) {
        StringBuilder b = new StringBuilder("(");
        for (Class<?> p : e.getParameterTypes()) {
            appendDescriptor(b, p);
        }
        b.append(')');
        if (e instanceof Method) {
            appendDescriptor(b, ((Method) e).getReturnType());
        } else {
            b.append('V');
        }
        return b.toString();
    }

    // --- fields and static members -------------------------------------------------------

    /**
     * Returns the public field `name` of `cls` (inherited ones included) that is static
     * when isStatic and an instance field otherwise, or null.
     */
    public static Field findField(Class<?> cls, String name, boolean isStatic) {
        try {
            Field f = cls.getField(name);
            if (Modifier.isStatic(f.getModifiers()) == isStatic) {
                return f;
            }
        } catch (NoSuchFieldException e) {
            return null;
        }
        // getField found the other kind first; a hidden field of the wanted kind may exist.
        for (Field f : cls.getFields()) {
            if (f.getName().equals(name) && Modifier.isStatic(f.getModifiers()) == isStatic) {
                return f;
            }
        }
        return null;
    }

    /** JNI type descriptor of the field's type ("I", "Ljava/lang/String;"). */
    public static String fieldSignature(Field f) {
        return descriptor(f.getType());
    }

    /* The MEMBER_* numbers are bridge/inproc/inproc_internal.h's p4jj_static_kind (checked by
     * tests/python/project/test_source_layout.py). */
    /** {@link #staticMemberKind}: no public static member of that name. */
    public static final int MEMBER_NONE = 0;
    /** {@link #staticMemberKind}: a public static field. */
    public static final int MEMBER_FIELD = 1;
    /** {@link #staticMemberKind}: one or more public static methods. */
    public static final int MEMBER_METHOD = 2;
    /** {@link #staticMemberKind}: a public member class. */
    public static final int MEMBER_CLASS = 3;

    /**
     * What `name` is on class `cls`, in py4j's order: 1 a public static field, else 2 a
     * public static method, else 3 a public member class, else 0 (also when only
     * instance members have that name: py4j refuses those from a class).
     */
    public static int staticMemberKind(Class<?> cls, String name) {
        if (findField(cls, name, true) != null) {
            return MEMBER_FIELD;
        }
        for (Method m : cls.getMethods()) {
            if (m.getName().equals(name) && Modifier.isStatic(m.getModifiers())) {
                return MEMBER_METHOD;
            }
        }
        return nestedClass(cls, name) != null ? MEMBER_CLASS : MEMBER_NONE;
    }

    /**
     * Returns the public member class of `cls` (inherited ones included) whose simple
     * name is `name`, or null. Its getName() is "Outer$Name" of the declaring class.
     */
    public static Class<?> nestedClass(Class<?> cls, String name) {
        for (Class<?> c : cls.getClasses()) {
            if (c.getSimpleName().equals(name)) {
                return c;
            }
        }
        return null;
    }

    // --- views and class lookup ------------------------------------------------------------

    private static final JVMView DEFAULT_VIEW = new JVMView("default");

    /** Dotted names that did not resolve in {@link #APP_LOADER} (imports play no part). */
    private static final Set<String> DOTTED_MISSES = ConcurrentHashMap.newKeySet();

    /**
     * The JDK's own application class loader when it is the system class loader (not
     * one -Djava.system.class.loader names), else null: the one loader whose misses are
     * remembered, its class path being fixed at start-up (an agent's
     * appendToSystemClassLoaderSearch aside: {@link #clearCaches} after it).
     */
    private static final ClassLoader APP_LOADER = appLoader();

    private static ClassLoader appLoader() {
        ClassLoader l = ClassLoader.getSystemClassLoader();
        boolean jdks = l != null
                && l.getClass().getName().equals("jdk.internal.loader.ClassLoaders$AppClassLoader");
        return jdks ? l : null;
    }

    /** Bumped by {@link #clearCaches()}; a view's negative cache older than it is dropped. */
    private static volatile int missEpoch;

    /** Creates a new view (java.lang.* imported). */
    public static JVMView newView(String name) {
        return new JVMView(name);
    }

    /** The view of names that no client's view qualifies (isInstanceOf's); each in-process
     * client has a view of its own (newView), as each py4j server has. */
    public static JVMView defaultView() {
        return DEFAULT_VIEW;
    }

    /**
     * Resolves `name` in `view` (null: the default view) as py4j does: the primitive
     * type names ("int", ...); the name as a fully qualified class; then, for a name
     * without '.', the single import of that simple name, else each star-imported
     * package, else java.lang. Nested classes are written "Outer$Inner". Returns null
     * when no class has that name (the caller treats it as a package). Classes load
     * through the thread's context class loader (else the system loader), as py4j's
     * default strategy loads them, without being initialised. Names that did not
     * resolve are remembered only when they resolved in the JDK's application class
     * loader (per view for simple names, until its imports change): its classes are
     * fixed at start-up. Any other loader may find a class later (a jar added to a
     * URLClassLoader, a class defined on demand) and is asked again at every lookup,
     * as py4j asks.
     */
    public static Class<?> resolveClass(JVMView view, String name) {
        if (name == null || name.isEmpty()) {
            return null;
        }
        if (view == null) {
            view = DEFAULT_VIEW;
        }
        ClassLoader loader = loader();
        boolean fixed = loader == APP_LOADER;
        if (name.indexOf('.') >= 0) {
            if (fixed && DOTTED_MISSES.contains(name)) {
                return null;
            }
            Class<?> c = load(name, loader);
            if (c == null && fixed) {
                remember(DOTTED_MISSES, name);
            }
            return c;
        }
        Class<?> primitive = Primitives.byName(name);
        if (primitive != null) {
            return primitive;
        }
        JVMView.Imports imports = view.imports();
        if (imports.epoch != missEpoch) {
            imports.misses.clear();
            imports.epoch = missEpoch;
        }
        if (fixed && imports.misses.contains(name)) {
            return null;
        }
        Class<?> c = load(name, loader);
        if (c == null) {
            String single = imports.singles.get(name);
            if (single != null) {
                c = load(single, loader);
            } else {
                for (String pkg : imports.stars) {
                    c = load(pkg + "." + name, loader);
                    if (c != null) {
                        break;
                    }
                }
                if (c == null && imports.javaLang) {
                    c = load("java.lang." + name, loader);
                }
            }
        }
        if (c == null && fixed) {
            remember(imports.misses, name);
        }
        return c;
    }

    /**
     * Forgets every remembered miss of {@link #resolveClass}: call after making new
     * classes loadable (for instance after changing the context class loader).
     */
    public static synchronized void clearCaches() {
        DOTTED_MISSES.clear();
        missEpoch++;
    }

    private static void remember(Set<String> misses, String name) {
        if (misses.size() >= JVMView.MAX_MISSES) {
            misses.clear();
        }
        misses.add(name);
    }

    private static ClassLoader loader() {
        ClassLoader l = Thread.currentThread().getContextClassLoader();
        return l != null ? l : ClassLoader.getSystemClassLoader();
    }

    /** Class.forName without initialisation; null when there is no such class. */
    private static Class<?> load(String name, ClassLoader loader) {
        try {
            return Class.forName(name, false, loader);
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /**
     * What py4j's Python client reads for each float: its server sends
     * {@code Float.toString(f)}, which Python parses as a double (this JDK's digits:
     * JDK 19 changed them for some floats).
     */
    public static double[] floatsAsPrinted(float[] fs) {
        double[] ds = new double[fs.length];
        for (int i = 0; i < fs.length; i++) {
            ds[i] = Double.parseDouble(Float.toString(fs[i]));
        }
        return ds;
    }

    /**
     * True when `o` is an instance of `classOrName`: a Class, a String resolved in the
     * default view (BridgeException when no such class), or any other object standing
     * for its own class (py4j's rule for a JavaObject). A null `o` is no instance.
     */
    public static boolean isInstanceOf(Object o, Object classOrName) {
        Class<?> c;
        if (classOrName instanceof Class) {
            c = (Class<?>) classOrName;
        } else if (classOrName instanceof String) {
            c = resolveClass(DEFAULT_VIEW, (String) classOrName);
            if (c == null) {
                throw new BridgeException("The class " + classOrName + " does not exist.");
            }
        } else if (classOrName != null) {
            c = classOrName.getClass();
        } else {
            throw new BridgeException("py4jni: isInstanceOf expects a class, a class name or "
                    + "an object, not null");
        }
        return c.isInstance(o);
    }

    /** c.getName(): "java.lang.String", "[I", "a.Outer$Inner". */
    public static String className(Class<?> c) {
        return c.getName();
    }

    // --- dir, help, stack traces ----------------------------------------------------------

    /**
     * Names for Python's dir(), sorted, one per line:
     * 'f' the public fields of target's class (static ones too, as py4j lists them);
     * 'm' the public methods of target's class (static ones and Object's too, as py4j);
     * 's' the public static fields, static methods and static member classes of target,
     * a Class; 'v' the simple names of target's single imports, target a JVMView.
     */
    public static String dir(Object target, char kind) {
        Set<String> names = new TreeSet<>();
        switch (kind) {
            case 'f':
                for (Field f : nonNull(target).getClass().getFields()) {
                    names.add(f.getName());
                }
                break;
            case 'm':
                for (Method m : nonNull(target).getClass().getMethods()) {
                    names.add(m.getName());
                }
                break;
            case 's': {
                if (!(target instanceof Class)) {
                    throw new BridgeException("py4jni: dir of static members needs a class");
                }
                Class<?> cls = (Class<?>) target;
                for (Field f : cls.getFields()) {
                    if (Modifier.isStatic(f.getModifiers())) {
                        names.add(f.getName());
                    }
                }
                for (Method m : cls.getMethods()) {
                    if (Modifier.isStatic(m.getModifiers())) {
                        names.add(m.getName());
                    }
                }
                for (Class<?> c : cls.getClasses()) {
                    if (Modifier.isStatic(c.getModifiers())) {
                        names.add(c.getSimpleName());
                    }
                }
                break;
            }
            case 'v':
                if (!(target instanceof JVMView)) {
                    throw new BridgeException("py4jni: dir of imports needs a JVM view");
                }
                names.addAll(((JVMView) target).importedNames());
                break;
            default:
                throw new BridgeException("py4jni: unknown dir kind '" + kind + "'");
        }
        return String.join("\n", names);
    }

    private static Object nonNull(Object target) {
        if (target == null) {
            throw new BridgeException("py4jni: dir of null");
        }
        return target;
    }

    /**
     * py4j's help page for `target` (a Class when isClass, else an object whose class
     * is described); `pattern` (may be null) is a star pattern matched against each
     * method and field signature line; shortName prints simple type names.
     */
    public static String help(Object target, boolean isClass, String pattern, boolean shortName) {
        if (target == null) {
            throw new BridgeException("py4jni: help on null");
        }
        Class<?> cls;
        if (isClass) {
            if (!(target instanceof Class)) {
                throw new BridgeException("py4jni: help on a class needs a Class, not "
                        + target.getClass().getName());
            }
            cls = (Class<?>) target;
        } else {
            cls = target.getClass();
        }
        return HelpPage.of(cls, pattern, shortName);
    }

    /** What t.printStackTrace() prints (causes and suppressed exceptions included). */
    public static String stackTrace(Throwable t) {
        StringWriter out = new StringWriter();
        try (PrintWriter w = new PrintWriter(out)) {
            t.printStackTrace(w);
        }
        return out.toString();
    }

    // --- per-class facts --------------------------------------------------------------------

    /**
     * (id << 8) | role: id is a small int unique to the class (from 1), role the py4j
     * wire letter objects of exactly this class convert to ('s' String, 'j' byte[], 'D'
     * BigDecimal, 'l' List, 'h' Set, 'a' Map, 'g' Iterator, 't' other arrays, 'i'
     * Integer/Short/Byte, 'L' Long, 'd' Double/Float, 'b' Boolean, 'c' Character, 'r'
     * anything else). Lock-free after the first call for a class.
     */
    public static long classInfo(Class<?> c) {
        return ClassRoles.info(c);
    }

    // --- descriptors ------------------------------------------------------------------------

    /** JNI descriptor of a type: "I", "[B", "Ljava/lang/String;". */
    static String descriptor(Class<?> c) {
        StringBuilder b = new StringBuilder();
        appendDescriptor(b, c);
        return b.toString();
    }

    private static void appendDescriptor(StringBuilder b, Class<?> c) {
        if (c.isPrimitive()) {
            b.append(Primitives.letter(c));
        } else if (c.isArray()) {
            b.append(c.getName().replace('.', '/'));
        } else {
            b.append('L').append(c.getName().replace('.', '/')).append(';');
        }
    }
}
