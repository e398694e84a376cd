package org.py4jni;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UnsupportedEncodingException;
import java.nio.charset.Charset;

/**
 * System.out, System.err and System.in that dispatch by the calling thread's program
 * ({@link Program#current}): a program's threads read and write its streams (the pipes
 * of the process object its launcher holds), every other thread the process's own.
 * Installed once, by the first launch taken over. What is not separated: threads the
 * program did not start (shared pools such as ForkJoinPool.commonPool, py4jni's
 * threads running Python's calls) use the process's streams, and code writing to
 * FileDescriptor.out directly bypasses System.out.
 */
final class ProgramStreams {
    private static boolean installed;

    private ProgramStreams() {
    }

    static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        String enc = System.getProperty("stdout.encoding",
                                        System.getProperty("sun.stdout.encoding",
                                                           Charset.defaultCharset().name()));
        try {
            System.setOut(new PrintStream(new Out(System.out, false), true, enc));
            System.setErr(new PrintStream(new Out(System.err, true), true, enc));
        } catch (UnsupportedEncodingException e) {
            System.setOut(new PrintStream(new Out(System.out, false), true));
            System.setErr(new PrintStream(new Out(System.err, true), true));
        }
        System.setIn(new In(System.in));
    }

    /** The stream of the calling thread's program, or the process's. */
    private static final class Out extends OutputStream {
        private final OutputStream process;
        private final boolean err;

        Out(OutputStream process, boolean err) {
            this.process = process;
            this.err = err;
        }

        private OutputStream target() {
            Program p = Program.current();
            OutputStream s = p == null ? null : err ? p.err : p.out;
            return s == null ? process : s;
        }

        @Override
        public void write(int b) throws IOException {
            target().write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            target().write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            target().flush();
        }

        @Override
        public void close() throws IOException {
            target().flush(); // closing System.out ends no program's stream
        }
    }

    /** System.in of the calling thread's program, or the process's. */
    private static final class In extends InputStream {
        private final InputStream process;

        In(InputStream process) {
            this.process = process == null ? new FileInputStream(FileDescriptor.in) : process;
        }

        private InputStream target() {
            Program p = Program.current();
            return p == null || p.in == null ? process : p.in;
        }

        @Override
        public int read() throws IOException {
            return target().read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return target().read(b, off, len);
        }

        @Override
        public int available() throws IOException {
            return target().available();
        }

        @Override
        public long skip(long n) throws IOException {
            return target().skip(n);
        }
    }
}
