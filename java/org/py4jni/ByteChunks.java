package org.py4jni;

import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;

/**
 * An OutputStream kept in memory as a list of byte arrays, for a stream Python reads in
 * process instead of through a socket (the PySpark adapter's Arrow collect). Unlike
 * ByteArrayOutputStream it never copies what it holds again: a write of at least
 * {@link #CHUNK} bytes is kept as one array of its own (one copy of the caller's bytes),
 * smaller writes fill a shared chunk. {@link #chunks()} hands the arrays out in order.
 * Not thread-safe: one writer, then one reader.
 */
public final class ByteChunks extends OutputStream {
    /** Size of the chunks small writes are gathered in. */
    public static final int CHUNK = 64 * 1024;

    private final ArrayList<byte[]> done = new ArrayList<>();
    private byte[] current = new byte[CHUNK];
    private int used;
    private long size;

    /** An empty stream. */
    public ByteChunks() {
    }

    @Override
    public void write(int b) {
        if (used == current.length) {
            flushCurrent();
        }
        current[used++] = (byte) b;
        size++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
        if (off < 0 || len < 0 || len > b.length - off) {
            throw new IndexOutOfBoundsException("offset " + off + ", length " + len
                                                + ", array " + b.length);
        }
        size += len;
        if (len >= CHUNK) { /* its own array: a large batch stays whole */
            flushCurrent();
            done.add(Arrays.copyOfRange(b, off, off + len));
            return;
        }
        if (len > current.length - used) {
            flushCurrent();
        }
        System.arraycopy(b, off, current, used, len);
        used += len;
    }

    /** Bytes written so far. */
    public long size() {
        return size;
    }

    /** Everything written, in order, as arrays without unused space; the stream is empty
     *  afterwards. */
    public byte[][] chunks() {
        flushCurrent();
        byte[][] out = done.toArray(new byte[0][]);
        done.clear();
        size = 0;
        return out;
    }

    private void flushCurrent() {
        if (used > 0) {
            done.add(Arrays.copyOf(current, used));
            current = new byte[CHUNK];
            used = 0;
        }
    }
}
