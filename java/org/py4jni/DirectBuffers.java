package org.py4jni;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;

/**
 * Lifetime of the direct ByteBuffers py4jni makes over Python memory
 * ({@code gateway.direct_buffer(obj)}, bridge/inproc/inproc_buffers.c). Each buffer is registered
 * with a Cleaner; once the buffer is unreachable (slices, duplicates and views keep it
 * reachable: they hold it as their attachment), the Cleaner's daemon thread calls the
 * native {@link #release(long)}, which lets Python release the buffer export and the
 * object behind it.
 */
public final class DirectBuffers {
    private static final Cleaner CLEANER = Cleaner.create();

    private DirectBuffers() {
    }

    /** Registers {@code buffer} so that {@code release(handle)} runs once Java drops it. */
    static void track(ByteBuffer buffer, long handle) {
        CLEANER.register(buffer, () -> release(handle)); /* holds the handle, never the buffer */
    }

    /** Bound by bridge/inproc/inproc_buffers.c: hands the Python memory back to Python. */
    private static native void release(long handle);
}
