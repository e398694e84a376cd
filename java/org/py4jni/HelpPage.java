package org.py4jni;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The text of py4j's help page (gateway.help(obj, display=False)) for a class:
 * a header, then the public methods, public fields and public member classes the
 * class itself declares (inherited members are not listed), each section sorted by
 * name. Types print by canonical name, shortened to the part after the last '.'
 * when shortName is set; "extends" and "implements" always print full names, as in
 * py4j.
 *
 * <p>The pattern filters methods and fields (not member classes) by their whole
 * signature line ("add(int) : int", "value : int"): '*' matches any text and '?' at
 * most one character, as in py4j. Unlike py4j, every other character matches itself
 * (py4j passes most of them on to a regular expression).
 */
final class HelpPage {
    private static final String BAR = "|  ";
    private static final String GAP = "\n|  \n";
    private static final String SEPARATOR =
            BAR + "------------------------------------------------------------\n";

    private HelpPage() {
    }

    static String of(Class<?> cls, String pattern, boolean shortName) {
        Pattern filter = compile(pattern);
        String canonical = canonicalName(cls);
        StringBuilder b = new StringBuilder(1024);
        b.append("Help on class ").append(shorten(canonical, true))
                .append(" in package ").append(JVMView.packageOf(canonical)).append(":\n\n")
                .append(classSignature(cls, shortName)).append(" {").append(GAP);

        b.append(BAR).append("Methods defined here:").append(GAP);
        List<String> methods = new ArrayList<>();
        List<Method> declared = new ArrayList<>();
        for (Method m : cls.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers())) {
                declared.add(m);
            }
        }
        declared.sort(Comparator.comparing(Method::getName)
                .thenComparing(m -> OverloadResolver.parameterList(m.getParameterTypes()))
                .thenComparing(m -> m.getReturnType().getName()));
        for (Method m : declared) {
            methods.add(methodSignature(m, shortName));
        }
        appendMatching(b, methods, filter);

        b.append(SEPARATOR).append(BAR).append("Fields defined here:").append(GAP);
        List<String> fields = new ArrayList<>();
        List<Field> declaredFields = new ArrayList<>();
        for (Field f : cls.getDeclaredFields()) {
            if (Modifier.isPublic(f.getModifiers())) {
                declaredFields.add(f);
            }
        }
        declaredFields.sort(Comparator.comparing(Field::getName));
        for (Field f : declaredFields) {
            fields.add(f.getName() + " : " + shorten(canonicalName(f.getType()), shortName));
        }
        appendMatching(b, fields, filter);

        b.append(SEPARATOR).append(BAR).append("Internal classes defined here:").append(GAP);
        List<Class<?>> members = new ArrayList<>();
        for (Class<?> c : cls.getDeclaredClasses()) {
            if (Modifier.isPublic(c.getModifiers())) {
                members.add(c);
            }
        }
        members.sort(Comparator.comparing(HelpPage::canonicalName));
        for (Class<?> c : members) {
            b.append(BAR).append(classSignature(c, shortName)).append(GAP);
        }
        b.append("}\n");
        return b.toString();
    }

    private static void appendMatching(StringBuilder b, List<String> lines, Pattern filter) {
        for (String line : lines) {
            if (filter == null || filter.matcher(line).matches()) {
                b.append(BAR).append(line).append(GAP);
            }
        }
    }

    /** "Counter extends Base implements java.io.Serializable". */
    private static String classSignature(Class<?> cls, boolean shortName) {
        StringBuilder b = new StringBuilder(shorten(canonicalName(cls), shortName));
        Class<?> sup = cls.getSuperclass();
        if (sup != null && sup != Object.class) {
            b.append(" extends ").append(canonicalName(sup));
        }
        Class<?>[] ifaces = cls.getInterfaces();
        for (int i = 0; i < ifaces.length; i++) {
            b.append(i == 0 ? " implements " : ", ").append(canonicalName(ifaces[i]));
        }
        return b.toString();
    }

    /** "add(int, String) : int". */
    private static String methodSignature(Method m, boolean shortName) {
        StringBuilder b = new StringBuilder(m.getName()).append('(');
        Class<?>[] params = m.getParameterTypes();
        for (int i = 0; i < params.length; i++) {
            if (i > 0) {
                b.append(", ");
            }
            b.append(shorten(canonicalName(params[i]), shortName));
        }
        return b.append(") : ").append(shorten(canonicalName(m.getReturnType()), shortName))
                .toString();
    }

    /** The canonical name, or the binary name for classes without one (local, hidden). */
    static String canonicalName(Class<?> c) {
        String n = c.getCanonicalName();
        return n != null ? n : c.getName();
    }

    private static String shorten(String name, boolean shortName) {
        return shortName ? JVMView.simpleNameOf(name) : name;
    }

    /** py4j's star pattern as a regular expression, or null for "match everything". */
    static Pattern compile(String pattern) {
        if (pattern == null) {
            return null;
        }
        String p = pattern.trim();
        StringBuilder re = new StringBuilder();
        int literalStart = 0;
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c == '*' || c == '?') {
                if (i > literalStart) {
                    re.append(Pattern.quote(p.substring(literalStart, i)));
                }
                re.append(c == '*' ? ".*" : ".?");
                literalStart = i + 1;
            }
        }
        if (literalStart < p.length()) {
            re.append(Pattern.quote(p.substring(literalStart)));
        }
        return Pattern.compile(re.toString(), Pattern.DOTALL);
    }
}
