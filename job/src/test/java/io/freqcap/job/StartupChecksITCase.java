package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The start-up check against a real broker (contract.md §7, §8): a {@code --transaction-timeout}
 * above the broker's {@code transaction.max.timeout.ms} stops the start with one line naming both
 * (it ran on before, every sink failing InitProducerId, deciding nothing); and the check tells
 * where the config topic ends, so that a start without state skips the commands already on it.
 */
@Timeout(120)
class StartupChecksITCase {
    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    static final String CONFIG = Traffic.config(1, 2, 6, 1);

    @Test
    void aTransactionTimeoutAboveTheBrokersLimitStopsTheStartNamingBoth() throws Exception {
        Configuration options =
                KafkaPipelineSupport.jobOptions(
                        kafka, tmp, "txlimit", CONFIG, 1, "--transaction-timeout", "1h");
        InvalidOptionException e =
                assertThrows(
                        InvalidOptionException.class,
                        () ->
                                KafkaPreflight.check(
                                        KafkaSettings.of(options), Duration.ofSeconds(30)));
        String line = e.getMessage();
        assertTrue(line.startsWith("--transaction-timeout 1 h is above"), line);
        assertTrue(line.contains("transaction.max.timeout.ms"), line);
        assertTrue(line.contains("900000 ms"), line);
        assertEquals(1, line.lines().count(), "one line");

        Configuration fine =
                KafkaPipelineSupport.jobOptions(
                        kafka, tmp, "txfine", CONFIG, 1, "--transaction-timeout", "10min");
        KafkaPreflight.check(KafkaSettings.of(fine), Duration.ofSeconds(30));
        // at-least-once writes no transactions: nothing to check
        Configuration atLeastOnce =
                KafkaPipelineSupport.jobOptions(
                        kafka,
                        tmp,
                        "txnone",
                        CONFIG,
                        1,
                        "--transaction-timeout",
                        "1h",
                        "--guarantee",
                        "at-least-once");
        KafkaPreflight.check(KafkaSettings.of(atLeastOnce), Duration.ofSeconds(30));
    }

    @Test
    void theCheckTellsWhereTheConfigTopicEndsForAStartWithoutState() throws Exception {
        Configuration options = KafkaPipelineSupport.jobOptions(kafka, tmp, "ends", CONFIG, 1);
        assertEquals(
                Map.of(0, 0L),
                KafkaPreflight.check(KafkaSettings.of(options), Duration.ofSeconds(30)));
        for (String command :
                new String[] {
                    "{\"command\": \"forget-user\", \"userId\": 42}",
                    "{\"command\": \"rebuild-mirror\"}",
                    "{\"command\": \"cancel-held\", \"campaignId\": \"spring-sale\"}"
                }) {
            Traffic.send(kafka.bootstrapServers(), "ends-config", command);
        }
        Map<Integer, Long> ends =
                KafkaPreflight.check(KafkaSettings.of(options), Duration.ofSeconds(30));
        assertEquals(Map.of(0, 3L), ends);
        JobSettings settings =
                JobSettings.from(options, io.freqcap.schema.config.LimitConfig.parse(CONFIG), null)
                        .withCommandsFrom(ends);
        assertEquals(Map.of(0, 3L), settings.capping().commandsFrom());
    }
}
