package org.py4jni;

/**
 * What {@code Runtime.exit} and {@code Runtime.halt} call first once a program has been
 * taken over (see {@link ClassHooks}): on a thread of a taken-over program, the program
 * ends with that status (exit: its shutdown hooks run; halt: they do not) and the
 * calling thread unwinds with {@link ProgramExit}; on any other thread they return and
 * the JDK ends the process as usual.
 */
public final class ProgramExits {
    private ProgramExits() {
    }

    /** Runtime.exit's gate. */
    public static void exiting(int status) {
        Program p = Program.current();
        if (p != null) {
            throw p.exitFrom(status, true);
        }
    }

    /** Runtime.halt's gate. */
    public static void halting(int status) {
        Program p = Program.current();
        if (p != null) {
            throw p.exitFrom(status, false);
        }
    }

    /** Unwinds a thread of a program that called System.exit (its thread group does not
     * print it as an uncaught exception). */
    public static final class ProgramExit extends Error {
        private static final long serialVersionUID = 1L;

        ProgramExit(int status) {
            super("the program called System.exit(" + status + ")", null, false, false);
        }
    }
}
