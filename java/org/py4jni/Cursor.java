package org.py4jni;

import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * A batched walk over a collection, for the C side's cursor operations: each
 * {@link #fill(int)} moves up to {@code max} elements into flat arrays that the C side
 * reads with one JNI region copy each, so iterating a Java collection from Python costs
 * one Java call per chunk instead of one per element.
 *
 * <p>Per slot {@code i < count}, {@code kinds[i]} is the py4j wire letter of the value:
 * 'n' null; 'b' Boolean (bits 0/1); 'i' Integer, Short or Byte, 'L' Long, 'c' Character
 * (bits: the value); 'd' Double (bits: Double.doubleToRawLongBits); 'f' Float (bits:
 * Float.floatToRawIntBits); 's' String and 'D' BigDecimal (bits: the length of its
 * text, appended to {@code chars}); 'r' any other object, in {@code refs[i]} (the C side
 * classifies it: List, Map, array, byte[], ...).
 *
 * <p>Not thread-safe: one caller at a time (the C side guarantees it per cursor). The
 * walk's own exceptions (ConcurrentModificationException, ...) propagate from fill;
 * NoSuchElementException ends the walk.
 */
public final class Cursor {
    private final Iterator<?> it;
    private final boolean entries;
    private boolean done;

    /** Kind letters of the slots filled by the last {@link #fill(int)}. */
    public byte[] kinds = new byte[0];
    /** Primitive payload per slot (see the class comment). */
    public long[] bits = new long[0];
    /** Objects of 'r' slots (cleared at the start of the next fill). */
    public Object[] refs = new Object[0];
    /** Texts of 's' and 'D' slots, one after another. */
    public char[] chars = new char[64];
    /** How many chars the last fill used. */
    public int nchars;
    private int lastCount;

    private Cursor(Iterator<?> it, boolean entries) {
        this.it = it;
        this.entries = entries;
    }

    /**
     * Opens a walk over `source`: a Map (mode 'k' keys, 'v' values, 'e' entries as key,
     * value slot pairs), an Iterator (walked as is), an Iterable, or an array.
     */
    public static Cursor open(Object source, char mode) {
        if (source instanceof Map) {
            Map<?, ?> m = (Map<?, ?>) source;
            switch (mode) {
                case 'k': return new Cursor(m.keySet().iterator(), false);
                case 'v': return new Cursor(m.values().iterator(), false);
                case 'e': return new Cursor(m.entrySet().iterator(), true);
                default: throw new BridgeException("py4jni: unknown map walk mode '" + mode + "'");
            }
        }
        if (mode != 'k') {
            throw new BridgeException("py4jni: walk mode '" + mode + "' needs a Map, not a "
                    + (source == null ? "null" : source.getClass().getName()));
        }
        if (source instanceof Iterator) {
            return new Cursor((Iterator<?>) source, false);
        }
        if (source instanceof Iterable) {
            return new Cursor(((Iterable<?>) source).iterator(), false);
        }
        if (source instanceof Object[]) {
            return new Cursor(Arrays.asList((Object[]) source).iterator(), false);
        }
        if (source != null && source.getClass().isArray()) {
            return new Cursor(new ArrayIterator(source), false);
        }
        throw new BridgeException("py4jni: cannot walk a "
                + (source == null ? "null" : source.getClass().getName()));
    }

    /** Fills up to `max` slots (entry walks fill whole pairs); returns how many; 0 at the end. */
    public int fill(int max) {
        if (refs.length < max) {
            kinds = new byte[max];
            bits = new long[max];
            refs = new Object[max];
        } else {
            Arrays.fill(refs, 0, lastCount, null);
        }
        nchars = 0;
        int n = 0;
        int step = entries ? 2 : 1;
        while (!done && n + step <= max) {
            Object o;
            try {
                if (!it.hasNext()) {
                    break; // asked again on the next fill: a modified list then throws
                }
                o = it.next();
            } catch (NoSuchElementException e) {
                done = true;
                break;
            }
            if (entries) {
                Map.Entry<?, ?> e = (Map.Entry<?, ?>) o;
                put(n++, e.getKey());
                put(n++, e.getValue());
            } else {
                put(n++, o);
            }
        }
        lastCount = n;
        return n;
    }

    private void put(int i, Object o) {
        if (o == null) {
            kinds[i] = 'n';
            return;
        }
        Class<?> c = o.getClass();
        if (c == Integer.class) { // the common cases first, without the ClassValue lookup
            kinds[i] = 'i';
            bits[i] = (Integer) o;
            return;
        }
        if (c == String.class) {
            kinds[i] = 's';
            bits[i] = append((String) o);
            return;
        }
        switch ((char) (ClassRoles.info(c) & 0xff)) {
            case 'i':
                kinds[i] = 'i';
                bits[i] = ((Number) o).intValue();
                return;
            case 'L':
                kinds[i] = 'L';
                bits[i] = (Long) o;
                return;
            case 'd':
                if (o instanceof Float) {
                    kinds[i] = 'f';
                    bits[i] = Float.floatToRawIntBits((Float) o);
                } else {
                    kinds[i] = 'd';
                    bits[i] = Double.doubleToRawLongBits((Double) o);
                }
                return;
            case 'b':
                kinds[i] = 'b';
                bits[i] = ((Boolean) o) ? 1 : 0;
                return;
            case 'c':
                kinds[i] = 'c';
                bits[i] = (Character) o;
                return;
            case 's':
                kinds[i] = 's';
                bits[i] = append((String) o);
                return;
            case 'D':
                kinds[i] = 'D';
                bits[i] = append(((BigDecimal) o).toString());
                return;
            default:
                kinds[i] = 'r';
                refs[i] = o;
        }
    }

    private int append(String s) {
        int len = s.length();
        if (nchars + len > chars.length) {
            chars = Arrays.copyOf(chars, Math.max(chars.length * 2, nchars + len));
        }
        s.getChars(0, len, chars, nchars);
        nchars += len;
        return len;
    }

    /** Iterates a primitive array through java.lang.reflect.Array (boxes each element). */
    private static final class ArrayIterator implements Iterator<Object> {
        private final Object array;
        private final int length;
        private int index;

        ArrayIterator(Object array) {
            this.array = array;
            this.length = Array.getLength(array);
        }

        @Override
        public boolean hasNext() {
            return index < length;
        }

        @Override
        public Object next() {
            if (index >= length) {
                throw new NoSuchElementException();
            }
            return Array.get(array, index++);
        }
    }
}
