package io.freqcap.job.cluster;

import io.freqcap.job.CommandLine;
import io.freqcap.job.FreqcapMain;
import io.freqcap.job.JobSettings;
import io.freqcap.job.KafkaPreflight;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Submits freqcap to a session cluster the way {@code flink run} does: the job's graph is built
 * here and sent with the job jar to the REST API's {@code POST /jobs}. The cluster needs no web jar
 * submission ({@code web.submit.enable}, off in {@code bin/freqcap-cluster}'s clusters), and the
 * options are checked here before anything is sent: a bad option or an unreachable Kafka is one
 * line on this terminal, not an exception in the JobManager's log.
 */
public final class JobSubmission {
    private JobSubmission() {}

    /**
     * @param rest the cluster's REST address ({@code http://localhost:8081})
     * @param jobJar the shaded job jar, shipped with the graph
     * @param jobArgs the job's options, as {@code flink run} would take them
     * @param savepoint a savepoint to resume from, or null
     * @return the job's id
     */
    public static String submit(String rest, Path jobJar, List<String> jobArgs, String savepoint)
            throws Exception {
        Configuration options = CommandLine.parse(jobArgs.toArray(new String[0]), List.of());
        JobSettings settings = JobSettings.parse(options, true);
        settings =
                settings.withCommandsFrom(
                        KafkaPreflight.check(settings.kafka(), KafkaPreflight.TIMEOUT));
        io.freqcap.job.RedisPreflight.check(
                settings.mirror(), io.freqcap.job.RedisPreflight.TIMEOUT);

        Configuration flink = FreqcapMain.flinkConfig(options);
        URI uri = URI.create(rest);
        flink.set(DeploymentOptions.TARGET, "remote");
        flink.set(DeploymentOptions.ATTACHED, false);
        flink.set(RestOptions.ADDRESS, uri.getHost());
        flink.set(RestOptions.PORT, uri.getPort());
        flink.set(PipelineOptions.JARS, List.of(jobJar.toAbsolutePath().toUri().toString()));
        if (savepoint != null) {
            flink.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(flink);
        FreqcapMain.wireKafka(env, settings);
        JobClient job = env.executeAsync(FreqcapMain.JOB_NAME);
        String id = job.getJobID().toString();
        if (job instanceof AutoCloseable closeable) {
            closeable.close();
        }
        return id;
    }
}
