package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.freqcap.job.local.KafkaBrokerProcess;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka goes away under traffic and comes back: the broker (a JVM of its own) killed mid-stream and
 * started again on the same data, then frozen (SIGSTOP) for longer than its clients' request
 * timeout. Every input gets exactly one output, every decision right, both times.
 */
class KafkaOutageITCase {
    static final int PARTITIONS = 2;
    static final String CONFIG = Traffic.config(1, 2, 6, 1);

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @TempDir Path tmp;

    @Test
    @Timeout(600)
    void aKilledAndAFrozenBrokerCostLatencyNotDecisions() throws Exception {
        try (KafkaBrokerProcess kafka = KafkaBrokerProcess.start(tmp.resolve("broker"), "768m")) {
            String name = "outage";
            Configuration options =
                    KafkaPipelineSupport.jobOptions(kafka, tmp, name, CONFIG, PARTITIONS);
            List<Input> inputs = Traffic.traffic(31, 9_000, 300, 8);
            StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
            Configuration patient = new Configuration();
            // A failed checkpoint or task while Kafka is away restarts from the last checkpoint.
            patient.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1000);
            patient.set(
                    RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY,
                    Duration.ofSeconds(1));
            env.configure(patient);
            JobClient job = KafkaPipelineSupport.start(env, options, CONFIG, "freqcap-outage");
            try {
                String b = kafka.bootstrapServers();
                Traffic.produce(b, name + "-in", PARTITIONS, inputs.subList(0, 3_000));
                JobOutputs.readCommitted(
                        b, List.of(name + "-deliveries"), 500, Duration.ofSeconds(60));

                kafka.kill(); // mid-stream: decisions made, transactions open
                Thread.sleep(10_000);
                kafka.restart();
                Traffic.produce(b, name + "-in", PARTITIONS, inputs.subList(3_000, 6_000));
                JobOutputs.readOutputs(b, name, 4_000, Duration.ofSeconds(120));

                kafka.pause();
                Thread.sleep(40_000); // past the clients' 30 s request timeout
                kafka.resume();
                // A broker just thawed fences itself and comes back while the job's restarts
                // crowd two cores: give the test's own producer time beyond its 2-minute default.
                Properties patientProducer = Traffic.producerProps(b);
                patientProducer.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "300000");
                Traffic.produce(
                        patientProducer,
                        name + "-in",
                        PARTITIONS,
                        inputs.subList(6_000, inputs.size()));

                var outputs =
                        JobOutputs.readAndCheck(b, name, inputs, CONFIG, Duration.ofSeconds(180));
                assertEquals(inputs.size(), outputs.size(), "one output each");
            } finally {
                KafkaPipelineSupport.cancel(job);
            }
        }
    }
}
