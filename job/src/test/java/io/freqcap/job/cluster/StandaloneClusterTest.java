package io.freqcap.job.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StandaloneClusterTest {
    static final Path DEPLOY_CONFIG = Path.of("..", "deploy", "config.yaml");

    @TempDir Path tmp;

    @Test
    void theClustersClassPathIsFlinkWithoutTheJobsLibraries() throws IOException {
        Path lib = Files.createDirectories(tmp.resolve("lib"));
        for (String jar :
                List.of(
                        "flink-runtime-2.2.1.jar",
                        "flink-connector-datagen-2.2.1.jar",
                        "log4j-core-2.24.3.jar",
                        "flink-connector-kafka-5.0.0-2.2.jar",
                        "kafka-clients-4.2.0.jar",
                        "lettuce-core-6.8.2.RELEASE.jar",
                        "RoaringBitmap-1.6.29.jar",
                        "freqcap-operators-0.1.0-SNAPSHOT.jar",
                        "netty-common-4.1.125.Final.jar",
                        "flink-runtime-2.2.1-tests.jar",
                        "notes.txt")) {
            Files.createFile(lib.resolve(jar));
        }
        assertEquals(
                List.of(
                        "flink-connector-datagen-2.2.1.jar",
                        "flink-runtime-2.2.1.jar",
                        "log4j-core-2.24.3.jar"),
                StandaloneCluster.flinkClasspath(lib).stream()
                        .map(p -> p.getFileName().toString())
                        .toList());
        IOException none =
                assertThrows(
                        IOException.class,
                        () -> StandaloneCluster.flinkClasspath(tmp.resolve("missing")));
        assertTrue(none.getMessage().contains("build first"), none.getMessage());
    }

    @Test
    void theConfigIsTheDeployOneWithThisMachinesAddressesAndDirectories() throws IOException {
        Path lib = Files.createDirectories(tmp.resolve("lib"));
        Files.createFile(lib.resolve("flink-runtime-2.2.1.jar"));
        StandaloneCluster c =
                StandaloneCluster.prepare(
                        new StandaloneCluster.Settings(
                                tmp.resolve("cluster"), lib, DEPLOY_CONFIG, 18_081, null, false));
        Configuration written =
                GlobalConfiguration.loadConfiguration(c.dir().resolve("conf").toString());
        assertEquals("http://localhost:18081", c.restUrl());
        assertEquals("rocksdb", written.getString("state.backend.type", null));
        assertEquals("SLOTS", written.getString("taskmanager.load-balance.mode", null));
        assertEquals("4g", written.getString("taskmanager.memory.process.size", null));
        assertEquals(
                c.dir().resolve("checkpoints").toUri().toString(),
                written.getString("execution.checkpointing.dir", null));
        assertEquals("localhost", written.getString("rest.bind-address", null));
        assertEquals("localhost", written.getString("jobmanager.bind-host", null));
        assertEquals("localhost", written.getString("taskmanager.bind-host", null));
        assertEquals("false", written.getString("web.submit.enable", null), "no jar uploads");
        assertTrue(Files.exists(c.dir().resolve("conf").resolve("log4j.properties")));
        assertEquals(
                c.dir(),
                StandaloneCluster.open(tmp.resolve("cluster"), lib).dir(),
                "reopened by the next command");
    }

    @Test
    void commandLineMistakesAreOneLineAndExitTwo() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        PrintStream out =
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(2, ClusterCommand.run(new String[] {"reboot"}, out, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown command reboot"));
        assertEquals(2, ClusterCommand.run(new String[] {"--colour", "red", "status"}, out, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown option --colour"));
        assertEquals(2, ClusterCommand.run(new String[] {}, out, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("usage: freqcap-cluster"));
        IOException noCluster =
                assertThrows(
                        IOException.class,
                        () ->
                                ClusterCommand.run(
                                        new String[] {
                                            "--dir", tmp.resolve("none").toString(), "stop"
                                        },
                                        out,
                                        e));
        assertTrue(noCluster.getMessage().contains("start one first"), noCluster.getMessage());
    }
}
