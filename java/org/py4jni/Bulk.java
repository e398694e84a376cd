package org.py4jni;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;

/**
 * Builds a java.util collection from values the C side packed into flat arrays, so a
 * Python list of N elements becomes a Java list in one call instead of N.
 *
 * <p>Per value {@code i}, {@code kinds[i]} is a py4j wire letter: 'n' null, 'b'
 * Boolean (bits 0/1), 'i' Integer, 'L' Long, 'd' Double (bits: doubleToRawLongBits),
 * 's' String and 'D' BigDecimal (bits: the length of its text in {@code chars}, texts
 * one after another), 'r' the object in {@code refs[i]} ({@code refs} may be null
 * when no value is 'r').
 */
public final class Bulk {
    private Bulk() {
    }

    /**
     * kind 'l': an ArrayList of the values; 'h': a HashSet; 'a': a HashMap of the
     * values taken as key, value pairs.
     */
    public static Object build(char kind, byte[] kinds, long[] bits, char[] chars, Object[] refs) {
        int n = kinds.length;
        Object[] values = new Object[n];
        int pos = 0;
        for (int i = 0; i < n; i++) {
            long b = bits[i];
            switch (kinds[i]) {
                case 'n':
                    break;
                case 'b':
                    values[i] = b != 0;
                    break;
                case 'i':
                    values[i] = (int) b;
                    break;
                case 'L':
                    values[i] = b;
                    break;
                case 'd':
                    values[i] = Double.longBitsToDouble(b);
                    break;
                case 's':
                    values[i] = new String(chars, pos, (int) b);
                    pos += (int) b;
                    break;
                case 'D':
                    values[i] = new BigDecimal(new String(chars, pos, (int) b));
                    pos += (int) b;
                    break;
                case 'r':
                    values[i] = refs[i];
                    break;
                default:
                    throw new BridgeException("py4jni: bad value kind " + (char) kinds[i]);
            }
        }
        switch (kind) {
            case 'l':
                return new ArrayList<>(Arrays.asList(values));
            case 'h': {
                HashSet<Object> set = new HashSet<>(Math.max(16, (int) (n / .75f) + 1));
                addAll(set, values);
                return set;
            }
            case 'a': {
                if (n % 2 != 0) {
                    throw new BridgeException("py4jni: a map needs key, value pairs");
                }
                Map<Object, Object> map = new HashMap<>(Math.max(16, (int) (n / 2 / .75f) + 1));
                for (int i = 0; i < n; i += 2) {
                    map.put(values[i], values[i + 1]);
                }
                return map;
            }
            default:
                throw new BridgeException("py4jni: unknown collection kind '" + kind + "'");
        }
    }

    /**
     * Stores `value` at `index` of reference array `array`, converting a number or a
     * one-char String to the array's box type first (a Python int arrives as an
     * Integer: stored into a Long[] it becomes a Long). Returns false when the value
     * does not fit the component type (nothing is stored).
     */
    public static boolean store(Object array, int index, Object value) {
        Object[] a = (Object[]) array;
        Class<?> component = a.getClass().getComponentType();
        Object v = value;
        if (v != null && !component.isInstance(v)) {
            v = toBox(component, v);
            if (v == null) {
                return false;
            }
        }
        a[index] = v;
        return true;
    }

    /** `v` as an instance of box class `c` (range-checked), or null when it cannot be. */
    private static Object toBox(Class<?> c, Object v) {
        if (v instanceof String && c == Character.class) {
            String s = (String) v;
            return s.length() == 1 ? (Object) s.charAt(0) : null;
        }
        if (!(v instanceof Number) || v instanceof BigDecimal) {
            return null;
        }
        Number n = (Number) v;
        boolean integral = v instanceof Integer || v instanceof Long || v instanceof Short
                || v instanceof Byte;
        if (c == Double.class) {
            return n.doubleValue();
        }
        if (c == Float.class) {
            return n.floatValue();
        }
        if (!integral) {
            return null;
        }
        long x = n.longValue();
        if (c == Long.class) {
            return x;
        }
        if (c == Integer.class && x == (int) x) {
            return (int) x;
        }
        if (c == Short.class && x == (short) x) {
            return (short) x;
        }
        if (c == Byte.class && x == (byte) x) {
            return (byte) x;
        }
        return null;
    }

    private static void addAll(Collection<Object> c, Object[] values) {
        for (Object v : values) {
            c.add(v);
        }
    }
}
