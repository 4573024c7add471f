package io.freqcap.job.local;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.HTTPServer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Iterator;
import java.util.Properties;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.prometheus.AbstractPrometheusReporter;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.apache.flink.util.PortRange;

/**
 * Flink's Prometheus reporter, serving {@code /metrics} on the loopback interface only: the local
 * runner's metrics are for the person at this machine. Names, labels and values are Flink's own
 * (the collectors are {@link AbstractPrometheusReporter}'s); only the HTTP server differs, since
 * Flink's {@code PrometheusReporter} binds every interface and takes no address. A cluster keeps
 * Flink's reporter (deploy/config.yaml), which Prometheus scrapes from other hosts.
 */
public final class LoopbackPrometheusReporter extends AbstractPrometheusReporter {
    private final PortRange ports;
    private HTTPServer server;
    private int port;

    LoopbackPrometheusReporter(PortRange ports) {
        this.ports = ports;
    }

    @Override
    public void open(MetricConfig config) {
        super.open(config);
        CollectorRegistry registry = registry();
        InetAddress loopback = InetAddress.getLoopbackAddress();
        for (Iterator<Integer> it = ports.getPortsIterator(); it.hasNext(); ) {
            int candidate = it.next();
            try {
                server = new HTTPServer(new InetSocketAddress(loopback, candidate), registry, true);
                port = server.getPort();
                log.info(
                        "Prometheus metrics on http://{}:{}/metrics",
                        loopback.getHostAddress(),
                        port);
                return;
            } catch (IOException taken) {
                log.debug("Port {} taken for Prometheus metrics", candidate);
            }
        }
        throw new IllegalStateException(
                "No free port for Prometheus metrics on " + loopback + " in " + ports);
    }

    /** The port serving {@code /metrics}, once open. */
    public int port() {
        return port;
    }

    @Override
    public void close() {
        if (server != null) {
            server.stop();
        }
        super.close();
    }

    /**
     * The registry Flink's collectors go to. AbstractPrometheusReporter keeps it package-private,
     * so it is read once here; a Flink version that renames it fails LoopbackPrometheusReporterTest
     * (and this line names the cause).
     */
    private CollectorRegistry registry() {
        try {
            Field field = AbstractPrometheusReporter.class.getDeclaredField("registry");
            field.setAccessible(true);
            return (CollectorRegistry) field.get(this);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException(
                    "This Flink version's Prometheus reporter has no registry field to serve", e);
        }
    }

    /** {@code metrics.reporter.<name>.factory.class} for it; {@code port} as Flink's reporter. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            String ports = properties.getProperty("port", "9249");
            return new LoopbackPrometheusReporter(new PortRange(ports));
        }
    }
}
