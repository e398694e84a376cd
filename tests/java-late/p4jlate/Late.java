package p4jlate;

/** A class on no class path of the tests: a test's own class loader finds it (py4jni-late-fixtures.jar). */
public final class Late {
    private Late() {
    }

    /** A static method to call once the class resolves. */
    public static String hi() {
        return "hi from Late";
    }
}
