package io.freqcap.job.testutils;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.freqcap.job.JobSettings;
import io.freqcap.job.local.LocalKafka;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.schema.config.LimitConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes a savepoint that holds messages whose send time is years ahead, for {@link
 * HeldNoticeUpgradeITCase}: {@code -Dfreqcap.writeAheadSavepoint=0.4} writes {@code
 * savepoints/freqcap-0.4-held-ahead}. Run with the release whose savepoint it is (this class
 * compiles against freqcap 0.4's tests, which is how the committed one was written).
 */
public class HeldSavepointWriter {
    public static final int USERS = 100;

    /** Quiet hours until 00:30 UTC; messages at 00:00 to 00:03 on 1 June 2030, three a day. */
    public static final Instant T0 = Instant.parse("2030-06-01T00:00:00Z");

    public static final Instant END = Instant.parse("2030-06-01T00:30:00Z");

    public static final String NAME = "held-ahead";

    @RegisterExtension
    public static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 2);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    public static String config() {
        return Traffic.quietHoursConfig(3, Instant.parse("2030-05-31T23:00:00Z"), END);
    }

    /** Four messages a user a minute apart from {@code T0}: three held, the fourth rejected. */
    public static List<Input> messages() {
        List<Input> out = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
            for (int u = 0; u < USERS; u++) {
                out.add(
                        Traffic.pushMessage(
                                k * USERS + u,
                                u,
                                "m-" + u + "-" + k,
                                T0.toEpochMilli() + k * 60_000L));
            }
        }
        return out;
    }

    /** The job's options: messages years ahead are decided (--max-future off). */
    public static Configuration options(LocalKafka kafka, Path tmp, String... extra)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("--max-future", "off"));
        args.addAll(List.of(extra));
        return KafkaPipelineSupport.jobOptions(
                kafka, tmp, NAME, config(), 4, args.toArray(new String[0]));
    }

    @Test
    @Timeout(240)
    @EnabledIfSystemProperty(named = "freqcap.writeAheadSavepoint", matches = "\\d+\\.\\d+")
    public void writeTheSavepoint() throws Exception {
        Path target =
                Path.of("src", "test", "resources", "savepoints")
                        .resolve(
                                "freqcap-"
                                        + System.getProperty("freqcap.writeAheadSavepoint")
                                        + "-held-ahead");
        Configuration options = options(kafka, tmp);
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        FailOnce.reset();
        FailingOnceJob.failingOnceJob(
                env,
                options,
                Integer.MAX_VALUE,
                JobSettings.from(options, LimitConfig.parse(config()), null).capping(),
                null);
        Traffic.produce(kafka.bootstrapServers(), NAME + "-in", 4, messages());
        JobClient job = env.executeAsync("freqcap-held-ahead-savepoint");
        var out =
                JobOutputs.readOutputs(
                        kafka.bootstrapServers(), NAME, USERS, Duration.ofSeconds(120));
        assertEquals(USERS, out.get(NAME + "-audit").size(), "the fourths rejected, the rest held");
        assertEquals(0, out.get(NAME + "-deliveries").size());
        KafkaPipelineSupport.copyHeldSavepoint(
                KafkaPipelineSupport.settledSavepoint(job, tmp),
                target,
                T0.toEpochMilli(),
                END.toEpochMilli(),
                config());
    }
}
