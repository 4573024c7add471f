package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.schema.config.LimitConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionListing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two jobs on one Kafka with the same (default) group id and their own topics, as staging and
 * production would run: they never use the same transactional id, and both stay exact while their
 * checkpoints (every second) overlap.
 */
class TwoJobsITCase {
    static final int PARTITIONS = 2;
    static final String CONFIG = Traffic.config(1, 2, 6, 1);

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 8);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    Configuration options(String name) throws Exception {
        Path limits = Files.writeString(tmp.resolve(name + "-limits.json"), CONFIG);
        List<String> args = new ArrayList<>(KafkaPipelineSupport.args(kafka, name, limits));
        // Both keep the default group id: that alone once made them share transactional ids.
        int g = args.indexOf("--group-id");
        args.remove(g + 1);
        args.remove(g);
        kafka.createTopics(
                PARTITIONS, List.of(name + "-in", name + "-deliveries", name + "-audit"));
        kafka.createTopics(1, List.of(name + "-config", name + "-segments"));
        return CommandLine.parse(args.toArray(new String[0]), List.of());
    }

    @Test
    @Timeout(240)
    void twoJobsWithOneGroupIdNeverShareATransactionalIdAndBothStayExact() throws Exception {
        Map<String, List<Input>> inputs =
                Map.of(
                        "staging", Traffic.traffic(21, 4_000, 200, 6),
                        "production", Traffic.traffic(22, 4_000, 200, 6));
        List<JobClient> jobs = new ArrayList<>();
        try {
            for (String name : inputs.keySet()) {
                Configuration options = options(name);
                assertEquals("freqcap", options.get(FreqcapOptions.GROUP_ID));
                StreamExecutionEnvironment env =
                        KafkaPipelineSupport.testEnv(options, tmp.resolve(name));
                FreqcapMain.wireKafka(
                        env, JobSettings.from(options, LimitConfig.parse(CONFIG), null));
                jobs.add(env.executeAsync("freqcap-" + name));
            }
            for (String name : inputs.keySet()) {
                Traffic.produce(
                        kafka.bootstrapServers(), name + "-in", PARTITIONS, inputs.get(name));
            }
            for (String name : inputs.keySet()) {
                var out =
                        JobOutputs.readOutputs(
                                kafka.bootstrapServers(),
                                name,
                                inputs.get(name).size(),
                                Duration.ofSeconds(150));
                var outputs =
                        JobOutputs.checkOutputs(
                                inputs.get(name),
                                out.get(name + "-deliveries"),
                                out.get(name + "-audit"),
                                Map.of(1L, LimitConfig.parse(CONFIG)));
                assertEquals(inputs.get(name).size(), outputs.size(), name);
            }
            // The ids each job used, as Kafka's transaction coordinator lists them.
            Set<String> staging = new HashSet<>();
            Set<String> production = new HashSet<>();
            try (Admin admin = kafka.admin()) {
                for (TransactionListing t : admin.listTransactions().all().get()) {
                    String id = t.transactionalId();
                    if (id.contains("@staging-")) {
                        staging.add(id);
                    } else if (id.contains("@production-")) {
                        production.add(id);
                    }
                }
            }
            assertFalse(staging.isEmpty(), "staging's transactions");
            assertFalse(production.isEmpty(), "production's transactions");
            Set<String> shared = new HashSet<>(staging);
            shared.retainAll(production);
            assertTrue(shared.isEmpty(), "shared: " + shared);
            assertTrue(
                    staging.stream().allMatch(id -> id.startsWith("freqcap-")), staging.toString());
        } finally {
            for (JobClient j : jobs) {
                KafkaPipelineSupport.cancel(j);
            }
        }
    }
}
