package org.py4jni;

/**
 * A refusal by the bridge itself: no such method, no applicable overload, a bad
 * argument. The in-process transport turns this exception into a Py4JError carrying
 * {@link #getMessage()}; every other Throwable that reaches it becomes a
 * Py4JJavaError.
 */
public class BridgeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Creates the exception with the message Python will show. */
    public BridgeException(String message) {
        super(message);
    }
}
