package org.py4jni;

import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;

/**
 * An OutputStream kept in memory as a list of full byte arrays (64 KiB, then doubling up
 * to {@link #CHUNK} bytes; the last one trimmed), for a stream Python reads in process
 * instead of through a socket (the PySpark adapter's Arrow collect). Each written byte is copied once, into
 * its chunk; unlike ByteArrayOutputStream nothing is copied again as the stream grows.
 * Chunks are large so that a reader of framed messages (Arrow IPC) finds almost every
 * message inside one chunk. {@link #chunks()} hands the arrays out in order. Not
 * thread-safe: one writer, then one reader.
 */
public final class ByteChunks extends OutputStream {
    /** Size of the largest chunks. */
    public static final int CHUNK = 4 << 20;
    private static final int FIRST = 64 << 10;

    private final ArrayList<byte[]> done = new ArrayList<>();
    private byte[] current;
    private int used;
    private long size;

    /** An empty stream (it allocates its first chunk on the first write). */
    public ByteChunks() {
    }

    @Override
    public void write(int b) {
        room();
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
        while (len > 0) { /* fill the current chunk, then the next */
            room();
            int take = Math.min(len, current.length - used);
            System.arraycopy(b, off, current, used, take);
            used += take;
            off += take;
            len -= take;
        }
    }

    /** Bytes written so far. */
    public long size() {
        return size;
    }

    /** Everything written, in order (every array full; the last trimmed); the stream is
     *  empty afterwards. */
    public byte[][] chunks() {
        if (current != null && used > 0) {
            done.add(used == current.length ? current : Arrays.copyOf(current, used));
        }
        current = null;
        used = 0;
        byte[][] out = done.toArray(new byte[0][]);
        done.clear();
        size = 0;
        return out;
    }

    /** Makes the current chunk have room for at least one byte. */
    private void room() {
        if (current == null || used == current.length) {
            int next = FIRST;
            if (current != null) {
                done.add(current);
                next = Math.min(current.length * 2, CHUNK);
            }
            current = new byte[next];
            used = 0;
        }
    }
}
