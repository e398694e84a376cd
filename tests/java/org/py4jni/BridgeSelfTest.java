package org.py4jni;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.py4jni.fixtures.Base;
import org.py4jni.fixtures.Callbacks;
import org.py4jni.fixtures.Color;
import org.py4jni.fixtures.Counter;
import org.py4jni.fixtures.Derived;
import org.py4jni.fixtures.Fields;
import org.py4jni.fixtures.LazyInit;
import org.py4jni.fixtures.MoreDerived;
import org.py4jni.fixtures.Operator;
import org.py4jni.fixtures.Overloads;
import org.py4jni.fixtures.Thrower;

/**
 * Plain-Java checks of {@link Bridge}: overload resolution (every rule, against the
 * fixture classes, by calling the chosen method), constructors, error messages,
 * descriptors, fields, static members, views and class lookup, dir, help pages,
 * stack traces and class roles. Prints one line per failure and "N passed, M failed"
 * last; exits 1 when anything failed.
 *
 * <p>Run: javac --release 11 -d OUT java/org/py4jni/*.java tests/java/org/py4jni/*.java
 * tests/java/org/py4jni/fixtures/*.java and java -cp OUT org.py4jni.BridgeSelfTest
 */
public final class BridgeSelfTest {
    private static int passed;
    private static int failed;

    private BridgeSelfTest() {
    }

    public static void main(String[] args) throws Exception {
        overloadsByCall();
        constructors();
        errorMessages();
        costsAndDistances();
        candidateOrder();
        descriptors();
        fields();
        staticMembers();
        views();
        dirListings();
        helpPages();
        stackTraces();
        classRoles();
        instanceChecks();
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    // --- harness ----------------------------------------------------------------------

    /** True when this JDK has the named class (features that differ between JDKs). */
    private static boolean classExists(String name) {
        try {
            Class.forName(name, false, BridgeSelfTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static void check(String what, boolean ok) {
        if (ok) {
            passed++;
        } else {
            failed++;
            System.out.println("FAIL " + what);
        }
    }

    private static void checkEquals(String what, Object expected, Object actual) {
        boolean ok = expected == null ? actual == null : expected.equals(actual);
        if (!ok) {
            what = what + ": expected <" + expected + "> got <" + actual + ">";
        }
        check(what, ok);
    }

    interface Action {
        void run() throws Exception;
    }

    /** Expects a BridgeException whose message contains every one of `parts`. */
    private static void checkRefused(String what, Action a, String... parts) {
        try {
            a.run();
            check(what + ": expected BridgeException, nothing thrown", false);
        } catch (BridgeException e) {
            for (String p : parts) {
                if (!e.getMessage().contains(p)) {
                    check(what + ": message lacks <" + p + ">: " + e.getMessage(), false);
                    return;
                }
            }
            check(what, true);
        } catch (Exception e) {
            check(what + ": expected BridgeException, got " + e, false);
        }
    }

    // --- calling what resolution chose -------------------------------------------------

    /** A sample argument per kind: the value the C side would pass. */
    private static Object sample(char kind, Class<?> argClass) throws Exception {
        switch (kind) {
            case 'n': return null;
            case 'b': return Boolean.TRUE;
            case 'i': return 1;
            case 'L': return 1L << 40;
            case 'd': return 1.5;
            case 'D': return new BigDecimal("1.1");
            case 's': return "ab";
            case 'j': return new byte[] {1};
            case 'r': return argClass.getConstructor().newInstance();
            case 'f': return operatorProxy();
            default: throw new IllegalArgumentException("kind " + kind);
        }
    }

    /** Converts a sample to the parameter type, as the C side does for each kind. */
    private static Object convert(Object value, Class<?> param) {
        if (value instanceof Number && !(value instanceof BigDecimal)) {
            Number n = (Number) value;
            Class<?> box = Primitives.box(param);
            if (box == Integer.class) {
                return n.intValue();
            } else if (box == Long.class) {
                return n.longValue();
            } else if (box == Short.class) {
                return n.shortValue();
            } else if (box == Byte.class) {
                return n.byteValue();
            } else if (box == Double.class) {
                return n.doubleValue();
            } else if (box == Float.class) {
                return n.floatValue();
            }
        }
        if (value instanceof String && Primitives.box(param) == Character.class) {
            return ((String) value).charAt(0);
        }
        return value;
    }

    private static Object call(Object target, Class<?> cls, String name, String kinds,
                               Class<?>[] argClasses, boolean isStatic) throws Exception {
        Executable e = Bridge.findMethod(cls, name, kinds, argClasses, isStatic);
        Object[] args = new Object[kinds.length()];
        Class<?>[] params = e.getParameterTypes();
        for (int i = 0; i < args.length; i++) {
            args[i] = convert(sample(kinds.charAt(i), argClasses[i]), params[i]);
        }
        try {
            boolean noTarget = java.lang.reflect.Modifier.isStatic(e.getModifiers());
            return ((Method) e).invoke(noTarget ? null : target, args);
        } catch (InvocationTargetException ex) {
            throw (Exception) ex.getCause();
        }
    }

    private static Class<?>[] classesFor(String kinds, Class<?>... refs) {
        Class<?>[] out = new Class<?>[kinds.length()];
        int r = 0;
        for (int i = 0; i < kinds.length(); i++) {
            char k = kinds.charAt(i);
            if (k == 'r') {
                out[i] = refs[r++];
            } else if (k == 'f') {
                out[i] = operatorProxy().getClass();
            }
        }
        return out;
    }

    private static Operator operatorProxy() {
        return (Operator) Proxy.newProxyInstance(BridgeSelfTest.class.getClassLoader(),
                new Class<?>[] {Operator.class}, (p, m, a) -> {
                    if (m.getName().equals("apply")) {
                        return (Integer) a[0] + (Integer) a[1];
                    }
                    return m.getName().equals("name") ? "plus" : null;
                });
    }

    /** Instance call on Overloads: expects the overload named `expected` to run. */
    private static void inst(String name, String kinds, String expected, Class<?>... refs) {
        expectCall(new Overloads(), Overloads.class, name, kinds, false, expected, refs);
    }

    /** Static call on Overloads. */
    private static void stat(String name, String kinds, String expected, Class<?>... refs) {
        expectCall(null, Overloads.class, name, kinds, true, expected, refs);
    }

    private static void expectCall(Object target, Class<?> cls, String name, String kinds,
                                   boolean isStatic, String expected, Class<?>... refs) {
        String what = (isStatic ? "static " : "") + cls.getSimpleName() + "." + name
                + "(" + kinds + ")";
        Class<?>[] argClasses = classesFor(kinds, refs);
        if (expected == null) {
            checkRefused(what + " refused",
                    () -> call(target, cls, name, kinds, argClasses, isStatic),
                    "does not exist");
            return;
        }
        try {
            checkEquals(what, expected, call(target, cls, name, kinds, argClasses, isStatic));
        } catch (Exception e) {
            check(what + ": threw " + e, false);
        }
    }

    // --- overloads ---------------------------------------------------------------------

    private static void overloadsByCall() {
        // Python int
        inst("intLong", "i", "int");
        inst("intLong", "L", "long");
        inst("intLong", "d", null);
        inst("longOnly", "i", "long");
        inst("intOnly", "i", "int");
        inst("intOnly", "L", null);
        inst("intOnly", "d", null);
        inst("shortByte", "i", "short");
        inst("byteOnly", "i", "byte");
        inst("shortOnly", "i", "short");
        inst("shortOnly", "L", null);
        inst("boxed", "i", "Integer");
        inst("boxed", "L", "Long");
        inst("longBox", "i", "Long");
        inst("doubleOnly", "i", null);
        inst("doubleOnly", "L", null);
        inst("doubleOnly", "d", "double");
        inst("longDouble", "i", "long");
        inst("longDouble", "d", "double");
        // Python float
        inst("doubleFloat", "d", "double");
        inst("floatOnly", "d", "float");
        inst("floatOnly", "i", null);
        inst("doubleBox", "d", "Double");
        inst("doubleBox", "i", null);
        inst("floatBox", "d", "Float");
        // Python str
        inst("strChar", "s", "String");
        inst("charOnly", "s", "char:a");
        inst("characterOnly", "s", "Character:a");
        inst("charOnly", "i", null);
        inst("obj", "s", "String");
        inst("obj", "i", "Object");
        inst("obj", "n", "String");
        inst("objSeq", "n", "Object");
        inst("seqOnly", "s", "CharSequence");
        inst("seqOnly", "i", null);
        // Python bool
        inst("boolOnly", "b", "boolean");
        inst("boolOnly", "i", null);
        inst("boolInt", "b", "boolean");
        inst("boolInt", "i", "int");
        inst("boolBox", "b", "Boolean");
        inst("intOnly", "b", null);
        // boxes of Python values against Number / Object / interfaces
        inst("number", "i", "Number");
        inst("number", "L", "Number");
        inst("number", "d", "Number");
        inst("number", "D", "Number");
        inst("number", "s", "Object");
        inst("number", "b", "Object");
        inst("number", "j", "Object");
        inst("serializable", "i", "Serializable");
        inst("serializable", "s", "Serializable");
        // None
        inst("nul", "n", "MoreDerived");
        inst("nul", "r", "Derived", Derived.class);
        inst("nul", "r", "Base", Base.class);
        inst("nul", "r", "MoreDerived", MoreDerived.class);
        inst("nul", "r", "Object", Counter.class);
        inst("nulPrim", "n", "String");
        inst("nulPrim", "i", "int");
        inst("nulPrimOnly", "n", null);
        inst("nulEcho", "n", "String:null");
        // bytes, Decimal
        inst("bytes", "j", "byte[]");
        inst("bytes", "s", "String");
        inst("bytesObj", "j", "Object");
        inst("decimal", "D", "BigDecimal");
        inst("decimal", "d", "double");
        inst("decimal", "i", null);
        // references
        inst("ref", "r", "Derived", MoreDerived.class);
        inst("ref", "r", "Base", Base.class);
        inst("ref", "r", null, Counter.class);
        inst("list", "r", "List", ArrayList.class);
        inst("list", "r", "Collection", HashSet.class);
        inst("list", "r", "Object", Counter.class);
        inst("list", "s", "Object");
        // arity, several arguments
        inst("arity", "", "0");
        inst("arity", "i", "1");
        inst("arity", "ii", "2");
        inst("arity", "iii", null);
        inst("pair", "is", "int,String");
        inst("pair", "Ls", "long,String");
        inst("pair", "si", "String,int");
        inst("pair", "ss", null);
        inst("pair", "ns", null);
        inst("incompatible", "s", null);
        inst("nosuch", "i", null);
        // instance targets see static methods too; static targets only static ones
        inst("mixed", "i", "instance int");
        inst("mixed", "L", "static long");
        stat("mixed", "i", "static long");
        inst("inherited", "s", "String");
        inst("inherited", "i", "Object");
        inst("baseOnly", "i", "base int");
        inst("baseStatic", "i", "base static");
        stat("baseStatic", "i", "base static");
        stat("intLong", "i", null);
        stat("sIntLong", "i", "int");
        stat("sIntLong", "L", "long");
        stat("sDoubleFloat", "d", "double");
        stat("sStrChar", "s", "String");
        stat("sNul", "n", "MoreDerived");
        stat("sAny", "j", "byte[]");
        stat("sAny", "D", "BigDecimal");
        stat("sAny", "b", "boolean");
        stat("sAny", "s", "Object");
        stat("sAny", "n", "BigDecimal");
        stat("sIncompatible", "s", null);
        // ties between equal costs: the more specific candidate (py4j: unspecified)
        inst("intInteger", "i", "int");
        inst("objSeq", "s", "CharSequence");
        inst("numberComparable", "i", "Number");
        inst("longShort", "i", "long");
        // Python proxies ('f'): the proxy class implements the interface
        try {
            Class<?>[] classes = classesFor("fii");
            Executable e = Bridge.findMethod(Callbacks.class, "apply", "fii", classes, true);
            checkEquals("proxy argument resolves", "apply(org.py4jni.fixtures.Operator, int, int)",
                    e.getName() + "(" + OverloadResolver.parameterList(e.getParameterTypes()) + ")");
            checkEquals("proxy argument runs", 5,
                    ((Method) e).invoke(null, operatorProxy(), 2, 3));
        } catch (Exception e) {
            check("proxy argument: " + e, false);
        }
        // JDK classes
        expectCall(null, Math.class, "sqrt", "i", true, null);
        try {
            Executable max = Bridge.findMethod(Math.class, "max", "ii", new Class<?>[2], true);
            checkEquals("Math.max(int, int)", "int, int",
                    OverloadResolver.parameterList(max.getParameterTypes()));
            Executable append = Bridge.findMethod(StringBuilder.class, "append", "s",
                    new Class<?>[1], false);
            checkEquals("StringBuilder.append(str)", "java.lang.String",
                    OverloadResolver.parameterList(append.getParameterTypes()));
            check("StringBuilder.append(str) is not a bridge", !((Method) append).isBridge());
            Executable remove = Bridge.findMethod(ArrayList.class, "remove", "i",
                    new Class<?>[1], false);
            checkEquals("ArrayList.remove(int)", "int",
                    OverloadResolver.parameterList(remove.getParameterTypes()));
            Executable valueOf = Bridge.findMethod(String.class, "valueOf", "n",
                    new Class<?>[1], true);
            checkEquals("String.valueOf(None)", "char[]",
                    OverloadResolver.parameterList(valueOf.getParameterTypes()));
        } catch (Exception e) {
            check("JDK overloads: " + e, false);
        }
    }

    private static void constructors() throws Exception {
        String[][] cases = {
            {"", ""}, {"i", "int"}, {"L", "long"}, {"s", "String"}, {"nn", "Derived,Object"},
        };
        for (String[] c : cases) {
            String kinds = c[0];
            Constructor<?> ctor = (Constructor<?>) Bridge.findConstructor(Overloads.class, kinds,
                    new Class<?>[kinds.length()]);
            Object[] args = new Object[kinds.length()];
            for (int i = 0; i < args.length; i++) {
                args[i] = convert(sample(kinds.charAt(i), null), ctor.getParameterTypes()[i]);
            }
            checkEquals("new Overloads(" + kinds + ")", c[1],
                    ((Overloads) ctor.newInstance(args)).made);
        }
        checkRefused("new Overloads(float)",
                () -> Bridge.findConstructor(Overloads.class, "d", new Class<?>[1]),
                "Constructor org.py4jni.fixtures.Overloads([float]) does not exist",
                "org.py4jni.fixtures.Overloads(int)", "org.py4jni.fixtures.Overloads(long)");
        checkRefused("new Counter(str)",
                () -> Bridge.findConstructor(Counter.class, "s", new Class<?>[1]),
                "Constructor org.py4jni.fixtures.Counter([str]) does not exist",
                "org.py4jni.fixtures.Counter()", "org.py4jni.fixtures.Counter(int)");
        checkRefused("new AbstractList()",
                () -> Bridge.findConstructor(AbstractList.class, "", new Class<?>[0]),
                "is abstract");
        checkRefused("new List()", () -> Bridge.findConstructor(List.class, "", new Class<?>[0]),
                "is an interface");
        checkRefused("new Thrower()", () -> Bridge.findConstructor(Thrower.class, "",
                new Class<?>[0]), "has no public constructor");
        checkEquals("new Counter.Inner()", "()V", Bridge.jniSignature(
                Bridge.findConstructor(Counter.Inner.class, "", new Class<?>[0])));
    }

    private static void errorMessages() {
        checkRefused("message for an inapplicable overload",
                () -> Bridge.findMethod(Overloads.class, "intLong", "d", new Class<?>[1], false),
                "Method intLong([float]) does not exist",
                "org.py4jni.fixtures.Overloads", "java.lang.String intLong(int)",
                "java.lang.String intLong(long)", "no overload accepts");
        checkRefused("message for a wrong arity",
                () -> Bridge.findMethod(Overloads.class, "arity", "iii", new Class<?>[3], false),
                "Method arity([int, int, int]) does not exist", "no overload takes 3 arguments",
                "arity()", "arity(int)", "arity(int, int)");
        checkRefused("message for a missing method",
                () -> Bridge.findMethod(Overloads.class, "nosuch", "i", new Class<?>[1], false),
                "Method nosuch([int]) does not exist",
                "class org.py4jni.fixtures.Overloads has no public method named nosuch");
        checkRefused("message for an instance method called statically",
                () -> Bridge.findMethod(Overloads.class, "intLong", "i", new Class<?>[1], true),
                "has no public static method named intLong", "an instance method of that name");
        checkRefused("message names every argument type",
                () -> Bridge.findMethod(Overloads.class, "pair", "nbLdDsjr",
                        new Class<?>[] {null, null, null, null, null, null, null, Counter.class},
                        false),
                "[None, bool, int, float, Decimal, str, bytes, "
                        + "JavaObject(org.py4jni.fixtures.Counter)]");
        checkRefused("message names a proxy's interfaces",
                () -> Bridge.findMethod(Overloads.class, "intOnly", "f", classesFor("f"), false),
                "PythonProxy(org.py4jni.fixtures.Operator)");
        checkRefused("message lists static candidates as static",
                () -> Bridge.findMethod(Overloads.class, "mixed", "s", new Class<?>[1], false),
                "static java.lang.String mixed(long)", "java.lang.String mixed(int)");
        checkRefused("unknown kind letter",
                () -> Bridge.findMethod(Overloads.class, "intOnly", "x", new Class<?>[1], false),
                "unknown argument kind");
        checkRefused("reference without a class",
                () -> Bridge.findMethod(Overloads.class, "ref", "r", new Class<?>[1], false),
                "has no class");
    }

    private static void costsAndDistances() {
        checkEquals("distance Integer -> Integer", 0, OverloadResolver.distance(Integer.class,
                Integer.class));
        checkEquals("distance Integer -> Number", 1, OverloadResolver.distance(Number.class,
                Integer.class));
        checkEquals("distance Integer -> Object", 2, OverloadResolver.distance(Object.class,
                Integer.class));
        checkEquals("distance Integer -> Comparable", 1, OverloadResolver.distance(
                Comparable.class, Integer.class));
        checkEquals("distance Integer -> Serializable (via Number)", 2,
                OverloadResolver.distance(java.io.Serializable.class, Integer.class));
        checkEquals("distance ArrayList -> List", 1, OverloadResolver.distance(List.class,
                ArrayList.class));
        // JDK 21 put SequencedCollection between List and Collection (JEP 431), so the
        // distances past List depend on the running JDK: the expected value is computed
        // from it, and the relations that hold on every JDK are asserted as such.
        int listToCollection = classExists("java.util.SequencedCollection") ? 2 : 1;
        checkEquals("distance List -> Collection (this JDK)", listToCollection,
                OverloadResolver.distance(Collection.class, List.class));
        int toCollection = OverloadResolver.distance(Collection.class, ArrayList.class);
        checkEquals("distance ArrayList -> Collection = 1 + List -> Collection",
                1 + listToCollection, toCollection);
        checkEquals("distance ArrayList -> Iterable = 1 + ArrayList -> Collection",
                toCollection + 1, OverloadResolver.distance(Iterable.class, ArrayList.class));
        check("ArrayList: List nearer than Collection",
                OverloadResolver.distance(List.class, ArrayList.class) < toCollection);
        checkEquals("distance MoreDerived -> Base", 2, OverloadResolver.distance(Base.class,
                MoreDerived.class));
        checkEquals("distance byte[] -> Object", 1, OverloadResolver.distance(Object.class,
                byte[].class));

        long nullObject = OverloadResolver.cost(Object.class, 'n', null);
        long nullString = OverloadResolver.cost(String.class, 'n', null);
        long nullIface = OverloadResolver.cost(CharSequence.class, 'n', null);
        long nullDeep = OverloadResolver.cost(MoreDerived.class, 'n', null);
        check("None: String beats Object", nullString < nullObject);
        check("None: Object beats an interface", nullObject < nullIface);
        check("None: MoreDerived beats String", nullDeep < nullString);
        checkEquals("None -> int", -1L, OverloadResolver.cost(int.class, 'n', null));

        Object[][] table = {
            {int.class, 'i', 0L}, {Integer.class, 'i', 0L}, {long.class, 'i', 1L},
            {Long.class, 'i', 1L}, {short.class, 'i', 1L}, {Short.class, 'i', 1L},
            {byte.class, 'i', 2L}, {Byte.class, 'i', 2L}, {double.class, 'i', -1L},
            {float.class, 'i', -1L}, {long.class, 'L', 0L}, {int.class, 'L', -1L},
            {short.class, 'L', -1L}, {double.class, 'L', -1L}, {double.class, 'd', 0L},
            {Double.class, 'd', 0L}, {float.class, 'd', 1L}, {Float.class, 'd', 1L},
            {int.class, 'd', -1L}, {long.class, 'd', -1L}, {String.class, 's', 0L},
            {char.class, 's', 1L}, {Character.class, 's', 1L}, {boolean.class, 'b', 0L},
            {Boolean.class, 'b', 0L}, {int.class, 'b', -1L}, {boolean.class, 'i', -1L},
            {byte[].class, 'j', 0L}, {String.class, 'j', -1L}, {BigDecimal.class, 'D', 0L},
            {double.class, 'D', -1L}, {Object.class, 'i', 200L}, {Number.class, 'i', 100L},
            {Comparable.class, 's', 100L}, {CharSequence.class, 's', 100L},
            {Object.class, 's', 100L}, {Object.class, 'j', 100L}, {Number.class, 'D', 100L},
            {Object.class, 'b', 100L}, {char.class, 'i', -1L},
        };
        for (Object[] row : table) {
            Class<?> param = (Class<?>) row[0];
            char kind = (Character) row[1];
            checkEquals("cost " + kind + " -> " + param.getTypeName(), row[2],
                    OverloadResolver.cost(param, kind, null));
        }
        checkEquals("cost r MoreDerived -> Base", 200L,
                OverloadResolver.cost(Base.class, 'r', MoreDerived.class));
        checkEquals("cost r Counter -> Base", -1L,
                OverloadResolver.cost(Base.class, 'r', Counter.class));
    }

    private static void candidateOrder() throws Exception {
        // The same answer every time, whatever order getMethods() reports.
        Set<Executable> seen = new HashSet<>();
        for (int i = 0; i < 20; i++) {
            seen.add(Bridge.findMethod(Overloads.class, "objSeq", "s", new Class<?>[1], false));
        }
        checkEquals("tie choice is stable", 1, seen.size());
        List<Method> candidates = new ArrayList<>();
        for (Method m : Overloads.class.getMethods()) {
            if (m.getName().equals("nul")) {
                candidates.add(m);
            }
        }
        List<Method> ordered = OverloadResolver.order(candidates);
        List<String> names = new ArrayList<>();
        for (Method m : ordered) {
            names.add(OverloadResolver.parameterList(m.getParameterTypes()));
        }
        checkEquals("candidates sorted most specific first", Arrays.asList(
                "org.py4jni.fixtures.MoreDerived", "org.py4jni.fixtures.Derived",
                "org.py4jni.fixtures.Base", "java.lang.Object"), names);
        // Bridge methods that duplicate a real method are dropped.
        int appendCharSeq = 0;
        for (Method m : OverloadResolver.order(Arrays.asList(StringBuilder.class.getMethods()))) {
            if (m.getName().equals("append") && m.getParameterCount() == 1
                    && m.getParameterTypes()[0] == CharSequence.class) {
                appendCharSeq++;
            }
        }
        checkEquals("bridge twin dropped", 1, appendCharSeq);
        // Repeated resolution gives the same method every time (speed is perf/'s business).
        Object first = Bridge.findMethod(Overloads.class, "nul", "n", new Class<?>[1], false);
        boolean same = true;
        for (int i = 0; i < 2000; i++) {
            same &= Objects.equals(first,
                    Bridge.findMethod(Overloads.class, "nul", "n", new Class<?>[1], false));
        }
        check("findMethod is stable across repeated misses", first != null && same);
    }

    private static void descriptors() throws Exception {
        checkEquals("descriptor pair(int, String)", "(ILjava/lang/String;)Ljava/lang/String;",
                Bridge.jniSignature(Overloads.class.getMethod("pair", int.class, String.class)));
        checkEquals("descriptor bytes(byte[])", "([B)Ljava/lang/String;",
                Bridge.jniSignature(Overloads.class.getMethod("bytes", byte[].class)));
        checkEquals("descriptor reset()", "()V",
                Bridge.jniSignature(Counter.class.getMethod("reset")));
        checkEquals("descriptor of a constructor",
                "(Lorg/py4jni/fixtures/Derived;Ljava/lang/Object;)V",
                Bridge.jniSignature(Overloads.class.getConstructor(Derived.class, Object.class)));
        checkEquals("descriptor with every primitive", "(ZBCSIJFD)V", Bridge.jniSignature(
                Sig.class.getMethod("all", boolean.class, byte.class, char.class, short.class,
                        int.class, long.class, float.class, double.class)));
        checkEquals("descriptor of arrays and nested classes",
                "([[Ljava/lang/String;Lorg/py4jni/fixtures/Counter$Inner;)[J",
                Bridge.jniSignature(Sig.class.getMethod("arrays", String[][].class,
                        Counter.Inner.class)));
        checkEquals("field descriptor int", "I", Bridge.fieldSignature(Fields.class.getField("i")));
        checkEquals("field descriptor String", "Ljava/lang/String;",
                Bridge.fieldSignature(Fields.class.getField("str")));
        checkEquals("field descriptor long", "J", Bridge.fieldSignature(
                Fields.class.getField("sj")));
        checkEquals("field descriptor boolean", "Z", Bridge.fieldSignature(
                Fields.class.getField("z")));
        checkEquals("field descriptor Object", "Ljava/lang/Object;", Bridge.fieldSignature(
                Fields.class.getField("obj")));
    }

    /** Signatures for descriptor checks. */
    public static final class Sig {
        private Sig() {
        }

        public static void all(boolean z, byte b, char c, short s, int i, long j, float f,
                               double d) {
        }

        public static long[] arrays(String[][] a, Counter.Inner inner) {
            return null;
        }
    }

    private static void fields() {
        check("instance field i", Bridge.findField(Fields.class, "i", false) != null);
        check("i is not static", Bridge.findField(Fields.class, "i", true) == null);
        check("static field si", Bridge.findField(Fields.class, "si", true) != null);
        check("si is not an instance field", Bridge.findField(Fields.class, "si", false) == null);
        check("inherited instance field", Bridge.findField(MoreDerived.class, "baseField", false)
                != null);
        check("inherited static field", Bridge.findField(MoreDerived.class, "BASE_STATIC", true)
                != null);
        check("package-private field hidden", Bridge.findField(Fields.class, "hidden", false)
                == null);
        check("missing field", Bridge.findField(Fields.class, "nosuch", false) == null);
        check("final static constant", Bridge.findField(Fields.class, "CONSTANT", true) != null);
    }

    private static void staticMembers() {
        checkEquals("field wins over method", Bridge.MEMBER_FIELD,
                Bridge.staticMemberKind(Fields.class, "SHARED"));
        checkEquals("static method", Bridge.MEMBER_METHOD,
                Bridge.staticMemberKind(Fields.class, "resetStatics"));
        checkEquals("inherited static method", Bridge.MEMBER_METHOD,
                Bridge.staticMemberKind(Overloads.class, "baseStatic"));
        checkEquals("static method among instance overloads", Bridge.MEMBER_METHOD,
                Bridge.staticMemberKind(Overloads.class, "mixed"));
        checkEquals("nested class", Bridge.MEMBER_CLASS,
                Bridge.staticMemberKind(Counter.class, "Inner"));
        checkEquals("instance method is no static member", Bridge.MEMBER_NONE,
                Bridge.staticMemberKind(Counter.class, "increment"));
        checkEquals("instance field is no static member", Bridge.MEMBER_NONE,
                Bridge.staticMemberKind(Counter.class, "value"));
        checkEquals("nothing", Bridge.MEMBER_NONE, Bridge.staticMemberKind(Counter.class, "zz"));
        checkEquals("enum constant", Bridge.MEMBER_FIELD,
                Bridge.staticMemberKind(Color.class, "RED"));
        checkEquals("nestedClass Inner", Counter.Inner.class,
                Bridge.nestedClass(Counter.class, "Inner"));
        checkEquals("nestedClass name", "org.py4jni.fixtures.Counter$Inner",
                Bridge.className(Bridge.nestedClass(Counter.class, "Inner")));
        checkEquals("nestedClass missing", null, Bridge.nestedClass(Counter.class, "Outer"));
        checkEquals("Map.Entry", Map.Entry.class, Bridge.nestedClass(Map.class, "Entry"));
    }

    private static void views() {
        JVMView dflt = Bridge.defaultView();
        check("one default view", dflt == Bridge.defaultView());
        checkEquals("String via java.lang", String.class, Bridge.resolveClass(dflt, "String"));
        checkEquals("null view is the default", String.class, Bridge.resolveClass(null, "String"));
        checkEquals("full name", ArrayList.class, Bridge.resolveClass(dflt, "java.util.ArrayList"));
        checkEquals("short name not imported", null, Bridge.resolveClass(dflt, "ArrayList"));
        checkEquals("package", null, Bridge.resolveClass(dflt, "java"));
        checkEquals("package twice (cached)", null, Bridge.resolveClass(dflt, "java.util"));
        checkEquals("primitive int", int.class, Bridge.resolveClass(dflt, "int"));
        checkEquals("primitive boolean", boolean.class, Bridge.resolveClass(dflt, "boolean"));
        checkEquals("nested with $", Map.Entry.class, Bridge.resolveClass(dflt,
                "java.util.Map$Entry"));
        checkEquals("nested with . is a package (as py4j)", null,
                Bridge.resolveClass(dflt, "java.util.Map.Entry"));
        checkEquals("empty name", null, Bridge.resolveClass(dflt, ""));

        JVMView v = Bridge.newView("test");
        checkEquals("view name", "test", v.name());
        int seq = v.sequenceId();
        checkEquals("before import", null, Bridge.resolveClass(v, "HashMap"));
        v.addImport("java.util.*");
        check("sequence changes", v.sequenceId() != seq);
        checkEquals("star import", HashMap.class, Bridge.resolveClass(v, "HashMap"));
        checkEquals("other views unaffected", null, Bridge.resolveClass(dflt, "HashMap"));
        v.addImport("org.py4jni.fixtures.Counter");
        checkEquals("single import", Counter.class, Bridge.resolveClass(v, "Counter"));
        v.addImport("java.util.Counter");
        checkEquals("first single import of a name stays", Counter.class,
                Bridge.resolveClass(v, "Counter"));
        check("remove unknown single import", !v.removeImport("java.util.Counter"));
        v.addImport("org.py4jni.fixtures.*");
        checkEquals("second star import", Base.class, Bridge.resolveClass(v, "Base"));
        checkEquals("dir of the view", "Counter", Bridge.dir(v, 'v'));
        check("remove star import", v.removeImport("java.util.*"));
        check("remove star import twice", !v.removeImport("java.util.*"));
        checkEquals("after removal", null, Bridge.resolveClass(v, "HashMap"));
        check("remove single import", v.removeImport("org.py4jni.fixtures.Counter"));
        checkEquals("after single removal: star import still finds it", Counter.class,
                Bridge.resolveClass(v, "Counter"));
        check("remove java.lang", v.removeImport("java.lang.*"));
        checkEquals("java.lang removed", null, Bridge.resolveClass(v, "String"));
        v.addImport("java.lang.*");
        checkEquals("java.lang back", String.class, Bridge.resolveClass(v, "String"));
        checkEquals("full names ignore imports", null, Bridge.resolveClass(v, "util.HashMap"));

        // a lookup does not run static initialisers
        Class<?> probe = Bridge.resolveClass(dflt, "org.py4jni.fixtures.LazyInit$Probe");
        check("probe found", probe != null);
        checkEquals("lookup did not initialise", 0, LazyInit.initialised);
        checkEquals("calling does", 1, LazyInit.Probe.touch());

        // repeated misses keep answering "no such class" (their cost is perf/'s business)
        boolean misses = true;
        for (int i = 0; i < 1000; i++) {
            misses &= Bridge.resolveClass(v, "NoSuchClassAnywhere") == null;
            misses &= Bridge.resolveClass(v, "no.such.pkg") == null;
        }
        check("cached misses stay misses", misses);
        Bridge.clearCaches();
        checkEquals("after clearCaches", null, Bridge.resolveClass(v, "NoSuchClassAnywhere"));
        checkEquals("after clearCaches, hits still hit", String.class,
                Bridge.resolveClass(v, "String"));
    }

    private static void dirListings() {
        String fields = Bridge.dir(new Fields(), 'f');
        List<String> f = Arrays.asList(fields.split("\n"));
        check("dir f lists instance fields", f.contains("i") && f.contains("str"));
        check("dir f lists static fields (as py4j)", f.contains("si"));
        check("dir f hides non-public fields", !f.contains("hidden"));
        check("dir f sorted", isSorted(f));
        List<String> m = Arrays.asList(Bridge.dir(new Counter(), 'm').split("\n"));
        check("dir m lists methods", m.contains("increment") && m.contains("getClass"));
        check("dir m has no duplicates", new HashSet<>(m).size() == m.size());
        check("dir m sorted", isSorted(m));
        List<String> s = Arrays.asList(Bridge.dir(Fields.class, 's').split("\n"));
        check("dir s lists static fields and methods", s.contains("SHARED")
                && s.contains("resetStatics") && s.contains("CONSTANT"));
        check("dir s hides instance members", !s.contains("i"));
        check("dir s SHARED once", s.indexOf("SHARED") == s.lastIndexOf("SHARED"));
        checkEquals("dir s Counter", "Inner\ncreated", Bridge.dir(Counter.class, 's'));
        checkEquals("dir v empty", "", Bridge.dir(Bridge.newView("empty"), 'v'));
        checkRefused("dir s needs a class", () -> Bridge.dir("x", 's'), "needs a class");
        checkRefused("dir unknown kind", () -> Bridge.dir("x", 'q'), "unknown dir kind");
    }

    private static boolean isSorted(List<String> l) {
        for (int i = 1; i < l.size(); i++) {
            if (l.get(i - 1).compareTo(l.get(i)) >= 0) {
                return false;
            }
        }
        return true;
    }

    /** Expected pages were produced by py4j 0.10.9.9 (gateway.help(..., display=False)). */
    private static void helpPages() {
        String counter = "Help on class Counter in package org.py4jni.fixtures:\n\nCounter {\n|  \n"
                + "|  Methods defined here:\n|  \n|  add(int) : int\n|  \n"
                + "|  equals(Object) : boolean\n|  \n|  get() : int\n|  \n|  hashCode() : int\n|  \n"
                + "|  increment() : int\n|  \n|  reset() : void\n|  \n|  self() : Counter\n|  \n"
                + "|  toString() : String\n|  \n"
                + "|  ------------------------------------------------------------\n"
                + "|  Fields defined here:\n|  \n|  created : int\n|  \n|  value : int\n|  \n"
                + "|  ------------------------------------------------------------\n"
                + "|  Internal classes defined here:\n|  \n|  Inner\n|  \n}\n";
        checkEquals("help Counter", counter, Bridge.help(Counter.class, true, null, true));
        checkEquals("help on an object", counter, Bridge.help(new Counter(), false, null, true));
        String get = "Help on class Counter in package org.py4jni.fixtures:\n\nCounter {\n|  \n"
                + "|  Methods defined here:\n|  \n|  get() : int\n|  \n"
                + "|  ------------------------------------------------------------\n"
                + "|  Fields defined here:\n|  \n"
                + "|  ------------------------------------------------------------\n"
                + "|  Internal classes defined here:\n|  \n|  Inner\n|  \n}\n";
        checkEquals("help Counter get*", get, Bridge.help(Counter.class, true, "get*", true));
        String add = "Help on class Counter in package org.py4jni.fixtures:\n\n"
                + "org.py4jni.fixtures.Counter {\n|  \n"
                + "|  Methods defined here:\n|  \n|  add(int) : int\n|  \n"
                + "|  ------------------------------------------------------------\n"
                + "|  Fields defined here:\n|  \n"
                + "|  ------------------------------------------------------------\n"
                + "|  Internal classes defined here:\n|  \n|  org.py4jni.fixtures.Counter.Inner\n"
                + "|  \n}\n";
        checkEquals("help Counter a?d(* long names", add,
                Bridge.help(Counter.class, true, "a?d(*", false));
        String list = Bridge.help(ArrayList.class, true, "add*", false);
        check("help ArrayList header", list.startsWith("Help on class ArrayList in package "
                + "java.util:\n\njava.util.ArrayList extends java.util.AbstractList implements "
                + "java.util.List, java.util.RandomAccess, java.lang.Cloneable, java.io.Serializable"
                + " {\n"));
        check("help ArrayList add*", list.contains("|  add(java.lang.Object) : boolean\n")
                && list.contains("|  add(int, java.lang.Object) : void\n")
                && !list.contains("remove"));
        String color = Bridge.help(Color.class, true, null, true);
        check("help enum", color.startsWith("Help on class Color in package "
                + "org.py4jni.fixtures:\n\nColor extends java.lang.Enum {\n")
                && color.contains("|  values() : Color[]\n") && color.contains("|  RED : Color\n"));
        check("help pattern with regex characters", Bridge.help(Counter.class, true, "[*",
                true).contains("Methods defined here:"));
        checkRefused("help on a class needs a Class",
                () -> Bridge.help("x", true, null, true), "needs a Class");
    }

    private static void stackTraces() {
        String trace = Bridge.stackTrace(Thrower.make("boom"));
        check("trace names the exception", trace.startsWith(
                "java.lang.IllegalStateException: boom\n"));
        check("trace has frames", trace.contains("\tat org.py4jni.fixtures.Thrower.make("));
        check("trace has the cause", trace.contains("Caused by: java.io.IOException: cause of boom"));
        try {
            Thrower.checked("x");
        } catch (IOException e) {
            check("trace of a thrown exception", Bridge.stackTrace(e).startsWith(
                    "java.io.IOException: checked: x"));
        }
    }

    private static void classRoles() throws Exception {
        Object[][] table = {
            {String.class, 's'}, {byte[].class, 'j'}, {BigDecimal.class, 'D'},
            {ArrayList.class, 'l'}, {Arrays.asList(1).getClass(), 'l'}, {HashSet.class, 'h'},
            {HashMap.class, 'a'}, {ConcurrentHashMap.class, 'a'},
            {new ArrayList<>().iterator().getClass(), 'g'}, {int[].class, 't'},
            {Object[].class, 't'}, {String[][].class, 't'}, {Integer.class, 'i'},
            {Short.class, 'i'}, {Byte.class, 'i'}, {Long.class, 'L'}, {Double.class, 'd'},
            {Float.class, 'd'}, {Boolean.class, 'b'}, {Character.class, 'c'},
            {BigInteger.class, 'r'}, {Class.class, 'r'}, {Color.class, 'r'},
            {Counter.class, 'r'}, {Object.class, 'r'}, {Thread.class, 'r'},
        };
        Map<Long, Class<?>> ids = new HashMap<>();
        for (Object[] row : table) {
            Class<?> c = (Class<?>) row[0];
            long info = Bridge.classInfo(c);
            checkEquals("role of " + c.getName(), row[1], (char) (info & 0xff));
            check("id of " + c.getName() + " >= 1", (info >> 8) >= 1);
            check("id of " + c.getName() + " unique", ids.put(info >> 8, c) == null);
            checkEquals("classInfo stable for " + c.getName(), info, Bridge.classInfo(c));
        }
        // concurrent first calls agree on one id per class
        Class<?>[] classes = {Fields.class, Derived.class, Base.class, MoreDerived.class,
            Thrower.class, Callbacks.class, Operator.class, LazyInit.class, Counter.Inner.class};
        Map<Class<?>, Set<Long>> seen = new ConcurrentHashMap<>();
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            threads[t] = new Thread(() -> {
                for (Class<?> c : classes) {
                    seen.computeIfAbsent(c, k -> ConcurrentHashMap.newKeySet())
                            .add(Bridge.classInfo(c));
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        boolean oneEach = true;
        for (Set<Long> s : seen.values()) {
            oneEach &= s.size() == 1;
        }
        check("one id per class across threads", oneEach && seen.size() == classes.length);
        long info = Bridge.classInfo(String.class);
        boolean stable = true;
        for (int i = 0; i < 1000; i++) {
            stable &= Bridge.classInfo(String.class) == info;
        }
        check("classInfo is stable for a class", info != 0 && stable);
    }

    private static void instanceChecks() {
        check("isInstanceOf by name", Bridge.isInstanceOf("abc", "java.lang.CharSequence"));
        check("isInstanceOf by short name (default view)", Bridge.isInstanceOf("abc",
                "CharSequence"));
        check("isInstanceOf by class", Bridge.isInstanceOf(new ArrayList<>(), List.class));
        check("isInstanceOf negative", !Bridge.isInstanceOf(new ArrayList<>(), Set.class));
        check("null is no instance", !Bridge.isInstanceOf(null, Object.class));
        checkRefused("isInstanceOf unknown class", () -> Bridge.isInstanceOf("x", "no.Such"),
                "The class no.Such does not exist.");
        checkEquals("className of int[]", "[I", Bridge.className(int[].class));
        checkEquals("className of a nested class", "org.py4jni.fixtures.Counter$Inner",
                Bridge.className(Counter.Inner.class));
    }
}
