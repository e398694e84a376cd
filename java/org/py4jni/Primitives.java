package org.py4jni;

import java.util.HashMap;
import java.util.Map;

/** One row per Java primitive type: its name, class, JNI descriptor letter and box class. */
final class Primitives {
    private static final Object[][] TABLE = {
        {"boolean", boolean.class, 'Z', Boolean.class},
        {"byte", byte.class, 'B', Byte.class},
        {"char", char.class, 'C', Character.class},
        {"short", short.class, 'S', Short.class},
        {"int", int.class, 'I', Integer.class},
        {"long", long.class, 'J', Long.class},
        {"float", float.class, 'F', Float.class},
        {"double", double.class, 'D', Double.class},
        {"void", void.class, 'V', Void.class},
    };

    private static final Map<String, Class<?>> BY_NAME = new HashMap<>();
    private static final Map<Class<?>, Character> LETTER = new HashMap<>();
    private static final Map<Class<?>, Class<?>> BOX = new HashMap<>();

    static {
        for (Object[] row : TABLE) {
            Class<?> type = (Class<?>) row[1];
            if (type != void.class) {
                BY_NAME.put((String) row[0], type);
            }
            LETTER.put(type, (Character) row[2]);
            BOX.put(type, (Class<?>) row[3]);
        }
    }

    private Primitives() {
    }

    /** The primitive type named `name` ("int"; not "void"), or null. */
    static Class<?> byName(String name) {
        return BY_NAME.get(name);
    }

    /** The JNI descriptor letter of primitive type `c` ('I' for int). */
    static char letter(Class<?> c) {
        return LETTER.get(c);
    }

    /** The box class of `c` when it is primitive (Integer for int), else `c`. */
    static Class<?> box(Class<?> c) {
        return c.isPrimitive() ? BOX.get(c) : c;
    }
}
