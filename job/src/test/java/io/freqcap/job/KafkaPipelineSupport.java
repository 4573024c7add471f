package io.freqcap.job;

import static io.freqcap.schema.Instants.DAY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.local.LocalKafka;
import io.freqcap.operators.backtest.Backtest;
import io.freqcap.operators.backtest.FinalOutcomes;
import io.freqcap.operators.backtest.MemoryHistories;
import io.freqcap.operators.capping.Bounds;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.decision.HeldQueue;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.mirror.RedisMirrorSink;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Test traffic for the Kafka pipeline tests and the checks on what the job wrote: seeded input with
 * every kind of record, the outputs read back with read_committed, and a replay of the decision
 * core over each user's messages in partition order.
 */
final class KafkaPipelineSupport {
    static final long START = 1_763_769_600_000L;

    static String config(long version, int perDay, int perWeek, int emailPerDay) {
        return "{\"version\":"
                + version
                + ",\"rules\":[{\"segment\":\"*\",\"limits\":["
                + "{\"window\":\"1d\",\"max\":"
                + perDay
                + "},{\"window\":\"7d\",\"max\":"
                + perWeek
                + "}],"
                + "\"channels\":{\"email\":[{\"window\":\"1d\",\"max\":"
                + emailPerDay
                + "}]}}],"
                + "\"exempt\":[\"transactional\"]}";
    }

    /** One input record as produced, and where it landed. */
    static final class Input {
        final int seq;
        final byte[] key;
        final byte[] value;
        int partition;
        long offset;

        Input(int seq, byte[] key, byte[] value) {
            this.seq = seq;
            this.key = key;
            this.value = value;
        }
    }

    /**
     * Seeded traffic: users over days of message time, two channels, exempt categories,
     * out-of-order and very late (stale) timestamps, resent messages (duplicates), records without
     * a key, and malformed records of several kinds. Every record carries a unique {@code seq} so
     * its output can be found.
     */
    static List<Input> traffic(long seed, int messages, int users, int days) {
        Random rnd = new Random(seed);
        List<Input> out = new ArrayList<>();
        Map<Long, List<String>> sentByUser = new HashMap<>();
        double step = (double) days * DAY / messages;
        for (int i = 0; i < messages; i++) {
            long user = rnd.nextInt(users);
            byte[] key = String.valueOf(user).getBytes(StandardCharsets.UTF_8);
            int kind = rnd.nextInt(1000);
            if (kind < 6) {
                out.add(new Input(i, rnd.nextBoolean() ? key : null, malformed(rnd, i, user)));
                continue;
            }
            long t = START + (long) (i * step);
            int shift = rnd.nextInt(100);
            if (shift < 10) {
                t -= rnd.nextInt(6 * 3600_000); // a few hours out of order
            } else if (shift < 11) {
                t -= 8 * DAY + rnd.nextInt((int) DAY); // far too late: stale for active users
            }
            List<String> sent = sentByUser.computeIfAbsent(user, u -> new ArrayList<>());
            String messageId =
                    !sent.isEmpty() && rnd.nextInt(50) == 0
                            ? sent.get(rnd.nextInt(sent.size()))
                            : "m-" + i;
            sent.add(messageId);
            String channel = rnd.nextInt(3) == 0 ? "email" : "push";
            String category =
                    rnd.nextInt(20) == 0
                            ? "transactional"
                            : rnd.nextInt(10) == 0 ? "promo" : "marketing";
            String json =
                    "{\"messageId\":\""
                            + messageId
                            + "\",\"userId\":"
                            + user
                            + ",\"channel\":\""
                            + channel
                            + "\",\"category\":\""
                            + category
                            + "\",\"campaignId\":\"c"
                            + rnd.nextInt(5)
                            + "\",\"timestamp\":"
                            + t
                            + ",\"seq\":"
                            + i
                            + ",\"payload\":{\"title\":\"Sale \\u00e9 "
                            + i
                            + "\"}}";
            out.add(
                    new Input(
                            i,
                            rnd.nextInt(20) == 0 ? null : key,
                            json.getBytes(StandardCharsets.UTF_8)));
        }
        return out;
    }

    /** A push message of {@code user} keyed by its userId, carrying its {@code seq}. */
    static Input pushMessage(int seq, long user, String messageId, long timestamp) {
        String json =
                "{\"messageId\":\""
                        + messageId
                        + "\",\"userId\":"
                        + user
                        + ",\"channel\":\"push\",\"timestamp\":"
                        + timestamp
                        + ",\"seq\":"
                        + seq
                        + "}";
        return new Input(
                seq,
                Long.toString(user).getBytes(StandardCharsets.UTF_8),
                json.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] malformed(Random rnd, int seq, long user) {
        String s;
        switch (rnd.nextInt(6)) {
            case 0:
                return null; // tombstone
            case 1:
                s =
                        "{\"messageId\":\"x"
                                + seq
                                + "\",\"userId\":\""
                                + user
                                + "\",\"channel\":\"push\",\"timestamp\":1,\"seq\":"
                                + seq
                                + "}";
                break;
            case 2:
                s =
                        "{\"messageId\":\"x"
                                + seq
                                + "\",\"userId\":"
                                + user
                                + ",\"timestamp\":1,\"seq\":"
                                + seq
                                + "}";
                break;
            case 3:
                s =
                        "{\"messageId\":\"x"
                                + seq
                                + "\",\"userId\":"
                                + user
                                + ",\"channel\":\"push\",\"timestamp\":1,\"seq\":"
                                + seq
                                + "} trailing";
                break;
            case 4:
                s = "not json at all " + seq;
                break;
            default:
                s =
                        "{\"messageId\":\"x"
                                + seq
                                + "\",\"userId\":"
                                + user
                                + ".0,\"channel\":\"push\",\"timestamp\":1,\"seq\":"
                                + seq
                                + "}";
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Job options for one test: topics named after it on the test's broker, {@code config} as
     * --limits, checkpoints every second, parallelism 2, plus {@code extra} options.
     */
    static Configuration jobOptions(
            LocalKafka kafka, Path tmp, String name, String config, int partitions, String... extra)
            throws Exception {
        Path limits = Files.writeString(tmp.resolve(name + "-limits.json"), config);
        List<String> args = new ArrayList<>(args(kafka, name, limits));
        args.addAll(Arrays.asList(extra));
        Configuration c = CommandLine.parse(args.toArray(new String[0]), List.of());
        kafka.createTopics(
                partitions, List.of(name + "-in", name + "-deliveries", name + "-audit"));
        kafka.createTopics(1, List.of(name + "-config", name + "-segments"));
        return c;
    }

    /**
     * Options for a job named {@code name}: the test broker, topics and group named after it,
     * {@code limits}, checkpoints every second, parallelism 2.
     */
    static List<String> args(LocalKafka kafka, String name, Path limits) {
        return args(kafka.bootstrapServers(), name, limits);
    }

    /** The same, for a Kafka at {@code bootstrap}. */
    static List<String> args(String bootstrap, String name, Path limits) {
        return List.of(
                "--bootstrap-servers",
                bootstrap,
                "--group-id",
                name,
                "--input-topic",
                name + "-in",
                "--config-topic",
                name + "-config",
                "--segments-topic",
                name + "-segments",
                "--delivery-topic",
                name + "-deliveries",
                "--audit-topic",
                name + "-audit",
                "--limits",
                limits.toString(),
                "--checkpoint-interval",
                "1s",
                "--parallelism",
                "2");
    }

    /**
     * Cancels a job and waits until it has stopped, so that nothing writes into the test's
     * temporary directory (checkpoints) while JUnit deletes it.
     */
    static void cancel(org.apache.flink.core.execution.JobClient job) throws Exception {
        job.cancel().get();
        try {
            job.getJobExecutionResult().get(60, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException cancelled) {
            // what a cancelled job's result is
        }
    }

    /** A MiniCluster for a test class: {@code taskManagers} with {@code slots} slots each. */
    static org.apache.flink.test.junit5.MiniClusterExtension miniCluster(
            int taskManagers, int slots) {
        return miniCluster(new Configuration(), taskManagers, slots);
    }

    /** The same, with Flink settings of its own (a metric reporter's, say). */
    static org.apache.flink.test.junit5.MiniClusterExtension miniCluster(
            Configuration flink, int taskManagers, int slots) {
        return new org.apache.flink.test.junit5.MiniClusterExtension(
                new org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration.Builder()
                        .setConfiguration(flink)
                        .setNumberTaskManagers(taskManagers)
                        .setNumberSlotsPerTaskManager(slots)
                        .build());
    }

    /** The job's Flink settings with checkpoints under {@code tmp} and quick restarts. */
    static StreamExecutionEnvironment testEnv(Configuration options, Path tmp) {
        Configuration flink = FreqcapMain.flinkConfig(options);
        flink.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        flink.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                tmp.resolve("checkpoints").toUri().toString());
        flink.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        flink.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        flink.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(500));
        return StreamExecutionEnvironment.getExecutionEnvironment(flink);
    }

    static Properties producerProps(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        return p;
    }

    /**
     * Produces inputs in order, recording partitions and offsets. Records without a key go to the
     * partition their user's keyed records use, as the contract asks of producers.
     */
    static void produce(String bootstrap, String topic, int partitions, List<Input> inputs)
            throws Exception {
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(producerProps(bootstrap))) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (Input in : inputs) {
                Integer partition = null;
                if (in.key == null) {
                    partition = Math.floorMod(in.seq, partitions);
                    Long user = userOf(in);
                    if (user != null) {
                        partition =
                                partitionFor(
                                        String.valueOf(user).getBytes(StandardCharsets.UTF_8),
                                        partitions);
                    }
                }
                acks.add(producer.send(new ProducerRecord<>(topic, partition, in.key, in.value)));
            }
            for (int i = 0; i < inputs.size(); i++) {
                RecordMetadata md = acks.get(i).get();
                inputs.get(i).partition = md.partition();
                inputs.get(i).offset = md.offset();
            }
        }
    }

    /** Kafka's default partitioner for a keyed record. */
    static int partitionFor(byte[] key, int partitions) {
        return org.apache.kafka.clients.producer.internals.BuiltInPartitioner.partitionForKey(
                key, partitions);
    }

    /**
     * The decision core's verdict on each input (by seq), every input decided in partition order
     * under one config by the job's own backtest.
     */
    static Map<Integer, Verdict> decisionCore(List<Input> inputs, String json) throws Exception {
        Map<Integer, Verdict> out = new HashMap<>();
        finalOutcomes(inputs, json).forEach((seq, d) -> out.put(seq, d.verdict()));
        return out;
    }

    /**
     * Each input's final outcome (by seq) as the job's own backtest decides them in partition order
     * under one config: a held message whose place a later one took ends PREEMPTED (contract.md §6,
     * §8).
     */
    static Map<Integer, Decided> finalOutcomes(List<Input> inputs, String json) throws Exception {
        Map<Integer, Decided> out = new HashMap<>();
        try (Backtest backtest =
                Backtest.start(
                        LimitConfig.parse(json),
                        List.of(),
                        Bounds.DEFAULTS.segmentLoader(),
                        s -> {})) {
            FinalOutcomes<Integer> outcomes =
                    new FinalOutcomes<>(true, (d, seq) -> out.put(seq, d));
            for (Input in : inPartitionOrder(inputs)) {
                RawRecord raw = new RawRecord(in.key, in.value, "in", in.partition, in.offset);
                outcomes.add(backtest.decide(InboundMessage.of(raw)), in.seq, backtest.clock());
            }
            outcomes.finish();
        }
        return out;
    }

    /**
     * The job as {@link FreqcapMain} wires it, its input passing through {@link FailOnce} first
     * (the one failure a test injects, after {@code failAfter} records): Kafka in and out, the
     * config topic as the only control input.
     *
     * @param mirror the Redis mirror's sink, or null for none
     */
    static void failingOnceJob(
            StreamExecutionEnvironment env,
            Configuration options,
            int failAfter,
            CappingSettings settings,
            RedisMirrorSink mirror) {
        KafkaSettings kafka = KafkaSettings.of(options);
        failingOnceJob(env, kafka, failAfter, settings, mirror, null, null);
    }

    /**
     * The same, with the preferences and receipts topics of the options when they name them
     * (contract.md §10, §11).
     */
    static void failingOnceJobWithUserInputs(
            StreamExecutionEnvironment env,
            Configuration options,
            int failAfter,
            CappingSettings settings) {
        KafkaSettings kafka = KafkaSettings.of(options);
        failingOnceJob(
                env,
                kafka,
                failAfter,
                settings,
                null,
                kafka.preferencesTopic() == null
                        ? null
                        : env.fromSource(
                                        KafkaConnectors.preferencesSource(kafka),
                                        WatermarkStrategy.noWatermarks(),
                                        "preferences")
                                .uid("preferences"),
                kafka.receiptsTopic() == null
                        ? null
                        : env.fromSource(
                                        KafkaConnectors.receiptsSource(kafka),
                                        WatermarkStrategy.noWatermarks(),
                                        "receipts")
                                .uid("receipts"));
    }

    private static void failingOnceJob(
            StreamExecutionEnvironment env,
            KafkaSettings kafka,
            int failAfter,
            CappingSettings settings,
            RedisMirrorSink mirror,
            DataStream<RawRecord> preferences,
            DataStream<RawRecord> receipts) {
        DataStream<RawRecord> input =
                env.fromSource(
                                KafkaConnectors.inputSource(kafka),
                                WatermarkStrategy.noWatermarks(),
                                "in")
                        .uid("in")
                        .map(new FailOnce(failAfter))
                        .uid("fail-once")
                        .name("fail-once");
        DataStream<ControlRecord> control =
                env.fromSource(
                                KafkaConnectors.controlSource(kafka, ControlRecord.Kind.CONFIG),
                                WatermarkStrategy.noWatermarks(),
                                "config")
                        .uid("config")
                        .setParallelism(1);
        FreqcapJob.build(
                settings,
                input,
                preferences,
                receipts,
                control,
                KafkaConnectors.deliverySink(kafka),
                KafkaConnectors.auditSink(kafka),
                mirror);
    }

    /** Inputs as the job reads them: by partition, then offset (per user: partition order). */
    static List<Input> inPartitionOrder(List<Input> inputs) {
        List<Input> ordered = new ArrayList<>(inputs);
        ordered.sort(
                java.util.Comparator.<Input>comparingInt(x -> x.partition)
                        .thenComparingLong(x -> x.offset));
        return ordered;
    }

    static Long userOf(Input in) {
        try {
            return OutboundMessage.parse(in.value).userId();
        } catch (Exception e) {
            return null;
        }
    }

    static void send(String bootstrap, String topic, String value) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(producerProps(bootstrap))) {
            producer.send(new ProducerRecord<>(topic, null, value.getBytes(StandardCharsets.UTF_8)))
                    .get();
        }
    }

    /** What the job wrote for one input record. */
    /**
     * @param shadow what the output says the shadow rules would have decided, or null
     */
    record Output(
            String decision,
            long configVersion,
            String segment,
            byte[] key,
            byte[] value,
            JsonNode audit,
            String shadow,
            Long sendAt) {}

    /** A consumer of its own group reading everything committed, from the beginning. */
    static Properties readCommittedConsumer(String bootstrap) {
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
    static Map<String, List<ConsumerRecord<byte[], byte[]>>> readOutputs(
            String bootstrap, String name, int expected, Duration timeout) {
        return readCommitted(
                bootstrap, List.of(name + "-deliveries", name + "-audit"), expected, timeout);
    }

    /** Reads both output topics with read_committed until {@code expected} records arrived. */
    static Map<String, List<ConsumerRecord<byte[], byte[]>>> readCommitted(
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
    static void awaitRecordsContaining(
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

    static String header(ConsumerRecord<byte[], byte[]> r, String name) {
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
    static Map<Integer, Output> checkOutputs(
            List<Input> inputs,
            List<ConsumerRecord<byte[], byte[]>> deliveries,
            List<ConsumerRecord<byte[], byte[]>> audits,
            Map<Long, LimitConfig> configs)
            throws Exception {
        return checkOutputs(inputs, deliveries, audits, configs, (user, version) -> "*");
    }

    /** The same, for what {@link #readOutputs} read of the job named {@code name}. */
    static Map<Integer, Output> checkOutputs(
            List<Input> inputs,
            Map<String, List<ConsumerRecord<byte[], byte[]>>> out,
            String name,
            Map<Long, LimitConfig> configs)
            throws Exception {
        return checkOutputs(
                inputs, out.get(name + "-deliveries"), out.get(name + "-audit"), configs);
    }

    /**
     * As above, where a user's segment is {@code segmentOf(userId, configVersion)} (the segments in
     * force with that config version).
     */
    static Map<Integer, Output> checkOutputs(
            List<Input> inputs,
            List<ConsumerRecord<byte[], byte[]>> deliveries,
            List<ConsumerRecord<byte[], byte[]>> audits,
            Map<Long, LimitConfig> configs,
            java.util.function.BiFunction<Long, Long, String> segmentOf)
            throws Exception {
        Map<Integer, Output> bySeq = new HashMap<>();
        Map<String, Integer> seqBySource = new HashMap<>();
        for (Input in : inputs) {
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

        // Replay each user's messages in partition order through the job's decision step.
        MemoryHistories histories = new MemoryHistories();
        Stores stores = new Stores(histories, HeldQueue.NONE);
        DecisionStep step = new DecisionStep(stores, false);
        List<Input> ordered = inPartitionOrder(inputs);
        for (Input in : ordered) {
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
                            InboundMessage.of(raw),
                            config,
                            segment,
                            segment,
                            Long.MIN_VALUE,
                            Long.MIN_VALUE);
            stores.apply(decided);
            Verdict v = decided.verdict();
            if (!v.decision().name().equals(o.decision())) {
                StringBuilder sb = new StringBuilder();
                for (Input x : ordered) {
                    Long u = userOf(x);
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
     * The promise itself, checked on the decisions: whenever a message was counted, no interval of
     * any window in force held more than its max, counting what was counted up to then.
     */
    static void checkNoIntervalOverfilled(
            List<Input> inputs, Map<Integer, Output> outputs, Map<Long, LimitConfig> configs)
            throws Exception {
        Map<Long, List<long[]>> counted = new HashMap<>(); // user -> {timestamp, isEmail}
        List<Input> ordered = inPartitionOrder(inputs);
        for (Input in : ordered) {
            Output o = outputs.get(in.seq);
            if (!"ALLOWED".equals(o.decision())) {
                continue;
            }
            OutboundMessage m = OutboundMessage.parse(in.value);
            List<long[]> mine = counted.computeIfAbsent(m.userId(), u -> new ArrayList<>());
            mine.add(new long[] {m.timestamp(), m.channel().equals("email") ? 1 : 0});
            Rule rule = configs.get(o.configVersion()).ruleFor("*");
            for (Limit l : rule.limits()) {
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
