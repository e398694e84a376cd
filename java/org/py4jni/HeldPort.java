package org.py4jni;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;

/**
 * The server socket of a taken-over program's py4j GatewayServer: it never listens. The
 * port number is held by a bound, unconnected socket (so nobody else binds it, and a
 * client connecting to it is refused: nothing serves it over TCP); the server is
 * registered under that port with {@link Programs}, where py4jni's gateways for the port
 * find it. {@code accept()} blocks until the socket is closed, as a listening socket
 * nobody connects to would; closing it unregisters the server.
 */
final class HeldPort extends ServerSocket {
    private final Socket reservation = new Socket();
    private final InetAddress address;
    private final int port;
    final Object server;
    final Program program;
    private boolean closed;

    HeldPort(InetAddress address, int port, Object server, Program program) throws IOException {
        super(); // unbound: no file descriptor of its own
        this.address = address;
        this.server = server;
        this.program = program;
        try {
            reservation.bind(new InetSocketAddress(address, port));
        } catch (IOException e) {
            reservation.close();
            throw e;
        }
        this.port = reservation.getLocalPort();
        Programs.register(this);
    }

    int port() {
        return port;
    }

    @Override
    public Socket accept() throws IOException {
        synchronized (this) {
            while (!closed) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SocketException("Socket closed");
                }
            }
        }
        throw new SocketException("Socket closed");
    }

    @Override
    public void close() throws IOException {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            notifyAll();
        }
        Programs.unregister(this);
        reservation.close();
    }

    @Override
    public synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public boolean isBound() {
        return true;
    }

    @Override
    public int getLocalPort() {
        return port;
    }

    @Override
    public InetAddress getInetAddress() {
        return address;
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return new InetSocketAddress(address, port);
    }

    @Override
    public void bind(SocketAddress endpoint, int backlog) throws IOException {
        throw new SocketException("py4jni: a taken-over program's server socket is bound already");
    }

    @Override
    public void setSoTimeout(int timeout) {
        // no socket to set it on
    }

    @Override
    public void setReuseAddress(boolean on) {
        // no socket to set it on
    }

    @Override
    public String toString() {
        return "HeldPort[addr=" + address + ",localport=" + port + "]";
    }
}
