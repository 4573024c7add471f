package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.testutils.FailOnce;
import io.freqcap.job.testutils.FailingOnceJob;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.OutboundMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Preemption on a real broker across a failure (contract.md §5, §6): each user's promotion is held
 * for a minute, then more important messages take its place (and, for half the users, a still more
 * important one takes theirs) while checkpoints are taken, and the job fails in the middle of them.
 * Every input ends in exactly one output, the one the job's own backtest gives in partition order;
 * no preempted message is ever delivered, each preempting one is, at its send time and not before.
 */
class PreemptionITCase {
    static final int PARTITIONS = 3;
    static final int USERS = 200;

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 2);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    /** One a minute (and 100 in 10 minutes), held up to 90 s; a message held back may preempt. */
    static final String CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"60s\",\"max\":1},{\"window\":\"10m\",\"max\":100}],"
                    + "\"hold\":\"90s\",\"preempt\":true}]}";

    private final Traffic.Sequence sequence = new Traffic.Sequence();

    @Test
    @Timeout(240)
    void preemptedMessagesAreNeverDeliveredAndPreemptingOnesNeverLostAcrossAFailure()
            throws Exception {
        String name = "preempt";
        Configuration options =
                KafkaPipelineSupport.jobOptions(kafka, tmp, name, CONFIG, PARTITIONS);
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        List<Input> first = new ArrayList<>();
        List<Input> second = new ArrayList<>();
        FailOnce.reset();
        // The failure comes in the middle of the preempting messages.
        FailingOnceJob.failingOnceJob(
                env, options, 3 * USERS + USERS / 2, CappingSettings.of(CONFIG), null);
        JobClient job = env.executeAsync("freqcap-preempt");
        try {
            long t0 = System.currentTimeMillis();
            for (long user = 0; user < USERS; user++) {
                sequence.add(first, user, "now-" + user, "push", t0, 0); // out at once
                // a promotion held to t0 + 60 s, then one REJECTED: the same priority
                sequence.add(first, user, "promo-" + user, "push", t0 + 1, 10);
                sequence.add(first, user, "promo2-" + user, "push", t0 + 2, 10);
            }
            Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, first);
            FailOnce.awaitCheckpoints(2, 20_000); // the held promotions are in a checkpoint
            long t1 = System.currentTimeMillis();
            for (long user = 0; user < USERS; user++) {
                // takes the promotion's place; an urgent one then takes the alert's
                sequence.add(second, user, "alert-" + user, "push", t1, 80);
                if (user % 2 == 0) {
                    sequence.add(second, user, "urgent-" + user, "push", t1 + 1, 90);
                }
            }
            List<Input> inputs = new ArrayList<>(first);
            inputs.addAll(second);
            Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, second);
            assertTrue(
                    System.currentTimeMillis() < t0 + 50_000,
                    "decided well before the promotions' send time");

            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, inputs.size(), Duration.ofSeconds(150));
            assertTrue(FailOnce.FAILED.get(), "the failure was injected");
            Map<Integer, Decided> expected = Traffic.finalOutcomes(inputs, CONFIG);
            Map<Integer, String> got = new HashMap<>();
            Map<Integer, JsonNode> audits = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-deliveries")) {
                int seq = Json.MAPPER.readTree(r.value()).get("seq").asInt();
                assertEquals(null, got.put(seq, "ALLOWED"), "two outputs for " + seq);
                String sendAt = JobOutputs.header(r, Delivery.HEADER_SEND_AT);
                Long want = expected.get(seq).verdict().sendAt();
                assertEquals(
                        want, sendAt == null ? null : Long.valueOf(sendAt), "send time " + seq);
                if (sendAt != null) {
                    assertTrue(r.timestamp() >= Long.parseLong(sendAt), "not before its time");
                }
            }
            for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-audit")) {
                JsonNode a = Json.MAPPER.readTree(r.value());
                int seq = a.get("message").get("seq").asInt();
                assertEquals(null, got.put(seq, a.get("decision").asText()), "two for " + seq);
                audits.put(seq, a);
            }
            assertEquals(inputs.size(), got.size(), "one output per input");
            Map<String, Integer> kinds = new HashMap<>();
            Map<String, Integer> seqOf = new HashMap<>();
            for (Input in : inputs) {
                seqOf.put(OutboundMessage.parse(in.value).messageId(), in.seq);
                Decided want = expected.get(in.seq);
                String where = "input " + in.seq + " " + new String(in.value);
                assertEquals(want.decision().name(), got.get(in.seq), where);
                if (want.decision() == Decision.PREEMPTED) {
                    assertEquals(
                            want.verdict().preemptedBy(),
                            audits.get(in.seq).get("preemptedBy").asText(),
                            where);
                    assertEquals(
                            (long) want.verdict().sendAt(),
                            audits.get(in.seq).get("sendAt").asLong(),
                            where);
                }
                kinds.merge(
                        OutboundMessage.parse(in.value).messageId().replaceAll("-.*", "")
                                + " "
                                + got.get(in.seq),
                        1,
                        Integer::sum);
            }
            assertEquals(
                    Map.of(
                            "now ALLOWED",
                            USERS,
                            "promo PREEMPTED",
                            USERS,
                            "promo2 REJECTED",
                            USERS,
                            "alert ALLOWED",
                            USERS / 2,
                            "alert PREEMPTED",
                            USERS / 2,
                            "urgent ALLOWED",
                            USERS / 2),
                    kinds);
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }
}
