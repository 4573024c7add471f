package io.freqcap.operators.capping;

import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.mirror.MirrorWrite;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * State written by an earlier freqcap keeps working: a snapshot of the capping operator (RocksDB,
 * committed under {@code src/test/resources/state-compat/}) holds every kind of state it keeps —
 * user histories with message ids (mirror on), the limit config received from the topic (newer than
 * the job's initial one), an inline segment in the broadcast state — and restoring it must decide
 * the rest of the traffic exactly as a run that never stopped.
 *
 * <p>Fixtures are written once per released state format and never rewritten: {@code mvn -q -pl
 * operators exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.freqcap.operators.capping.CappingStateCompatibilityTest -Dexec.args=VERSION}
 * writes {@code capping-VERSION.snapshot}; add VERSION to {@link #FIXTURES}. With {@code
 * -Dexec.args="VERSION extended"} it writes only {@code capping-extended-VERSION.snapshot}.
 */
public class CappingStateCompatibilityTest {
    /** Snapshots of released state formats; each must restore. */
    static final List<String> FIXTURES = List.of("0.1", "0.2");

    /** Snapshots holding a long history (a heavy user, from 0.2 on); each must restore. */
    static final List<String> LONG_FIXTURES = List.of("0.2");

    /** Snapshots of histories in format version 2 (categories, campaigns, zone offsets). */
    static final List<String> EXTENDED_FIXTURES = List.of("0.2");

    /** Calendar limits in the users' zones, a category and a campaign limit, a shadow. */
    static final String EXTENDED_CONFIG =
            "{\"version\":1,\"timezone\":\"Asia/Singapore\",\"rules\":[{\"segment\":\"*\","
                    + "\"limits\":[{\"calendar\":\"day\",\"max\":3},{\"window\":\"7d\",\"max\":12}],"
                    + "\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":2}]},"
                    + "\"campaign\":[{\"window\":\"2d\",\"max\":1}]}],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"calendar\":\"day\",\"max\":2}]}]}}";

    static final String[] ZONES = {null, "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe"};

    /** 30 users over 6 days, each in a zone of its own, with categories and campaigns. */
    static List<InboundMessage> extendedTraffic(int from, int to) {
        Random rnd = new Random(9);
        List<InboundMessage> all = new ArrayList<>();
        for (int i = 0; i < to; i++) {
            long user = 1 + rnd.nextInt(30);
            String zone = ZONES[(int) (user % ZONES.length)];
            String json =
                    String.format(
                            "{\"messageId\":\"x%d\",\"userId\":%d,\"channel\":\"push\","
                                    + "\"category\":\"%s\",\"campaignId\":%s,\"timestamp\":%d%s}",
                            i,
                            user,
                            rnd.nextInt(3) == 0 ? "promo" : "marketing",
                            rnd.nextInt(3) == 0 ? "null" : "\"c" + rnd.nextInt(3) + "\"",
                            DAY_1_NOON + i * (6 * 24 * HOUR / to) + rnd.nextInt(3) * HOUR,
                            zone == null ? "" : ",\"timezone\":\"" + zone + "\"");
            if (i >= from) {
                all.add(inbound(json, i));
            }
        }
        return all;
    }

    /** A message's bytes as read at {@code offset} of partition 0 of topic {@code in}. */
    static InboundMessage inbound(String json, int offset) {
        return InboundMessage.of(
                new RawRecord(null, json.getBytes(StandardCharsets.UTF_8), "in", 0, offset));
    }

    /** What a harness wrote since it was marked: deliveries, audit records, mirror writes. */
    record Since(
            KeyedBroadcastOperatorTestHarness<?, ?, ?, Delivery> h,
            int deliveryCount,
            int auditCount,
            int mirroredCount) {
        static Since mark(KeyedBroadcastOperatorTestHarness<?, ?, ?, Delivery> h) {
            return new Since(
                    h,
                    h.extractOutputValues().size(),
                    CappingStateCompatibilityTest.audits(h).size(),
                    CappingHarnesses.mirrored(h).size());
        }

        List<Delivery> deliveries() {
            List<Delivery> all = h.extractOutputValues();
            return all.subList(deliveryCount, all.size());
        }

        List<String> audits() {
            List<String> all = CappingStateCompatibilityTest.audits(h);
            return all.subList(auditCount, all.size());
        }

        List<MirrorWrite> mirrored() {
            List<MirrorWrite> all = CappingHarnesses.mirrored(h);
            return all.subList(mirroredCount, all.size());
        }
    }

    /**
     * What a task whose mirror was rebuilt wrote after the snapshot: its deliveries' decisions, its
     * audit records, its mirror writes.
     */
    record Written(List<String> decisions, List<String> audits, List<MirrorWrite> mirrored) {
        static Written since(Since s) {
            return new Written(
                    CappingStateCompatibilityTest.decisions(s.deliveries()),
                    s.audits(),
                    s.mirrored());
        }

        /** Asserts a restored task wrote the same, part by part; what it wrote. */
        Written assertSameAs(
                KeyedBroadcastOperatorTestHarness<?, ?, ?, Delivery> restored, String version) {
            Written got =
                    new Written(
                            CappingStateCompatibilityTest.decisions(restored.extractOutputValues()),
                            CappingStateCompatibilityTest.audits(restored),
                            CappingHarnesses.mirrored(restored));
            assertEquals(decisions, got.decisions, "decisions after restoring " + version);
            assertEquals(audits, got.audits, "audit records after " + version);
            assertEquals(mirrored, got.mirrored, "mirror writes after " + version);
            return got;
        }
    }

    /**
     * The kinds of fixture: each a config (the mirror on) and a traffic its snapshot splits, whose
     * first part the fixture holds the state of.
     */
    enum Fixture {
        /** Segments, a config update, 60 users' histories with message ids. */
        RELEASED("capping", CONFIG_V1, true),
        /** One heavy user's long history. */
        LONG("capping-long", HEAVY_CONFIG, true),
        /** Histories in format version 2 (categories, campaigns, zone offsets); no rebuild. */
        EXTENDED("capping-extended", EXTENDED_CONFIG, false);

        final String kind;
        final String config;
        final boolean rebuild;

        Fixture(String kind, String config, boolean rebuild) {
            this.kind = kind;
            this.config = config;
            this.rebuild = rebuild;
        }

        /** The part of the traffic before the snapshot. */
        void before(KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, ?> h)
                throws Exception {
            switch (this) {
                case RELEASED -> CappingStateCompatibilityTest.before(h);
                case LONG -> feed(h, heavyTraffic(0, HEAVY_BEFORE));
                case EXTENDED -> feed(h, extendedTraffic(0, EXTENDED_BEFORE));
            }
        }

        /** The part after it, then a rebuild of the mirror when the fixture's test compares it. */
        void after(KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, ?> h)
                throws Exception {
            feed(
                    h,
                    switch (this) {
                        case RELEASED -> traffic(BEFORE, ALL);
                        case LONG -> heavyTraffic(HEAVY_BEFORE, HEAVY_ALL);
                        case EXTENDED -> extendedTraffic(EXTENDED_BEFORE, EXTENDED_ALL);
                    });
            if (rebuild) {
                h.processBroadcastElement(CappingMirrorTest.REBUILD, 0);
            }
        }

        /** The committed fixture of a release. */
        Path file(String version) {
            return fixture(kind, version);
        }
    }

    /** Each message to the harness at its own timestamp. */
    static void feed(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ?, ?> h,
            List<InboundMessage> messages)
            throws Exception {
        for (InboundMessage m : messages) {
            h.processElement(m, m.message().timestamp());
        }
    }

    /**
     * The reference: a task of the fixture's config that never stopped, given both parts of its
     * traffic; what it wrote after the first.
     */
    Since straight(Fixture f) throws Exception {
        var h = harnesses.openWithMirror(f.config, null);
        f.before(h);
        Since since = Since.mark(h);
        f.after(h);
        return since;
    }

    /** A task of the fixture's config restored from its committed file of a release. */
    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> restored(
            Fixture f, String version) throws Exception {
        return harnesses.openWithMirror(f.config, fixtureState(f.file(version)));
    }

    /** A committed fixture's state: it must be there, fixtures are never rebuilt. */
    static OperatorSubtaskState fixtureState(Path file) throws Exception {
        assertTrue(
                Files.exists(file),
                "state fixture " + file + " is missing: fixtures are committed, never rebuilt");
        return OperatorSnapshotUtil.readStateHandle(file.toString());
    }

    /** The committed fixture of one kind of snapshot ({@code capping}...) of a release. */
    static Path fixture(String kind, String version) {
        return Path.of("src/test/resources/state-compat/" + kind + "-" + version + ".snapshot");
    }

    static final int EXTENDED_BEFORE = 300;
    static final int EXTENDED_ALL = 600;

    @Test
    void extendedHistoriesOfReleasedVersionsRestoreAndDecideAsIfNeverStopped() throws Exception {
        Since since = straight(Fixture.EXTENDED);
        List<Delivery> expected = since.deliveries();
        List<String> expectedAudits = since.audits();
        assertTrue(expectedAudits.stream().anyMatch(a -> a.contains("\"calendar\":\"day\"")));
        assertTrue(expectedAudits.stream().anyMatch(a -> a.contains("\"campaign:c")));
        assertTrue(expectedAudits.stream().anyMatch(a -> a.contains("\"category:promo\"")));
        assertTrue(expected.stream().anyMatch(d -> "REJECTED".equals(d.shadow())));

        for (String version : EXTENDED_FIXTURES) {
            var restored = restored(Fixture.EXTENDED, version);
            Fixture.EXTENDED.after(restored);
            assertEquals(expected, restored.extractOutputValues(), "deliveries after " + version);
            assertEquals(expectedAudits, audits(restored), "audit records after " + version);
            harnesses.close(restored);
        }
    }

    /** A heavy user's config: room for hundreds of messages a day. */
    static final String HEAVY_CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1h\",\"max\":100},{\"window\":\"1d\",\"max\":400}],"
                    + "\"channels\":{\"email\":[{\"window\":\"1h\",\"max\":30}]}}]}";

    static final int HEAVY_BEFORE = 300;
    static final int HEAVY_ALL = 700;

    /** One user, a message every 30 s, two channels, every 25th a re-send. */
    static List<InboundMessage> heavyTraffic(int from, int to) {
        List<InboundMessage> all = new ArrayList<>();
        for (int i = from; i < to; i++) {
            int n = i % 25 == 24 ? i - 7 : i;
            String json =
                    String.format(
                            "{\"messageId\":\"h%d\",\"userId\":99,\"channel\":\"%s\","
                                    + "\"timestamp\":%d}",
                            n, n % 3 == 0 ? "email" : "push", DAY_1_NOON + n * 30_000L);
            all.add(inbound(json, i));
        }
        return all;
    }

    @Test
    void longHistoriesOfReleasedVersionsRestoreAndDecideAsIfNeverStopped() throws Exception {
        Written expected = Written.since(straight(Fixture.LONG));
        assertTrue(expected.audits().stream().anyMatch(a -> a.contains("\"REJECTED\"")));
        assertTrue(expected.audits().stream().anyMatch(a -> a.contains("\"DUPLICATE\"")));
        // A long history is written whole, one write of the user's log at a time.
        assertTrue(expected.mirrored().stream().allMatch(w -> w.userId() == 99 && !w.deletes()));
        assertTrue(
                expected.mirrored().get(0).entries() > 100,
                expected.mirrored().get(0).entries() + " entries rebuilt");

        for (String version : LONG_FIXTURES) {
            var restored = restored(Fixture.LONG, version);
            assertTrue(
                    CappingHarnesses.keyed(restored, 99, HistoryStore.LONG).value() != null,
                    "the fixture holds a long history");
            Fixture.LONG.after(restored);
            expected.assertSameAs(restored, version);
            harnesses.close(restored);
        }
    }

    /** The job's initial config: "vip" one a day, everyone else two a day. */
    static final String CONFIG_V1 =
            "{\"version\":1,\"rules\":["
                    + "{\"segment\":\"vip\",\"limits\":[{\"window\":\"1d\",\"max\":1}]},"
                    + "{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":2},"
                    + "{\"window\":\"7d\",\"max\":4}]}],"
                    + "\"channels\":{\"email\":[{\"window\":\"1d\",\"max\":1}]},"
                    + "\"exempt\":[\"transactional\"]}";

    /** Received from the config topic before the snapshot: everyone else three a day. */
    static final String CONFIG_V2 =
            CONFIG_V1.replace("\"version\":1", "\"version\":2").replace("\"max\":2}", "\"max\":3}");

    static final String VIP = SegmentsTest.inline("vip", 1, 5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    /**
     * The traffic: 60 users over 3 days, two channels, an exempt category, and every tenth message
     * a re-send of an earlier one (a duplicate, when the earlier one was counted).
     */
    static List<InboundMessage> traffic(int from, int to) {
        Random rnd = new Random(5);
        List<String> sent = new ArrayList<>();
        List<InboundMessage> all = new ArrayList<>();
        for (int i = 0; i < to; i++) {
            String json;
            if (i % 10 == 9) {
                json = sent.get(rnd.nextInt(sent.size()));
            } else {
                long user = 1 + rnd.nextInt(60);
                String channel = rnd.nextBoolean() ? "push" : "email";
                String category = rnd.nextInt(12) == 0 ? "transactional" : "marketing";
                long t = DAY_1_NOON + i * (3 * 24 * HOUR / to) + rnd.nextInt(2) * HOUR;
                json =
                        String.format(
                                "{\"messageId\":\"m%d\",\"userId\":%d,\"channel\":\"%s\","
                                        + "\"category\":\"%s\",\"timestamp\":%d}",
                                i, user, channel, category, t);
            }
            sent.add(json);
            if (i >= from) {
                all.add(inbound(json, i));
            }
        }
        return all;
    }

    static final int BEFORE = 400;
    static final int ALL = 800;

    /** The part before the snapshot: segment, config update, then the first half of traffic. */
    static void before(KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, ?> h)
            throws Exception {
        h.processBroadcastElement(SegmentsTest.segment(VIP), 0);
        h.processBroadcastElement(CappingFunctionTest.control(CONFIG_V2), 0);
        feed(h, traffic(0, BEFORE));
    }

    static List<String> decisions(List<Delivery> deliveries) {
        List<String> out = new ArrayList<>();
        for (Delivery d : deliveries) {
            out.add(d.decision() + "/" + d.segment() + "@v" + d.configVersion());
        }
        return out;
    }

    static List<String> audits(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h) {
        List<String> out = new ArrayList<>();
        var side = h.getSideOutput(CappingFunction.AUDIT);
        if (side != null) {
            side.forEach(r -> out.add(new String(r.getValue().json(), StandardCharsets.UTF_8)));
        }
        return out;
    }

    @Test
    void snapshotsOfReleasedVersionsRestoreAndDecideAsIfNeverStopped() throws Exception {
        // The reference: one operator that never stopped, then rebuilt its mirror.
        Written expected = Written.since(straight(Fixture.RELEASED));

        for (String version : FIXTURES) {
            var restored = restored(Fixture.RELEASED, version);
            Fixture.RELEASED.after(restored);

            List<String> got = expected.assertSameAs(restored, version).decisions();
            // What the fixture must exercise, so that the comparison means something.
            assertTrue(got.stream().allMatch(d -> d.endsWith("@v2")), "config v2 restored");
            assertTrue(got.stream().anyMatch(d -> d.startsWith("ALLOWED/vip")), "segment restored");
            assertTrue(
                    expected.audits().stream().anyMatch(a -> a.contains("\"REJECTED\"")),
                    "restored histories reject");
            assertTrue(
                    expected.audits().stream().anyMatch(a -> a.contains("\"DUPLICATE\"")),
                    "restored fingerprints catch duplicates");
            assertTrue(
                    expected.mirrored().stream().anyMatch(w -> !w.deletes() && w.entries() > 0),
                    "rebuild writes logs from restored message ids");
            harnesses.close(restored);
        }
    }

    /**
     * freqcap 0.3 held four messages (users 1 to 4, campaigns promo-1 to promo-4, stamped 22:00 UTC
     * on 1 January 2030 in quiet hours 21:00-08:00, held for 08:00) whose values carry {@code
     * "priority": "high"}, an unknown field then and a field this version refuses (issue 46).
     * Written once by that release's code ({@code capping-held-priority-0.3.snapshot}, processing
     * time 31 December 2029 noon). Restored, three are withdrawn by a different road with one
     * record each, none throws; the fourth goes out at 08:00. (0.3's held lists are not marked in
     * the history, so a message of a preempt rule does not see them: they drain within their hold
     * after the upgrade, and an alert of that window is REJECTED as before preemption existed.)
     */
    @Test
    void heldMessagesOfRelease03WithPriorityHighAreWithdrawnEveryWay() throws Exception {
        String config =
                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                        + "\"max\":1}],\"hold\":\"12h\",\"quietHours\":{\"from\":\"21:00\","
                        + "\"to\":\"08:00\"}}]}";
        long before = java.time.Instant.parse("2029-12-31T12:00:00Z").toEpochMilli();
        long night = java.time.Instant.parse("2030-01-01T22:00:00Z").toEpochMilli();
        long morning = java.time.Instant.parse("2030-01-02T08:00:00Z").toEpochMilli();
        var h =
                harnesses.open(
                        CappingSettings.of(config),
                        fixtureState(fixture("capping-held-priority", "0.3")));
        h.setProcessingTime(before);
        assertEquals(4, h.numProcessingTimeTimers(), "0.3's four held messages wait");
        h.processElement(
                io.freqcap.schema.Records.preference(
                        1L,
                        "{\"userId\":1,\"version\":1,\"optOut\":{\"channels\":[\"push\"]}}",
                        100),
                before);
        h.processBroadcastElement(io.freqcap.schema.Records.forgetUser(2), before);
        h.processBroadcastElement(
                io.freqcap.schema.Records.config(
                        "{\"command\":\"cancel-held\",\"campaignId\":\"promo-3\"}"),
                before);
        h.processBroadcastElement(
                io.freqcap.schema.Records.config(
                        config.replace("\"version\":1", "\"version\":2")
                                .replace("\"hold\"", "\"preempt\":true,\"hold\"")),
                before);
        h.processElement(
                io.freqcap.schema.Records.message("alert", 4, night + 60_000)
                        .campaign("price-alert")
                        .priority(80)
                        .inbound(101),
                before);
        List<String> outcomes = new ArrayList<>();
        for (String a : audits(h)) {
            var json = io.freqcap.schema.common.Json.MAPPER.readTree(a);
            outcomes.add(json.get("messageId").asText() + " " + json.get("decision").asText());
        }
        assertEquals(
                List.of("alert REJECTED", "h-1 CANCELLED", "h-2 FORGOTTEN", "h-3 CANCELLED"),
                outcomes.stream().sorted().toList());
        h.setProcessingTime(morning);
        List<Delivery> out = h.extractOutputValues();
        assertEquals(1, out.size(), "h-4 goes out, once");
        assertTrue(new String(out.get(0).value(), StandardCharsets.UTF_8).contains("h-4"));
        assertEquals(0, h.numProcessingTimeTimers());
    }

    /** Writes the fixtures of this build's state format (run from the operators module). */
    public static void main(String[] args) throws Exception {
        String version = args[0];
        List<Fixture> kinds =
                args.length > 1 && args[1].equals("extended")
                        ? List.of(Fixture.EXTENDED)
                        : List.of(Fixture.RELEASED, Fixture.LONG);
        try (CappingHarnesses harnesses = new CappingHarnesses()) {
            for (Fixture f : kinds) {
                Path file = f.file(version);
                Files.createDirectories(file.getParent());
                var h = harnesses.openWithMirror(f.config, null);
                f.before(h);
                OperatorSnapshotUtil.writeStateHandle(h.snapshot(1, 1), file.toString());
                System.out.println("wrote " + file.toAbsolutePath());
            }
        }
    }
}
