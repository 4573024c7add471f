package io.freqcap.job.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Collections;
import java.util.Optional;
import java.util.Properties;
import org.apache.flink.metrics.MetricConfig;
import org.junit.jupiter.api.Test;

class LoopbackPrometheusReporterTest {

    @Test
    void servesMetricsOnLoopbackAndNowhereElse() throws Exception {
        Optional<InetAddress> lan = nonLoopbackAddress();
        assumeTrue(lan.isPresent(), "this machine has no non-loopback IPv4 address to try");
        Properties settings = new MetricConfig();
        settings.setProperty("port", "0");
        LoopbackPrometheusReporter reporter =
                (LoopbackPrometheusReporter)
                        new LoopbackPrometheusReporter.Factory().createMetricReporter(settings);
        reporter.open(new MetricConfig());
        int port = reporter.port();
        try {
            HttpResponse<String> scrape =
                    HttpClient.newHttpClient()
                            .send(
                                    HttpRequest.newBuilder(
                                                    URI.create(
                                                            "http://127.0.0.1:"
                                                                    + port
                                                                    + "/metrics"))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, scrape.statusCode());
            assertThrows(
                    ConnectException.class,
                    () -> {
                        try (Socket s = new Socket()) {
                            s.connect(new InetSocketAddress(lan.get(), port), 2_000);
                        }
                    },
                    "reachable on " + lan.get());
        } finally {
            reporter.close();
        }
        assertThrows(
                ConnectException.class,
                () -> new Socket(InetAddress.getLoopbackAddress(), port).close(),
                "closing the reporter stops its server");
    }

    @Test
    void aTakenPortMovesToTheNextInItsRange() throws Exception {
        try (java.net.ServerSocket taken =
                new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int first = taken.getLocalPort();
            Properties settings = new MetricConfig();
            settings.setProperty("port", first + "-" + (first + 20));
            LoopbackPrometheusReporter reporter =
                    (LoopbackPrometheusReporter)
                            new LoopbackPrometheusReporter.Factory().createMetricReporter(settings);
            reporter.open(new MetricConfig());
            try {
                assertTrue(reporter.port() > first && reporter.port() <= first + 20);
            } finally {
                reporter.close();
            }
        }
    }

    private static Optional<InetAddress> nonLoopbackAddress() throws Exception {
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!nic.isUp() || nic.isLoopback()) {
                continue;
            }
            for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress()) {
                    return Optional.of(a);
                }
            }
        }
        return Optional.empty();
    }
}
