package io.freqcap.operators.segments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.Records;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentUpdate;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Segment resolution and versioned updates (contract.md §4), in plain Java. */
class SegmentTableTest {
    static final long MEMBER = 42;

    final SegmentTable table = new SegmentTable();

    @AfterEach
    void close() {
        table.close();
    }

    static LimitConfig config(long version, String... segmentsWithRules) throws Exception {
        StringBuilder rules = new StringBuilder();
        for (String s : segmentsWithRules) {
            rules.append("{\"segment\":\"")
                    .append(s)
                    .append("\",\"limits\":[{\"window\":\"1d\",\"max\":5}]},");
        }
        return LimitConfig.parse(
                "{\"version\":"
                        + version
                        + ",\"rules\":["
                        + rules
                        + "{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}]}]}");
    }

    static SegmentUpdate update(String json) throws Exception {
        return SegmentUpdate.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    static SegmentUpdate load(String id, long version, int priority, long... members)
            throws Exception {
        return update(Records.segmentLoad(id, version, priority, members));
    }

    @Test
    void aConfigThatAddsOrDropsARuleChangesTheRuleAMemberGets() throws Exception {
        assertNull(table.apply(load("vip", 1, 10, MEMBER), FlinkFileLoader.INSTANCE));
        LimitConfig without = config(1);
        LimitConfig with = config(2, "vip");
        LimitConfig dropped = config(3);
        assertEquals("*", table.resolve(MEMBER, without), "no rule for vip yet");
        assertEquals("vip", table.resolve(MEMBER, with), "the new rule applies at once");
        assertEquals("*", table.resolve(MEMBER, dropped), "and stops when it is dropped");
        assertEquals("vip", table.resolve(MEMBER, with));
    }

    @Test
    void shadowRulesResolveOverTheirOwnSegments() throws Exception {
        assertNull(table.apply(load("vip", 1, 10, MEMBER), FlinkFileLoader.INSTANCE));
        LimitConfig cfg =
                LimitConfig.parse(
                        "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                + "[{\"window\":\"1d\",\"max\":1}]}],\"shadow\":{\"rules\":["
                                + "{\"segment\":\"vip\",\"limits\":[{\"window\":\"1d\",\"max\":3}]},"
                                + "{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":2}]}]}}");
        assertEquals("*", table.resolve(MEMBER, cfg), "the rules have no vip rule");
        assertEquals("vip", table.resolveShadow(MEMBER, cfg), "the shadow rules have one");
        assertEquals("*", table.resolveShadow(7, cfg), "not a member");
    }

    @Test
    void theHighestPriorityWithARuleWinsTiesToTheSmallerId() throws Exception {
        table.apply(load("b", 1, 10, MEMBER), FlinkFileLoader.INSTANCE);
        table.apply(load("a", 1, 10, MEMBER), FlinkFileLoader.INSTANCE);
        table.apply(load("top", 1, 20, MEMBER), FlinkFileLoader.INSTANCE);
        assertEquals("a", table.resolve(MEMBER, config(1, "a", "b")));
        assertEquals("b", table.resolve(MEMBER, config(1, "b")));
        assertEquals("top", table.resolve(MEMBER, config(1, "a", "b", "top")));
        assertEquals("*", table.resolve(7, config(1, "a", "b", "top")), "not a member");
    }

    @Test
    void aDeletedSegmentStaysDeleted() throws Exception {
        LimitConfig cfg = config(1, "vip");
        assertNull(table.apply(load("vip", 1, 10, MEMBER), FlinkFileLoader.INSTANCE));
        assertNull(
                table.apply(
                        update("{\"segmentId\":\"vip\",\"version\":3,\"op\":\"delete\"}"),
                        FlinkFileLoader.INSTANCE));
        assertEquals("*", table.resolve(MEMBER, cfg));
        // a delayed older full load must not bring it back
        String stale = table.apply(load("vip", 2, 10, MEMBER), FlinkFileLoader.INSTANCE);
        assertTrue(stale != null && stale.startsWith("stale version"), stale);
        assertEquals("*", table.resolve(MEMBER, cfg));
        // edits of a deleted segment are refused (and so audited)
        assertEquals(
                "unknown segment \"vip\"",
                table.apply(
                        update(
                                "{\"segmentId\":\"vip\",\"version\":4,\"op\":\"add\","
                                        + "\"userIds\":[42]}"),
                        FlinkFileLoader.INSTANCE));
        assertEquals(
                "unknown segment \"vip\"",
                table.apply(
                        update(
                                "{\"segmentId\":\"vip\",\"version\":5,\"op\":\"remove\","
                                        + "\"userIds\":[42]}"),
                        FlinkFileLoader.INSTANCE));
        assertEquals("*", table.resolve(MEMBER, cfg));
        // a newer full load does
        assertNull(table.apply(load("vip", 6, 10, MEMBER), FlinkFileLoader.INSTANCE));
        assertEquals("vip", table.resolve(MEMBER, cfg));
    }

    @Test
    void descriptorsRestoreTheSameTable() throws Exception {
        table.apply(load("vip", 1, 10, MEMBER, 7), FlinkFileLoader.INSTANCE);
        table.apply(
                update("{\"segmentId\":\"vip\",\"version\":2,\"op\":\"add\",\"userIds\":[8]}"),
                FlinkFileLoader.INSTANCE);
        table.apply(
                update("{\"segmentId\":\"vip\",\"version\":3,\"op\":\"remove\",\"userIds\":[7]}"),
                FlinkFileLoader.INSTANCE);
        table.apply(load("gone", 1, 20, MEMBER), FlinkFileLoader.INSTANCE);
        table.apply(
                update("{\"segmentId\":\"gone\",\"version\":2,\"op\":\"delete\"}"),
                FlinkFileLoader.INSTANCE);
        java.util.List<String> problems = new java.util.ArrayList<>();
        SegmentTable restored =
                SegmentTable.restore(table.descriptors(), FlinkFileLoader.INSTANCE, problems);
        try {
            assertEquals(java.util.List.of(), problems);
            assertEquals(table.descriptors(), restored.descriptors());
            LimitConfig cfg = config(1, "vip", "gone");
            for (long user : new long[] {MEMBER, 7, 8, 9}) {
                assertEquals(table.resolve(user, cfg), restored.resolve(user, cfg), "user " + user);
            }
            assertEquals("vip", restored.resolve(8, cfg), "added");
            assertEquals("*", restored.resolve(7, cfg), "removed");
            // the tombstone keeps its version: an older load stays stale
            assertTrue(
                    restored.apply(load("gone", 1, 20, MEMBER), FlinkFileLoader.INSTANCE)
                            .startsWith("stale version"));
        } finally {
            restored.close();
        }
    }
}
