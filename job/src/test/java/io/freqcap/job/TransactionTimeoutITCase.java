package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.local.KafkaBrokerProcess;
import io.freqcap.job.local.LocalRunnerITCase;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.StallingKafkaProxy;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A commit Kafka refuses (contract.md §8, {@code --transaction-timeout}): Flink completes a
 * checkpoint, Kafka is unreachable for the commit that follows (a proxy holds every EndTxn request)
 * for longer than the transaction timeout, Kafka aborts the transaction, and the commit arrives too
 * late. The job must not go on as if those outputs were written: it fails, without a restart,
 * naming the transaction and its checkpoint.
 */
class TransactionTimeoutITCase {
    static final int PARTITIONS = 2;
    static final String CONFIG = Traffic.config(1, 2, 6, 1);

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @TempDir Path tmp;

    @Test
    @Timeout(300)
    void aCommitRefusedAfterTheTransactionTimeoutStopsTheJobNamingItsCheckpoint() throws Exception {
        int brokerPort = LocalRunnerITCase.freePort();
        int controllerPort = LocalRunnerITCase.freePort();
        try (StallingKafkaProxy proxy = new StallingKafkaProxy(() -> brokerPort);
                KafkaBrokerProcess kafka =
                        KafkaBrokerProcess.start(
                                tmp.resolve("broker"),
                                "512m",
                                Map.of(
                                        "listeners",
                                        "PLAINTEXT://localhost:"
                                                + brokerPort
                                                + ",CONTROLLER://localhost:"
                                                + controllerPort,
                                        "controller.quorum.voters",
                                        "1@localhost:" + controllerPort,
                                        // clients reach the broker through the proxy only
                                        "advertised.listeners",
                                        "PLAINTEXT://localhost:" + proxy.port(),
                                        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                                        "500"))) {
            String name = "txtimeout";
            Configuration options =
                    KafkaPipelineSupport.jobOptions(
                            kafka, tmp, name, CONFIG, PARTITIONS, "--transaction-timeout", "4s");
            List<Input> inputs = Traffic.traffic(37, 2_000, 200, 4);
            JobClient job =
                    KafkaPipelineSupport.startJob(
                            options, tmp, CONFIG, "freqcap-transaction-timeout");
            try {
                String b = kafka.bootstrapServers();
                Traffic.produce(b, name + "-in", PARTITIONS, inputs.subList(0, 1_000));
                JobOutputs.readCommitted(
                        b, List.of(name + "-deliveries"), 200, Duration.ofSeconds(60));

                proxy.stall();
                Traffic.produce(b, name + "-in", PARTITIONS, inputs.subList(1_000, 2_000));
                awaitHeldCommit(proxy);
                awaitNoOpenTransaction(b, name);
                proxy.release();

                ExecutionException failed =
                        assertThrows(
                                ExecutionException.class,
                                () -> job.getJobExecutionResult().get(120, TimeUnit.SECONDS));
                String why =
                        ExceptionUtils.findThrowableWithMessage(failed, "Kafka refused to commit")
                                .map(Throwable::getMessage)
                                .orElseThrow(() -> new AssertionError("failed otherwise", failed));
                assertTrue(why.matches("(?s).*\\(checkpoint \\d+, subtask \\d+\\).*"), why);
                assertTrue(why.contains("outputs of that checkpoint are lost"), why);
                assertEquals(JobStatus.FAILED, job.getJobStatus().get(), "no restart");
            } finally {
                proxy.release();
                if (!job.getJobStatus().get().isGloballyTerminalState()) {
                    KafkaPipelineSupport.cancel(job);
                }
            }
        }
    }

    /** Until a commit (EndTxn) of a completed checkpoint waits in the proxy. */
    private static void awaitHeldCommit(StallingKafkaProxy proxy) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (proxy.held() == 0) {
            assertTrue(System.nanoTime() < deadline, "no commit reached the proxy in 60 s");
            Thread.sleep(100);
        }
    }

    /**
     * Until Kafka has aborted every transaction of the job it held open: the held commit's among
     * them, once the transaction timeout passed.
     */
    private static void awaitNoOpenTransaction(String bootstrap, String name) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (true) {
                List<TransactionListing> open =
                        admin.listTransactions().all().get().stream()
                                .filter(t -> t.transactionalId().startsWith(name))
                                .filter(
                                        t ->
                                                t.state() == TransactionState.ONGOING
                                                        || t.state()
                                                                == TransactionState.PREPARE_COMMIT)
                                .toList();
                if (open.isEmpty()) {
                    return;
                }
                assertTrue(System.nanoTime() < deadline, "still open after 60 s: " + open);
                Thread.sleep(250);
            }
        }
    }
}
