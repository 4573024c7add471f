package io.freqcap.job.testutils;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

/**
 * A TCP proxy in front of a Kafka broker that can hold back one kind of request: while {@link
 * #stall} is on, every EndTxn request (API key 26, the commit or abort of a transaction) waits in
 * the proxy, and everything behind it on the same connection with it; all else flows. It delays a
 * commit after Flink has completed the checkpoint that counts on it, as a Kafka outage at that
 * moment would, but deterministically. The broker must advertise the proxy's port, so that clients
 * keep talking through it after bootstrap.
 */
public final class StallingKafkaProxy implements AutoCloseable {
    public static final short END_TXN = 26;

    private final ServerSocket server;
    private final IntSupplier brokerPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger held = new AtomicInteger();
    private final Object gate = new Object();
    private boolean stalled;

    /**
     * @param brokerPort the broker's real port, asked when a client connects
     */
    public StallingKafkaProxy(IntSupplier brokerPort) throws IOException {
        this.brokerPort = brokerPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "kafka-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Holds EndTxn requests from now until {@link #release}. */
    public void stall() {
        synchronized (gate) {
            stalled = true;
        }
    }

    /** Lets the held requests go, in order, and all that follow. */
    public void release() {
        synchronized (gate) {
            stalled = false;
            gate.notifyAll();
        }
    }

    /** EndTxn requests held so far. */
    public int held() {
        return held.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket broker = new Socket(InetAddress.getLoopbackAddress(), brokerPort.getAsInt());
                sockets.add(client);
                sockets.add(broker);
                start("kafka-proxy-up", () -> requests(client, broker), client, broker);
                start(
                        "kafka-proxy-down",
                        () -> broker.getInputStream().transferTo(client.getOutputStream()),
                        client,
                        broker);
            } catch (IOException closedOrRefused) {
                // the proxy closing, or the broker away: the client sees a closed connection
            }
        }
    }

    /** Client to broker, a request at a time: size, API key, the rest. */
    private void requests(Socket client, Socket broker) throws IOException, InterruptedException {
        DataInputStream in = new DataInputStream(client.getInputStream());
        OutputStream out = broker.getOutputStream();
        while (true) {
            int size = in.readInt();
            byte[] request = new byte[size];
            in.readFully(request);
            short apiKey = (short) (((request[0] & 0xff) << 8) | (request[1] & 0xff));
            if (apiKey == END_TXN) {
                synchronized (gate) {
                    if (stalled) {
                        held.incrementAndGet();
                        while (stalled) {
                            gate.wait();
                        }
                    }
                }
            }
            new java.io.DataOutputStream(out).writeInt(size);
            out.write(request);
            out.flush();
        }
    }

    /** Runs {@code pump} until either side closes, then closes both. */
    private static void start(String name, Pump pump, Socket client, Socket broker) {
        Thread t =
                new Thread(
                        () -> {
                            try {
                                pump.run();
                            } catch (IOException | InterruptedException closed) {
                                // either side closed: close both
                            } finally {
                                closeQuietly(client);
                                closeQuietly(broker);
                            }
                        },
                        name);
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException alreadyGone) {
            // nothing to close
        }
    }

    @Override
    public void close() throws IOException {
        release();
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }

    private interface Pump {
        void run() throws IOException, InterruptedException;
    }
}
