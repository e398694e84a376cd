package org.py4jni;

import java.math.BigDecimal;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Per-class facts the C side reads for every object it receives: a small dense id
 * (1, 2, 3, ... in first-seen order) and the py4j wire letter of the Python value
 * an object of exactly that class becomes. Computed once per class; later reads are
 * a ClassValue lookup (lock-free, no allocation).
 */
final class ClassRoles {
    private static final AtomicInteger NEXT_ID = new AtomicInteger(1);

    private static final ClassValue<Long> INFO = new ClassValue<Long>() {
        @Override
        protected Long computeValue(Class<?> c) {
            return ((long) NEXT_ID.getAndIncrement() << 8) | role(c);
        }
    };

    private ClassRoles() {
    }

    /** (id << 8) | role; see {@link #role(Class)}. */
    static long info(Class<?> c) {
        return INFO.get(c);
    }

    /**
     * The wire letter for objects of class `c`: 's' String, 'j' byte[], 'D'
     * BigDecimal, 'i' Integer/Short/Byte, 'L' Long, 'd' Double/Float, 'b' Boolean,
     * 'c' Character, then in py4j's order 'l' List, 'a' Map, 't' other arrays,
     * 'h' Set, 'g' Iterator, and 'r' for everything else (BigInteger, Class, enums,
     * other Numbers, other objects).
     */
    static char role(Class<?> c) {
        if (c == String.class) {
            return 's';
        }
        if (c == byte[].class) {
            return 'j';
        }
        if (BigDecimal.class.isAssignableFrom(c)) {
            return 'D';
        }
        if (c == Integer.class || c == Short.class || c == Byte.class) {
            return 'i';
        }
        if (c == Long.class) {
            return 'L';
        }
        if (c == Double.class || c == Float.class) {
            return 'd';
        }
        if (c == Boolean.class) {
            return 'b';
        }
        if (c == Character.class) {
            return 'c';
        }
        if (List.class.isAssignableFrom(c)) {
            return 'l';
        }
        if (Map.class.isAssignableFrom(c)) {
            return 'a';
        }
        if (c.isArray()) {
            return 't';
        }
        if (Set.class.isAssignableFrom(c)) {
            return 'h';
        }
        if (Iterator.class.isAssignableFrom(c)) {
            return 'g';
        }
        return 'r';
    }
}
