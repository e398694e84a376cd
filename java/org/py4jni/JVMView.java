package org.py4jni;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A named set of imports used to resolve short class names (py4j's JVMView):
 * single imports ("a.b.C", reached as "C") and star imports ("a.b.*"), plus
 * java.lang.*, imported by default. Views are independent of each other.
 *
 * <p>Thread safety: readers see an immutable {@link Imports} snapshot through a
 * volatile field and never lock; writers are serialised on the view and publish a
 * new snapshot. Each snapshot carries its own cache of names that did not resolve,
 * so a change of imports starts with an empty cache and a lookup racing with the
 * change can only fill the cache of the snapshot it read.
 */
public final class JVMView {
    /** Caps each negative cache; past it the cache starts over (names probed are few). */
    static final int MAX_MISSES = 20_000;

    private final String name;
    private volatile Imports imports = new Imports(Collections.emptyMap(),
            Collections.emptyList(), true, 1);

    /** Creates a view with no imports besides java.lang.*. */
    JVMView(String name) {
        this.name = name;
    }

    /** Returns the name given at creation. */
    public String name() {
        return name;
    }

    /**
     * Adds an import: "a.b.*" imports package a.b, anything else imports one class
     * under its simple name (the part after the last '.'). As in py4j, a second
     * single import of the same simple name is ignored: the first one stays.
     */
    public synchronized void addImport(String pattern) {
        Imports cur = imports;
        if (pattern.endsWith("*")) {
            String pkg = packageOf(pattern);
            if (pkg.equals("java.lang")) {
                imports = cur.with(cur.singles, cur.stars, true);
            } else if (!cur.stars.contains(pkg)) {
                List<String> stars = new ArrayList<>(cur.stars);
                stars.add(pkg);
                imports = cur.with(cur.singles, stars, cur.javaLang);
            }
        } else {
            String simple = simpleNameOf(pattern);
            if (!cur.singles.containsKey(simple)) {
                Map<String, String> singles = new LinkedHashMap<>(cur.singles);
                singles.put(simple, pattern);
                imports = cur.with(singles, cur.stars, cur.javaLang);
            }
        }
    }

    /**
     * Removes an import added with {@link #addImport(String)} (the same text);
     * "java.lang.*" removes the default import. Returns whether anything was removed.
     */
    public synchronized boolean removeImport(String pattern) {
        Imports cur = imports;
        if (pattern.endsWith("*")) {
            String pkg = packageOf(pattern);
            if (pkg.equals("java.lang")) {
                if (!cur.javaLang) {
                    return false;
                }
                imports = cur.with(cur.singles, cur.stars, false);
                return true;
            }
            if (!cur.stars.contains(pkg)) {
                return false;
            }
            List<String> stars = new ArrayList<>(cur.stars);
            stars.remove(pkg);
            imports = cur.with(cur.singles, stars, cur.javaLang);
            return true;
        }
        String simple = simpleNameOf(pattern);
        if (!pattern.equals(cur.singles.get(simple))) {
            return false;
        }
        Map<String, String> singles = new LinkedHashMap<>(cur.singles);
        singles.remove(simple);
        imports = cur.with(singles, cur.stars, cur.javaLang);
        return true;
    }

    /**
     * Returns a number that changes whenever the imports change (starts at 1), so a
     * caller can keep a listing of {@link #importedNames()} until it changes.
     */
    public int sequenceId() {
        return imports.sequence;
    }

    /** Returns the simple names of the single imports, sorted (what py4j's dir(jvm) lists). */
    public Set<String> importedNames() {
        return new TreeSet<>(imports.singles.keySet());
    }

    /** Returns the current imports (an immutable snapshot). */
    Imports imports() {
        return imports;
    }

    @Override
    public String toString() {
        return "JVMView(" + name + ")";
    }

    /** "a.b.C" gives "a.b"; a name without '.' is its own package, as in py4j. */
    static String packageOf(String name) {
        int dot = name.lastIndexOf('.');
        return dot < 0 ? name : name.substring(0, dot);
    }

    /** "a.b.C" gives "C". */
    static String simpleNameOf(String name) {
        return name.substring(name.lastIndexOf('.') + 1);
    }

    /** One immutable state of a view's imports, with its cache of unresolved names. */
    static final class Imports {
        /** Simple name to fully qualified name, in import order. */
        final Map<String, String> singles;
        /** Star-imported packages other than java.lang, in import order. */
        final List<String> stars;
        /** Whether java.lang.* is imported (searched after the other star imports). */
        final boolean javaLang;
        final int sequence;
        /** Undotted names that resolved to no class under these imports. */
        final Set<String> misses = ConcurrentHashMap.newKeySet();
        /** Bridge's cache epoch `misses` belongs to; an older one means "clear first". */
        volatile int epoch;

        Imports(Map<String, String> singles, List<String> stars, boolean javaLang,
                int sequence) {
            this.singles = singles;
            this.stars = stars;
            this.javaLang = javaLang;
            this.sequence = sequence;
        }

        Imports with(Map<String, String> newSingles, List<String> newStars,
                      boolean newJavaLang) {
            return new Imports(Collections.unmodifiableMap(newSingles),
                    Collections.unmodifiableList(newStars), newJavaLang, sequence + 1);
        }
    }
}
