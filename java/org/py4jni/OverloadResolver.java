package org.py4jni;

import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * py4j's overload resolution (py4j's MethodInvoker/TypeConverter cost rules), over argument
 * kinds instead of argument values.
 *
 * <p>Each candidate gets a cost per argument, or "not applicable"; the first
 * candidate of total cost 0 wins, else the strictly lowest total, ties going to the
 * earlier candidate. Costs (P the parameter type; a Python value counts as its box
 * class: int 'i' Integer, 'L' Long, float 'd' Double, str 's' String, bool 'b'
 * Boolean, Decimal 'D' BigDecimal, bytes 'j' byte[]; 'r' and 'f' use the class the
 * C side passes):
 * <ul>
 * <li>P assignable from the argument's class: 100 x distance, where distance counts
 * superclass steps, or, when P is an interface, the breadth-first level at which it
 * appears among the interfaces of the class and its superclasses (py4j's
 * TypeUtil.computeDistance);
 * <li>numbers (py4j's numeric conversions): to long/Long from Integer 1 (Long 0);
 * to int/Integer from Integer 0; to short/Short from Integer 1; to byte/Byte from
 * Integer 2; to double/Double from Double 0; to float/Float from Double 1. Long
 * never narrows, Integer/Long never become double/float, Double never becomes an
 * integral type;
 * <li>to char/Character: a Python str 1 (its first character); a JavaObject never,
 * not even a CharSequence (py4j: any CharSequence 1; a deliberate deviation);
 * <li>to boolean: Boolean 0;
 * <li>None: any reference type, NULL_COST - 100 x (superclass steps from Object),
 * so the deepest class wins; an interface costs NULL_COST + 1, below Object, as in
 * py4j; a primitive is not applicable.
 * </ul>
 *
 * <p>Candidate order. py4j takes candidates in the order of Class.getMethods(),
 * which HotSpot leaves unspecified for overloads of one name (it changes from run to
 * run), so py4j's choice between two candidates of equal cost is not reproducible.
 * py4jni sorts instead, making ties deterministic and Java-like: (1) bridge methods
 * last, and dropped when a non-bridge method has the same parameter types; (2) more
 * specific parameter lists first (the sum of a specificity rank per parameter, which
 * is higher for a subtype than for any of its supertypes and for a primitive than for
 * its box: int before Integer, CharSequence before Object, Number before
 * Comparable); (3) fewer array parameters first (None to println(String) or
 * println(char[]): String, py4j's usual pick, prints "null"); (4) methods declared
 * in a subclass before inherited ones; (5) the parameter type names, as text. Where the costs differ, the order plays no part and
 * the choice is py4j's.
 */
final class OverloadResolver {
    /** py4j's MethodInvoker.MAX_DISTANCE: the base cost of passing None. */
    static final long NULL_COST = 100_000_000L;
    static final long DISTANCE_FACTOR = 100;
    static final long NOT_APPLICABLE = -1;

    private OverloadResolver() {
    }

    // --- entry points -----------------------------------------------------------------

    static Method findMethod(Class<?> cls, String name, String kinds, Class<?>[] argClasses,
                             boolean isStatic) {
        checkArguments(kinds, argClasses);
        List<Method> sameName = new ArrayList<>();
        List<Method> candidates = new ArrayList<>();
        for (Method m : cls.getMethods()) {
            if (!m.getName().equals(name)) {
                continue;
            }
            if (isStatic && !Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            sameName.add(m);
            if (m.getParameterCount() == kinds.length()) {
                candidates.add(m);
            }
        }
        Executable best = choose(order(candidates), kinds, argClasses);
        if (best == null) {
            throw new BridgeException(methodError(cls, name, kinds, argClasses, isStatic,
                    order(sameName)));
        }
        return (Method) best;
    }

    static Constructor<?> findConstructor(Class<?> cls, String kinds, Class<?>[] argClasses) {
        checkArguments(kinds, argClasses);
        List<Constructor<?>> all = new ArrayList<>(Arrays.asList(cls.getConstructors()));
        List<Constructor<?>> candidates = new ArrayList<>();
        for (Constructor<?> c : all) {
            if (c.getParameterCount() == kinds.length()) {
                candidates.add(c);
            }
        }
        Executable best = choose(order(candidates), kinds, argClasses);
        if (best == null || Modifier.isAbstract(cls.getModifiers())) {
            throw new BridgeException(constructorError(cls, kinds, argClasses, order(all)));
        }
        return (Constructor<?>) best;
    }

    /** Returns the chosen candidate, or null when none is applicable. */
    static Executable choose(List<? extends Executable> ordered, String kinds,
                             Class<?>[] argClasses) {
        Executable best = null;
        long bestCost = Long.MAX_VALUE;
        for (Executable e : ordered) {
            long cost = totalCost(e.getParameterTypes(), kinds, argClasses);
            if (cost == 0) {
                return e;
            }
            if (cost > 0 && cost < bestCost) {
                best = e;
                bestCost = cost;
            }
        }
        return best;
    }

    /** Returns the summed cost of passing the arguments to `params`, or NOT_APPLICABLE. */
    static long totalCost(Class<?>[] params, String kinds, Class<?>[] argClasses) {
        long total = 0;
        for (int i = 0; i < params.length; i++) {
            long c = cost(params[i], kinds.charAt(i), argClasses == null ? null : argClasses[i]);
            if (c < 0) {
                return NOT_APPLICABLE;
            }
            total += c;
        }
        return total;
    }

    // --- per-argument cost ----------------------------------------------------------------

    /** Cost of passing one argument of `kind` (and class `argClass` for 'r'/'f') to `param`. */
    static long cost(Class<?> param, char kind, Class<?> argClass) {
        if (kind == 'n') {
            if (param.isPrimitive()) {
                return NOT_APPLICABLE;
            }
            if (param.isInterface()) {
                return NULL_COST + 1;
            }
            return NULL_COST - DISTANCE_FACTOR * superclassSteps(param);
        }
        Class<?> arg = kind == 'r' || kind == 'f' ? argClass : boxOf(kind);
        return valueCost(param, arg);
    }

    /** The Java class py4j gives a Python value of `kind` ('i' Integer, ...). */
    static Class<?> boxOf(char kind) {
        switch (kind) {
            case 'b': return Boolean.class;
            case 'i': return Integer.class;
            case 'L': return Long.class;
            case 'd': return Double.class;
            case 'D': return BigDecimal.class;
            case 's': return String.class;
            case 'j': return byte[].class;
            default: throw new BridgeException("py4jni: unknown argument kind '" + kind + "'");
        }
    }

    /** Cost of passing a non-null argument of class `arg` to `param` (py4j's rules). */
    static long valueCost(Class<?> param, Class<?> arg) {
        if (param.isAssignableFrom(arg)) {
            long d = distance(param, arg);
            return d < 0 ? NOT_APPLICABLE : DISTANCE_FACTOR * d;
        }
        int to = numericRank(param);
        int from = numericRank(arg);
        if (to != NOT_NUMERIC && from != NOT_NUMERIC) {
            return numericCost(to, from);
        }
        if (param == char.class || param == Character.class) {
            if (arg == Character.class) {
                return 0;
            }
            // Only a Python str (its box String) becomes a char, its first character, as
            // in py4j. A JavaObject never does, even a CharSequence (py4j would pass its
            // first character: sb.append(otherBuilder) appending one letter). Deliberate
            // deviation, docs/deviations.md.
            return arg == String.class ? 1 : NOT_APPLICABLE;
        }
        if (param == boolean.class && arg == Boolean.class) {
            return 0;
        }
        return NOT_APPLICABLE;
    }

    private static final int NOT_NUMERIC = -1;
    private static final int BYTE = 0;
    private static final int SHORT = 1;
    private static final int INT = 2;
    private static final int LONG = 3;
    private static final int FLOAT = 4;
    private static final int DOUBLE = 5;

    /** The numeric type of a primitive or box class, or NOT_NUMERIC (char is not numeric). */
    private static int numericRank(Class<?> c) {
        if (c == int.class || c == Integer.class) {
            return INT;
        }
        if (c == long.class || c == Long.class) {
            return LONG;
        }
        if (c == double.class || c == Double.class) {
            return DOUBLE;
        }
        if (c == float.class || c == Float.class) {
            return FLOAT;
        }
        if (c == short.class || c == Short.class) {
            return SHORT;
        }
        if (c == byte.class || c == Byte.class) {
            return BYTE;
        }
        return NOT_NUMERIC;
    }

    /** py4j's numeric conversion table: the cost from number type `from` to `to`. */
    private static long numericCost(int to, int from) {
        switch (to) {
            case LONG:
                return from <= LONG ? LONG - from : NOT_APPLICABLE;
            case INT:
                return from <= INT ? INT - from : NOT_APPLICABLE;
            case SHORT:
                if (from <= SHORT) {
                    return SHORT - from;
                }
                return from == INT ? 1 : NOT_APPLICABLE;
            case BYTE:
                if (from == BYTE) {
                    return 0;
                }
                return from == INT ? 2 : NOT_APPLICABLE;
            case DOUBLE:
                return from == DOUBLE ? 0 : from == FLOAT ? 1 : NOT_APPLICABLE;
            case FLOAT:
                return from == FLOAT ? 0 : from == DOUBLE ? 1 : NOT_APPLICABLE;
            default:
                return NOT_APPLICABLE;
        }
    }

    /**
     * Distance from `child` up to `parent` (parent assignable from child): 0 when
     * equal, the number of superclass steps when parent is a superclass, else the
     * breadth-first level of parent among interfaces, where level 1 holds the
     * interfaces child implements directly and level k+1 the superinterfaces of level
     * k plus the interfaces of the k-th superclass. Returns -1 when not found.
     */
    static int distance(Class<?> parent, Class<?> child) {
        if (parent == child) {
            return 0;
        }
        int steps = 1;
        for (Class<?> s = child.getSuperclass(); s != null; s = s.getSuperclass(), steps++) {
            if (s == parent) {
                return steps;
            }
        }
        Set<Class<?>> seen = new HashSet<>();
        List<Class<?>> level = new ArrayList<>(Arrays.asList(child.getInterfaces()));
        Class<?> owner = child;
        for (int depth = 1; !level.isEmpty() || owner != null; depth++) {
            List<Class<?>> next = new ArrayList<>();
            for (Class<?> i : level) {
                if (i == parent) {
                    return depth;
                }
                seen.add(i);
                addUnseen(i.getInterfaces(), seen, next);
            }
            owner = owner == null ? null : owner.getSuperclass();
            if (owner != null) {
                addUnseen(owner.getInterfaces(), seen, next);
            }
            level = next;
        }
        return -1;
    }

    private static void addUnseen(Class<?>[] from, Set<Class<?>> seen, List<Class<?>> to) {
        for (Class<?> c : from) {
            if (!seen.contains(c)) {
                to.add(c);
            }
        }
    }

    /** Superclass steps from `c` up to Object (Object 0, String 1, int[] 1). */
    private static int superclassSteps(Class<?> c) {
        int n = 0;
        for (Class<?> s = c.getSuperclass(); s != null; s = s.getSuperclass()) {
            n++;
        }
        return n;
    }

    // --- candidate order --------------------------------------------------------------------

    /**
     * Returns the candidates in resolution order (see the class comment); drops a
     * bridge method when a non-bridge candidate has the same parameter types.
     */
    static <E extends Executable> List<E> order(List<E> candidates) {
        List<E> out = new ArrayList<>(candidates.size());
        for (E e : candidates) {
            if (e instanceof Method && ((Method) e).isBridge() && hasTwin(candidates, e)) {
                continue;
            }
            out.add(e);
        }
        if (out.size() > 1) {
            out.sort(CANDIDATE_ORDER);
        }
        return out;
    }

    private static boolean hasTwin(List<? extends Executable> all, Executable bridge) {
        for (Executable e : all) {
            if (e != bridge && !((Method) e).isBridge()
                    && Arrays.equals(e.getParameterTypes(), bridge.getParameterTypes())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Bridge methods last, then more specific parameters, then fewer arrays, then subclass
     * declarations, then parameter names. A plain class, not lambdas: the first resolution
     * runs during start-up, where bootstrapping invokedynamic costs milliseconds.
     */
    private static final Comparator<Executable> CANDIDATE_ORDER = new CandidateOrder();

    private static final class CandidateOrder implements Comparator<Executable> {
        @Override
        public int compare(Executable a, Executable b) {
            int c = Boolean.compare(isBridge(a), isBridge(b));
            if (c == 0) {
                c = Long.compare(specificity(b.getParameterTypes()), specificity(a.getParameterTypes()));
            }
            if (c == 0) { // None to String or char[] (println, insert): String, as py4j picks
                c = Integer.compare(arrayCount(a.getParameterTypes()), arrayCount(b.getParameterTypes()));
            }
            if (c == 0) {
                c = Integer.compare(superclassSteps(b.getDeclaringClass()),
                        superclassSteps(a.getDeclaringClass()));
            }
            if (c == 0) {
                c = parameterList(a.getParameterTypes()).compareTo(parameterList(b.getParameterTypes()));
            }
            return c;
        }

        private static boolean isBridge(Executable e) {
            return e instanceof Method && ((Method) e).isBridge();
        }
    }

    private static int arrayCount(Class<?>[] params) {
        int n = 0;
        for (Class<?> p : params) {
            n += p.isArray() ? 1 : 0;
        }
        return n;
    }

    private static long specificity(Class<?>[] params) {
        long sum = 0;
        for (Class<?> p : params) {
            sum += SPECIFICITY.get(p);
        }
        return sum;
    }

    /**
     * A rank that is strictly higher for a type than for each of its supertypes:
     * Object 0; an interface 1 + the highest rank of its superinterfaces; a class
     * 1 + the highest rank of its superclass and interfaces; an array 2 + the rank of
     * its component type (0 for a primitive component), above Object, Cloneable and
     * Serializable; a primitive 1 + the rank of its box.
     */
    private static final ClassValue<Integer> SPECIFICITY = new ClassValue<Integer>() {
        @Override
        protected Integer computeValue(Class<?> c) {
            if (c == Object.class) {
                return 0;
            }
            if (c.isPrimitive()) {
                return c == void.class ? 0 : 1 + get(Primitives.box(c));
            }
            if (c.isArray()) {
                Class<?> comp = c.getComponentType();
                return 2 + (comp.isPrimitive() ? 0 : get(comp));
            }
            int max = 0;
            if (c.getSuperclass() != null) {
                max = get(c.getSuperclass());
            }
            for (Class<?> i : c.getInterfaces()) {
                max = Math.max(max, get(i));
            }
            return 1 + max;
        }
    };

    // --- messages ---------------------------------------------------------------------------

    private static void checkArguments(String kinds, Class<?>[] argClasses) {
        if (argClasses != null && argClasses.length != kinds.length()) {
            throw new BridgeException("py4jni: " + kinds.length() + " argument kinds but "
                    + argClasses.length + " argument classes");
        }
        for (int i = 0; i < kinds.length(); i++) {
            char k = kinds.charAt(i);
            if (k == 'r' || k == 'f') {
                if (argClasses == null || argClasses[i] == null) {
                    throw new BridgeException("py4jni: argument " + i + " (kind '" + k
                            + "') has no class");
                }
            } else if (k != 'n') {
                boxOf(k);
            }
        }
    }

    /** "[int, str, JavaObject(java.util.ArrayList)]": the arguments as Python sees them. */
    static String pythonTypes(String kinds, Class<?>[] argClasses) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < kinds.length(); i++) {
            if (i > 0) {
                b.append(", ");
            }
            b.append(pythonType(kinds.charAt(i), argClasses == null ? null : argClasses[i]));
        }
        return b.append(']').toString();
    }

    private static String pythonType(char kind, Class<?> argClass) {
        switch (kind) {
            case 'n': return "None";
            case 'b': return "bool";
            case 'i':
            case 'L': return "int";
            case 'd': return "float";
            case 'D': return "Decimal";
            case 's': return "str";
            case 'j': return "bytes";
            case 'r': return "JavaObject(" + argClass.getName() + ")";
            case 'f': {
                StringBuilder b = new StringBuilder("PythonProxy(");
                Class<?>[] ifaces = argClass.getInterfaces();
                for (int i = 0; i < ifaces.length; i++) {
                    b.append(i > 0 ? ", " : "").append(ifaces[i].getName());
                }
                return b.append(')').toString();
            }
            default: return "?" + kind;
        }
    }

    private static String methodError(Class<?> cls, String name, String kinds,
                                      Class<?>[] argClasses, boolean isStatic,
                                      List<Method> sameName) {
        StringBuilder b = new StringBuilder("Method ").append(name)
                .append('(').append(pythonTypes(kinds, argClasses)).append(") does not exist");
        String what = isStatic ? "public static method" : "public method";
        if (sameName.isEmpty()) {
            b.append(": class ").append(cls.getName()).append(" has no ").append(what)
                    .append(" named ").append(name);
            if (isStatic && hasInstanceMethod(cls, name)) {
                b.append(" (an instance method of that name exists: call it on an object)");
            }
            return b.toString();
        }
        b.append(" in class ").append(cls.getName()).append(": ");
        if (!hasArity(sameName, kinds.length())) {
            b.append("no overload takes ").append(kinds.length())
                    .append(kinds.length() == 1 ? " argument" : " arguments");
        } else {
            b.append("no overload accepts these argument types");
        }
        b.append("; candidates:");
        for (Method m : sameName) {
            b.append("\n  ").append(describe(m));
        }
        return b.toString();
    }

    private static String constructorError(Class<?> cls, String kinds, Class<?>[] argClasses,
                                           List<Constructor<?>> all) {
        StringBuilder b = new StringBuilder("Constructor ").append(cls.getName())
                .append('(').append(pythonTypes(kinds, argClasses)).append(") does not exist");
        if (cls.isInterface()) {
            return b.append(": ").append(cls.getName()).append(" is an interface").toString();
        }
        if (Modifier.isAbstract(cls.getModifiers())) {
            return b.append(": ").append(cls.getName()).append(" is abstract").toString();
        }
        if (all.isEmpty()) {
            return b.append(": class ").append(cls.getName())
                    .append(" has no public constructor").toString();
        }
        b.append(": ");
        if (!hasArity(all, kinds.length())) {
            b.append("no constructor takes ").append(kinds.length())
                    .append(kinds.length() == 1 ? " argument" : " arguments");
        } else {
            b.append("no constructor accepts these argument types");
        }
        b.append("; candidates:");
        for (Constructor<?> c : all) {
            b.append("\n  ").append(describe(c));
        }
        return b.toString();
    }

    private static boolean hasInstanceMethod(Class<?> cls, String name) {
        for (Method m : cls.getMethods()) {
            if (m.getName().equals(name) && !Modifier.isStatic(m.getModifiers())) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasArity(List<? extends Executable> list, int n) {
        for (Executable e : list) {
            if (e.getParameterCount() == n) {
                return true;
            }
        }
        return false;
    }

    /** "static String mixed(long)", "org.x.Counter(int)": a candidate in an error message. */
    static String describe(Executable e) {
        StringBuilder b = new StringBuilder();
        if (e instanceof Method) {
            Method m = (Method) e;
            if (Modifier.isStatic(m.getModifiers())) {
                b.append("static ");
            }
            b.append(m.getReturnType().getTypeName()).append(' ').append(m.getName());
        } else {
            b.append(e.getDeclaringClass().getName());
        }
        b.append('(').append(parameterList(e.getParameterTypes())).append(')');
        return b.toString();
    }

    /** "int, java.lang.String[]". */
    static String parameterList(Class<?>[] params) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < params.length; i++) {
            if (i > 0) {
                b.append(", ");
            }
            b.append(params[i].getTypeName());
        }
        return b.toString();
    }
}
