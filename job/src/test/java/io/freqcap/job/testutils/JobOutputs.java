package io.freqcap.job.testutils;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.backtest.MemoryHistories;
import io.freqcap.operators.backtest.MemoryLifetimes;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.decision.Engagements;
import io.freqcap.operators.capping.decision.HeldQueue;
import io.freqcap.operators.capping.decision.Preferences;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.capping.rule.Judging;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.lifetime.LifetimeCount;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What a job wrote, read back with read_committed, and the checks on it: one output per input, each
 * the decision core's, no interval over its limit.
 */
public final class JobOutputs {
    private JobOutputs() {}

    /** What the job wrote for one input record. */
    /**
     * @param shadow what the output says the shadow rules would have decided, or null
     */
    public record Output(
            String decision,
            long configVersion,
            String segment,
            byte[] key,
            byte[] value,
            JsonNode audit,
            String shadow,
            Long sendAt) {}

    /** A consumer of its own group reading everything committed, from the beginning. */
    public static Properties readCommittedConsumer(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "verifier-" + System.nanoTime());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        return p;
    }

    /**
     * Reads a test's two output topics ({@code <name>-deliveries}, {@code <name>-audit}) with
     * read_committed until {@code expected} records arrived.
     */
    public static Map<String, List<ConsumerRecord<byte[], byte[]>>> readOutputs(
            String bootstrap, String name, int expected, Duration timeout) {
        return readCommitted(
                bootstrap, List.of(name + "-deliveries", name + "-audit"), expected, timeout);
    }

    /**
     * Everything committed in {@code topic} now (read_committed, to the last stable offset of each
     * partition), partition by partition in offset order.
     */
    public static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrap, String topic) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c =
                new KafkaConsumer<>(readCommittedConsumer(bootstrap))) {
            List<org.apache.kafka.common.TopicPartition> parts = new ArrayList<>();
            for (var i : c.partitionsFor(topic)) {
                parts.add(new org.apache.kafka.common.TopicPartition(topic, i.partition()));
            }
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<org.apache.kafka.common.TopicPartition, Long> ends =
                    new HashMap<>(c.endOffsets(parts));
            while (ends.entrySet().stream().anyMatch(e -> c.position(e.getKey()) < e.getValue())) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.add(r);
                }
            }
        }
        return out;
    }

    /** Reads both output topics with read_committed until {@code expected} records arrived. */
    public static Map<String, List<ConsumerRecord<byte[], byte[]>>> readCommitted(
            String bootstrap, List<String> topics, int expected, Duration timeout) {
        Properties p = readCommittedConsumer(bootstrap);
        Map<String, List<ConsumerRecord<byte[], byte[]>>> out = new LinkedHashMap<>();
        topics.forEach(t -> out.put(t, new ArrayList<>()));
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(topics);
            long deadline = System.nanoTime() + timeout.toNanos();
            long quietUntil = Long.MAX_VALUE;
            int total = 0;
            while (System.nanoTime() < Math.min(deadline, quietUntil)) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    out.get(r.topic()).add(r);
                    total++;
                }
                if (total >= expected && quietUntil == Long.MAX_VALUE) {
                    // Keep reading a little: a record too many must show up too.
                    quietUntil = System.nanoTime() + Duration.ofSeconds(3).toNanos();
                }
            }
        }
        return out;
    }

    /** Waits (read_committed) until {@code n} records of {@code topic} contain {@code text}. */
    public static void awaitRecordsContaining(
            String bootstrap, String topic, String text, int n, Duration timeout) {
        Properties p = readCommittedConsumer(bootstrap);
        int seen = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + timeout.toNanos();
            while (seen < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (new String(r.value(), StandardCharsets.UTF_8).contains(text)) {
                        seen++;
                    }
                }
            }
        }
        assertTrue(seen >= n, seen + " of " + n + " records with " + text + " in " + topic);
    }

    public static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    /**
     * Matches every output to its input and checks: exactly one output per input; deliveries
     * byte-identical with the right headers and key; every decision equal to the decision core's
     * over the user's messages in partition order, under the config version the job reported.
     *
     * @return outputs by input seq
     */
    public static Map<Integer, Output> checkOutputs(
            List<Traffic.Input> inputs,
            List<ConsumerRecord<byte[], byte[]>> deliveries,
            List<ConsumerRecord<byte[], byte[]>> audits,
            Map<Long, LimitConfig> configs)
            throws Exception {
        return checkOutputs(inputs, deliveries, audits, configs, (user, version) -> "*");
    }

    /** The same, for what {@link #readOutputs} read of the job named {@code name}. */
    public static Map<Integer, Output> checkOutputs(
            List<Traffic.Input> inputs,
            Map<String, List<ConsumerRecord<byte[], byte[]>>> out,
            String name,
            Map<Long, LimitConfig> configs)
            throws Exception {
        return checkOutputs(
                inputs, out.get(name + "-deliveries"), out.get(name + "-audit"), configs);
    }

    /**
     * Reads what the job named {@code name} wrote for {@code inputs} and checks it, as above,
     * against {@code config} as version 1.
     */
    public static Map<Integer, Output> readAndCheck(
            String bootstrap,
            String name,
            List<Traffic.Input> inputs,
            String config,
            Duration timeout)
            throws Exception {
        return checkOutputs(
                inputs,
                readOutputs(bootstrap, name, inputs.size(), timeout),
                name,
                Map.of(1L, LimitConfig.parse(config)));
    }

    /**
     * As above, where a user's segment is {@code segmentOf(userId, configVersion)} (the segments in
     * force with that config version).
     */
    public static Map<Integer, Output> checkOutputs(
            List<Traffic.Input> inputs,
            List<ConsumerRecord<byte[], byte[]>> deliveries,
            List<ConsumerRecord<byte[], byte[]>> audits,
            Map<Long, LimitConfig> configs,
            java.util.function.BiFunction<Long, Long, String> segmentOf)
            throws Exception {
        Map<Integer, Output> bySeq = outputsBySeq(inputs, deliveries, audits);

        // Replay each user's messages in partition order through the job's decision step.
        MemoryHistories histories = new MemoryHistories();
        // Lifetime counts from the first record when a config has a lifetime limit: the tests'
        // jobs start with theirs.
        Stores stores =
                new Stores(
                        histories,
                        HeldQueue.NONE,
                        Preferences.NONE,
                        Engagements.NONE,
                        new MemoryLifetimes(
                                LifetimeCount.DEFAULT_RETENTION_MILLIS,
                                configs.values().stream().anyMatch(LimitConfig::hasLifetime)));
        DecisionStep step = new DecisionStep(stores, false);
        List<Traffic.Input> ordered = Traffic.inPartitionOrder(inputs);
        for (Traffic.Input in : ordered) {
            Output o = bySeq.get(in.seq);
            OutboundMessage m;
            try {
                m = OutboundMessage.parse(in.value);
            } catch (Exception e) {
                assertEquals("MALFORMED", o.decision(), "input " + in.seq);
                assertEquals(
                        in.value == null ? null : Base64.getEncoder().encodeToString(in.value),
                        o.audit().get("raw").isNull() ? null : o.audit().get("raw").asText());
                continue;
            }
            LimitConfig config = configs.get(o.configVersion());
            assertTrue(
                    config != null,
                    "unknown config version " + o.configVersion() + " for " + in.seq);
            CountedHistory h = histories.get(m.userId());
            String segment = segmentOf.apply(m.userId(), o.configVersion());
            RawRecord raw = new RawRecord(in.key, in.value, "in", in.partition, in.offset);
            Decided decided =
                    step.decide(
                            InboundMessage.of(raw), config, segment, segment, Judging.Times.NONE);
            stores.apply(decided);
            Verdict v = decided.verdict();
            if (!v.decision().name().equals(o.decision())) {
                StringBuilder sb = new StringBuilder();
                for (Traffic.Input x : ordered) {
                    Long u = Traffic.userOf(x);
                    if (u != null && u == m.userId()) {
                        sb.append("\n  ")
                                .append(x.partition)
                                .append('/')
                                .append(x.offset)
                                .append(' ')
                                .append(bySeq.get(x.seq).decision())
                                .append("@v")
                                .append(bySeq.get(x.seq).configVersion())
                                .append(' ')
                                .append(
                                        new String(x.value, StandardCharsets.UTF_8),
                                        0,
                                        Math.min(120, x.value.length));
                    }
                }
                System.err.println("MISMATCH at " + in.seq + " history " + h + sb);
            }
            assertEquals(v.decision().name(), o.decision(), "input " + in.seq + " " + m);
            assertEquals(segment, o.segment(), "segment of " + in.seq);
            String shadow =
                    v.shadow() == null || v.decision() == Decision.EXEMPT
                            ? null
                            : v.shadow().label();
            assertEquals(shadow, o.shadow(), "shadow decision of " + in.seq + " " + m);
            assertEquals(v.sendAt(), o.sendAt(), "send time of " + in.seq + " " + m);
            if (o.value() != null) {
                assertTrue(Arrays.equals(in.value, o.value()), "delivery bytes of " + in.seq);
                byte[] expectedKey =
                        in.key != null
                                ? in.key
                                : String.valueOf(m.userId()).getBytes(StandardCharsets.UTF_8);
                assertTrue(Arrays.equals(expectedKey, o.key()), "delivery key of " + in.seq);
            } else if (v.decision() == Decision.REJECTED) {
                assertEquals(v.violations().size(), o.audit().get("violations").size());
                assertEquals(
                        String.valueOf(m.userId()), new String(o.key(), StandardCharsets.UTF_8));
            }
        }
        return bySeq;
    }

    /**
     * Each input's one output, by seq (an input's delivery carries its seq; a MALFORMED record
     * names its source); no decision checked.
     */
    public static Map<Integer, Output> outputsBySeq(
            List<Traffic.Input> inputs,
            List<ConsumerRecord<byte[], byte[]>> deliveries,
            List<ConsumerRecord<byte[], byte[]>> audits)
            throws Exception {
        Map<Integer, Output> bySeq = new HashMap<>();
        Map<String, Integer> seqBySource = new HashMap<>();
        for (Traffic.Input in : inputs) {
            seqBySource.put(in.partition + "/" + in.offset, in.seq);
        }
        for (ConsumerRecord<byte[], byte[]> r : deliveries) {
            int seq = Json.MAPPER.readTree(r.value()).get("seq").asInt();
            Output o =
                    new Output(
                            header(r, Delivery.HEADER_DECISION),
                            Long.parseLong(header(r, Delivery.HEADER_CONFIG_VERSION)),
                            header(r, Delivery.HEADER_SEGMENT),
                            r.key(),
                            r.value(),
                            null,
                            header(r, Delivery.HEADER_SHADOW),
                            header(r, Delivery.HEADER_SEND_AT) == null
                                    ? null
                                    : Long.parseLong(header(r, Delivery.HEADER_SEND_AT)));
            assertTrue(bySeq.put(seq, o) == null, "two outputs for input " + seq);
        }
        int invalidControl = 0;
        for (ConsumerRecord<byte[], byte[]> r : audits) {
            JsonNode a = Json.MAPPER.readTree(r.value());
            String decision = a.get("decision").asText();
            int seq;
            if (decision.equals("INVALID_CONTROL")) {
                invalidControl++;
                continue;
            } else if (decision.equals("MALFORMED")) {
                seq =
                        seqBySource.get(
                                a.get("source").get("partition").asInt()
                                        + "/"
                                        + a.get("source").get("offset").asLong());
            } else {
                seq = a.get("message").get("seq").asInt();
            }
            Output o =
                    new Output(
                            decision,
                            a.path("configVersion").asLong(-1),
                            a.path("segment").asText(null),
                            r.key(),
                            null,
                            a,
                            a.has("shadow") ? a.get("shadow").get("decision").asText() : null,
                            null);
            assertTrue(bySeq.put(seq, o) == null, "two outputs for input " + seq);
        }
        assertEquals(inputs.size(), bySeq.size(), "one output per input");
        return bySeq;
    }

    /**
     * The promise itself, checked on the decisions: whenever a message was counted, no interval of
     * any window in force held more than its max, counting what was counted up to then.
     */
    public static void checkNoIntervalOverfilled(
            List<Traffic.Input> inputs,
            Map<Integer, Output> outputs,
            Map<Long, LimitConfig> configs)
            throws Exception {
        Map<Long, List<long[]>> counted = new HashMap<>(); // user -> {timestamp, isEmail}
        List<Traffic.Input> ordered = Traffic.inPartitionOrder(inputs);
        for (Traffic.Input in : ordered) {
            Output o = outputs.get(in.seq);
            if (!"ALLOWED".equals(o.decision())) {
                continue;
            }
            OutboundMessage m = OutboundMessage.parse(in.value);
            List<long[]> mine = counted.computeIfAbsent(m.userId(), u -> new ArrayList<>());
            mine.add(new long[] {m.timestamp(), m.channel().equals("email") ? 1 : 0});
            Rule rule = configs.get(o.configVersion()).ruleFor("*");
            for (Limit l : rule.caps().all()) {
                assertTrue(
                        most(mine, m.timestamp(), l.windowMillis(), false) <= l.max(),
                        "user " + m.userId() + " over " + l);
            }
            if (m.channel().equals("email")) {
                for (Limit l : rule.channelLimits("email")) {
                    assertTrue(
                            most(mine, m.timestamp(), l.windowMillis(), true) <= l.max(),
                            "user " + m.userId() + " over email " + l);
                }
            }
        }
    }

    private static int most(List<long[]> entries, long t, long w, boolean emailOnly) {
        int most = 0;
        for (long[] start : entries) {
            long s = start[0];
            if (s > t || s <= t - w) {
                continue;
            }
            int n = 0;
            for (long[] e : entries) {
                if ((!emailOnly || e[1] == 1) && e[0] >= s && e[0] - s < w) {
                    n++;
                }
            }
            most = Math.max(most, n);
        }
        return most;
    }
}
