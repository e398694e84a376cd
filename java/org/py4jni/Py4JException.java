package org.py4jni;

/**
 * What Java sees when a Python callback fails: py4j's {@code py4j.Py4JException} shape.
 * A Python exception raised by a proxy method arrives with the message
 * {@code "An exception was raised by the Python Proxy. Return Message: "} followed by the
 * Python traceback text (what {@code traceback.format_exc()} prints), exactly as py4j
 * words it. Other failures (gateway shut down, Python exiting, a result of the wrong
 * type) carry py4jni's explanation. When py4j's own {@code py4j.Py4JException} is on the
 * classpath (py4j's jar; PySpark's jars include it), callbacks throw that class instead,
 * with the same messages, so Java code catching py4j's type works unchanged.
 */
public class Py4JException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** py4j's prefix for Python exceptions raised in a proxy. */
    public static final String PYTHON_PROXY_PREFIX =
            "An exception was raised by the Python Proxy. Return Message: ";

    /** Creates the exception with its full message. */
    public Py4JException(String message) {
        super(message);
    }

    /** Creates the exception with its full message and cause. */
    public Py4JException(String message, Throwable cause) {
        super(message, cause);
    }
}
