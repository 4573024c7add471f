package io.freqcap.schema.history;

import static io.freqcap.schema.Instants.DAY_1_NOON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.Scope;
import java.io.IOException;
import java.util.HexFormat;
import java.util.Random;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshotSerializationUtil;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class UserHistorySerializerTest {
    static final UserHistorySerializer SERIALIZER = UserHistorySerializer.INSTANCE;

    /** Version 1 bytes of {@link #twoChannelHistory()}. Never change: old checkpoints hold it. */
    static final String V1_TWO_CHANNELS =
            "1a047075736805656d61696c80ecbddbaa33003dd25bb62cde3080bd8314"
                    + "01213fd3b7ed5f6e01003dd25bb62cde30";

    /**
     * Version 2 bytes (entries unpacked: flags without 16) of {@link #scopedHistory()}, as session
     * 6 wrote them. Never change: checkpoints hold it.
     */
    static final String V2_UNPACKED =
            "18000f02047075736805656d61696c02096d61726b6574696e670570726f"
                    + "6d6f0203632d31013780ecbddbaa33003dd25bb62cde30000180c20380bd"
                    + "831401213fd3b7ed5f6e0100b8c30201003dd25bb62cde300102000000046d2d33";

    /** Two channels, a promotion, two campaigns, offsets of Singapore and of Kathmandu (+5:45). */
    static UserHistory scopedHistory() {
        return UserHistory.EMPTY
                .with(
                        new HistoryEntry(
                                DAY_1_NOON,
                                0x5a3dd25bb62cde30L,
                                "push",
                                null,
                                "marketing",
                                "c-1",
                                28_800,
                                0))
                .with(
                        new HistoryEntry(
                                DAY_1_NOON + 42_000_000L,
                                0x17213fd3b7ed5f6eL,
                                "email",
                                null,
                                "promo",
                                null,
                                20_700,
                                0))
                .with(
                        new HistoryEntry(
                                DAY_1_NOON + 42_000_001L,
                                0x3dd25bb62cde30L,
                                "push",
                                "m-3",
                                "promo",
                                "7",
                                0,
                                0));
    }

    /** Liberia's offset until 1972, −0:44:30: not a whole number of quarter hours. */
    static final int MONROVIA_1971 = -2_670;

    static UserHistory twoChannelHistory() {
        return UserHistory.EMPTY
                .with(DAY_1_NOON, 0x5a3dd25bb62cde30L, "push")
                .with(DAY_1_NOON + 42_000_000L, 0x17213fd3b7ed5f6eL, "email")
                .with(DAY_1_NOON + 42_000_001L, 0x5a3dd25bb62cde30L, "push");
    }

    static byte[] write(UserHistory h) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        SERIALIZER.serialize(h, out);
        return out.getCopyOfBuffer();
    }

    static UserHistory read(byte[] bytes) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        UserHistory h = SERIALIZER.deserialize(in);
        assertEquals(0, in.available(), "bytes left after the history");
        return h;
    }

    @Test
    void roundTripsRandomHistories() throws IOException {
        Random rnd = new Random(7);
        String[] channels = {"push", "email", "sms", "in_app"};
        for (int run = 0; run < 2000; run++) {
            UserHistory h = UserHistory.EMPTY;
            int n = rnd.nextInt(20);
            for (int i = 0; i < n; i++) {
                long t =
                        rnd.nextInt(10) == 0
                                ? rnd.nextLong() & Long.MAX_VALUE
                                : DAY_1_NOON + rnd.nextInt(1_000_000_000);
                h = h.with(t, rnd.nextLong(), channels[rnd.nextInt(channels.length)]);
            }
            byte[] bytes = write(h);
            assertEquals(h, read(bytes));
            // Serializing never changes the value: the same bytes twice.
            assertEquals(HexFormat.of().formatHex(bytes), HexFormat.of().formatHex(write(h)));
        }
    }

    @Test
    void roundTripsCategoriesCampaignsAndOffsetsInVersionTwo() throws IOException {
        Random rnd = new Random(11);
        String[] channels = {"push", "email"};
        String[] categories = {"marketing", "promo", "news"};
        String[] campaigns = {null, "spring-sale", "42"};
        int[] offsets = {0, 19_800, -18_000, 37_800, 39_600};
        int withExtras = 0;
        int packed = 0;
        int unpacked = 0;
        int oneOffset = 0;
        for (int run = 0; run < 2000; run++) {
            UserHistory h = UserHistory.EMPTY;
            int n = rnd.nextInt(20);
            for (int i = 0; i < n; i++) {
                h =
                        h.with(
                                new HistoryEntry(
                                        DAY_1_NOON + rnd.nextInt(1_000_000_000),
                                        rnd.nextLong(),
                                        channels[rnd.nextInt(channels.length)],
                                        rnd.nextBoolean() ? "m" + i : null,
                                        categories[rnd.nextInt(run % 2 == 0 ? 1 : 3)],
                                        campaigns[rnd.nextInt(run % 3 == 0 ? 1 : 3)],
                                        run % 7 == 0 && i == 0
                                                ? MONROVIA_1971 // not in quarter hours: unpacked
                                                : offsets[rnd.nextInt(run % 5 == 0 ? 1 : 5)],
                                        0));
            }
            byte[] bytes = write(h);
            if (bytes.length > 2 && bytes[1] == 0) {
                packed += (bytes[2] & 16) != 0 ? 1 : 0;
                oneOffset += (bytes[2] & 32) != 0 ? 1 : 0;
                unpacked += (bytes[2] & 16) == 0 ? 1 : 0;
            }
            UserHistory back = read(bytes);
            assertEquals(h, back);
            for (int i = 0; i < h.size(); i++) {
                assertEquals(h.category(i), back.category(i));
                assertEquals(h.campaign(i), back.campaign(i));
                assertEquals(h.offsetSeconds(i), back.offsetSeconds(i));
                assertEquals(h.messageId(i), back.messageId(i));
            }
            withExtras += h.categoryIndex != null || h.campaignIndex != null ? 1 : 0;
            // Pruning keeps each entry's extras with it.
            if (h.size() > 2) {
                UserHistory pruned = h.prunedBefore(h.timestamp(1));
                assertEquals(pruned, read(write(pruned)));
                assertEquals(h.campaign(h.size() - 1), pruned.campaign(pruned.size() - 1));
            }
        }
        assertTrue(withExtras > 500);
        assertTrue(
                packed > 500 && unpacked > 100 && oneOffset > 50,
                packed + " packed, " + unpacked + " unpacked, " + oneOffset + " with one offset");
    }

    /**
     * Categories and campaigns are kept as tables in order of first use, as the packed format
     * writes them: a history built out of order, or pruned, holds and writes the same as one built
     * in order, and its scope counts read the right entries.
     */
    @Test
    void outOfOrderEntriesAndPruningKeepTheTablesInOrderOfFirstUse() throws IOException {
        long t0 = 1_763_769_600_000L;
        UserHistory inOrder =
                UserHistory.EMPTY
                        .with(new HistoryEntry(t0, 1, "push", null, "promo", "c1", 3600, 0))
                        .with(
                                new HistoryEntry(
                                        t0 + 10, 2, "push", null, "marketing", "c2", 3600, 0))
                        .with(new HistoryEntry(t0 + 20, 3, "email", null, "news", "c1", 3600, 0))
                        .with(new HistoryEntry(t0 + 30, 4, "push", null, "promo", null, 3600, 0));
        UserHistory outOfOrder =
                UserHistory.EMPTY
                        .with(new HistoryEntry(t0 + 30, 4, "push", null, "promo", null, 3600, 0))
                        .with(new HistoryEntry(t0 + 20, 3, "email", null, "news", "c1", 3600, 0))
                        .with(
                                new HistoryEntry(
                                        t0 + 10, 2, "push", null, "marketing", "c2", 3600, 0))
                        .with(new HistoryEntry(t0, 1, "push", null, "promo", "c1", 3600, 0));
        assertEquals(inOrder, outOfOrder);
        UserHistory twoOutOfOrder =
                UserHistory.EMPTY
                        .with(new HistoryEntry(t0 + 30, 4, "push", null, "promo", "c2", 3600, 0))
                        .with(new HistoryEntry(t0 + 20, 3, "email", null, "news", "c1", 3600, 0));
        assertEquals(
                java.util.List.of("news", "promo"), java.util.List.of(twoOutOfOrder.categoryTable));
        assertEquals(java.util.List.of("c1", "c2"), java.util.List.of(twoOutOfOrder.campaignTable));
        assertEquals(twoOutOfOrder, read(write(twoOutOfOrder)));
        assertEquals(
                java.util.List.of("promo", "news"), java.util.List.of(outOfOrder.categoryTable));
        assertEquals(java.util.List.of("c1", "c2"), java.util.List.of(outOfOrder.campaignTable));
        assertEquals(
                HexFormat.of().formatHex(write(inOrder)),
                HexFormat.of().formatHex(write(outOfOrder)));
        assertEquals(2, outOfOrder.count(Scope.campaign("c1"), Long.MIN_VALUE, Long.MAX_VALUE));
        assertEquals(2, outOfOrder.count(Scope.category("promo"), Long.MIN_VALUE, Long.MAX_VALUE));
        assertEquals(
                1, outOfOrder.count(Scope.category("marketing"), Long.MIN_VALUE, Long.MAX_VALUE));
        assertEquals(0, outOfOrder.count(Scope.campaign("c9"), Long.MIN_VALUE, Long.MAX_VALUE));
        assertEquals(t0 + 20, outOfOrder.kthLatest(Scope.campaign("c1"), 1));

        // Pruning the first entry leaves c1 first used after c2, and promo after news.
        UserHistory pruned = outOfOrder.prunedBefore(t0);
        assertEquals(java.util.List.of("c2", "c1"), java.util.List.of(pruned.campaignTable));
        assertEquals(java.util.List.of("news", "promo"), java.util.List.of(pruned.categoryTable));
        assertEquals(pruned, read(write(pruned)));
        assertEquals(1, pruned.count(Scope.campaign("c1"), Long.MIN_VALUE, Long.MAX_VALUE));
        UserHistory noCampaign = pruned.prunedBefore(t0 + 20);
        assertEquals(null, noCampaign.campaignIndex);
        assertEquals("promo", noCampaign.category(0));
    }

    /** Tables the packed format never writes (a repeated or unused value) are read all the same. */
    @Test
    void packedTablesOutOfOrderOrRepeatedAreReadAsTheirEntriesSay() {
        long t0 = 1_763_769_600_000L;
        UserHistory h =
                new UserHistory(
                        ColumnEdits.canonical(
                                new HistoryColumns.Parts(
                                                new long[] {t0, t0 + 1, t0 + 2},
                                                new long[] {1, 2, 3},
                                                new int[] {0, 0, 0},
                                                new String[] {"push"})
                                        .categories(
                                                new Tabled(
                                                        new String[] {"promo", "promo"},
                                                        new int[] {2, 1, 0}))
                                        .campaigns(
                                                new Tabled(
                                                        new String[] {"c2", "c1", "unused"},
                                                        new int[] {2, 0, 1}))
                                        .columns()));
        assertEquals(2, h.count(Scope.category("promo"), Long.MIN_VALUE, Long.MAX_VALUE));
        assertEquals(java.util.List.of("promo"), java.util.List.of(h.categoryTable));
        assertEquals(java.util.List.of("c1", "c2"), java.util.List.of(h.campaignTable));
        assertEquals("c1", h.campaign(0));
        assertEquals("c2", h.campaign(2));
    }

    /**
     * Held entries (format 3) keep how long after their stamped timestamp they count, packed or
     * not, with or without the other extras; pruning and removal keep it with the right entries.
     */
    @Test
    void heldEntriesRoundTripWithTheirStampedTimestamps() throws IOException {
        Random rnd = new Random(23);
        String[] zones = {"UTC", "Asia/Kathmandu", "Europe/Berlin"};
        for (int run = 0; run < 1000; run++) {
            UserHistory h = UserHistory.EMPTY;
            long latestStamped = Long.MIN_VALUE;
            int n = 1 + rnd.nextInt(12);
            for (int i = 0; i < n; i++) {
                long stamped = DAY_1_NOON + rnd.nextInt(1_000_000_000);
                long held = rnd.nextBoolean() ? 0 : rnd.nextInt(700_000_000);
                int offset = rnd.nextInt(3) == 0 ? 0 : (rnd.nextBoolean() ? 20_700 : 3_600);
                h =
                        h.with(
                                new HistoryEntry(
                                        stamped + held,
                                        rnd.nextLong(),
                                        rnd.nextBoolean() ? "push" : "sms",
                                        rnd.nextBoolean() ? "m-" + i : null,
                                        rnd.nextBoolean() ? "marketing" : "promo",
                                        rnd.nextBoolean() ? null : "c" + rnd.nextInt(3),
                                        offset,
                                        held));
                latestStamped = Math.max(latestStamped, stamped);
            }
            assertEquals(latestStamped, h.latestStamped(), zones[run % 3]);
            UserHistory back = read(write(h));
            assertEquals(h, back);
            assertEquals(latestStamped, back.latestStamped());
            for (int i = 0; i < h.size(); i++) {
                assertEquals(h.heldFor(i), back.heldFor(i));
            }
            int gone = rnd.nextInt(h.size());
            UserHistory less = h.without(h.timestamp(gone), h.fingerprint(gone));
            assertEquals(h.size() - 1, less.size());
            assertEquals(less, read(write(less)));
        }
    }

    @Test
    void aMessageHeldAWeekDoesNotMoveTheLatestStampedTimestamp() {
        long week = 7 * 86_400_000L;
        UserHistory h =
                UserHistory.EMPTY
                        .with(HistoryEntry.plain(DAY_1_NOON, 1, "push", null))
                        .with(
                                new HistoryEntry(
                                        DAY_1_NOON + 60_000 + week,
                                        2,
                                        "push",
                                        null,
                                        "marketing",
                                        null,
                                        0,
                                        week));
        assertEquals(DAY_1_NOON + 60_000 + week, h.latest());
        assertEquals(DAY_1_NOON + 60_000, h.latestStamped());
        assertEquals(DAY_1_NOON, h.without(h.latest(), 2).latestStamped());
        assertEquals(h, h.without(h.latest(), 3), "another fingerprint: nothing removed");
    }

    @Test
    void aHistoryWithoutExtrasIsWrittenAsVersionOne() throws IOException {
        UserHistory plain = twoChannelHistory();
        UserHistory sameWithDefaults =
                UserHistory.EMPTY
                        .with(HistoryEntry.plain(DAY_1_NOON, 0x5a3dd25bb62cde30L, "push", null))
                        .with(
                                HistoryEntry.plain(
                                        DAY_1_NOON + 42_000_000L,
                                        0x17213fd3b7ed5f6eL,
                                        "email",
                                        null))
                        .with(
                                HistoryEntry.plain(
                                        DAY_1_NOON + 42_000_001L,
                                        0x5a3dd25bb62cde30L,
                                        "push",
                                        null));
        assertEquals(plain, sameWithDefaults);
        assertEquals(V1_TWO_CHANNELS, HexFormat.of().formatHex(write(sameWithDefaults)));
        UserHistory promo =
                plain.with(
                        new HistoryEntry(
                                DAY_1_NOON + 50_000_000L, 9, "push", null, "promo", null, 0, 0));
        assertEquals(0, write(promo)[1], "version 2: the channel count's place holds 0");
    }

    @Test
    void readsVersionTwoUnpackedBytes() throws IOException {
        UserHistory h = read(HexFormat.of().parseHex(V2_UNPACKED));
        assertEquals(scopedHistory(), h);
        assertEquals("c-1", h.campaign(0));
        assertEquals("promo", h.category(1));
        assertEquals(20_700, h.offsetSeconds(1));
        assertEquals("m-3", h.messageId(2));
    }

    @Test
    void readsVersionOneBytes() throws IOException {
        assertEquals(twoChannelHistory(), read(HexFormat.of().parseHex(V1_TWO_CHANNELS)));
        assertEquals(V1_TWO_CHANNELS, HexFormat.of().formatHex(write(twoChannelHistory())));
    }

    @Test
    void aTypicalUserFitsInAFewBytesPerMessage() throws IOException {
        UserHistory h = UserHistory.EMPTY;
        for (int i = 0; i < 5; i++) {
            h = h.with(DAY_1_NOON + i * 150_000_000L, Fingerprints.of("m-" + i), "push");
        }
        // header, "push", first timestamp, four deltas, five fingerprints
        assertEquals(1 + 5 + 6 + 4 * 4 + 5 * 7, write(h).length);
    }

    @Test
    void aUserInOneZoneWithCategoriesAndCampaignsPaysAByteAMessageForThem() throws IOException {
        UserHistory plain = UserHistory.EMPTY;
        UserHistory scoped = UserHistory.EMPTY;
        for (int i = 0; i < 5; i++) {
            long t = DAY_1_NOON + i * 150_000_000L;
            long fp = Fingerprints.of("m-" + i);
            plain = plain.with(t, fp, "push");
            scoped =
                    scoped.with(
                            new HistoryEntry(
                                    t,
                                    fp,
                                    "push",
                                    null,
                                    i == 2 ? "promo" : "marketing",
                                    "c" + i,
                                    28_800,
                                    0));
        }
        // marker, flags and channel count in the header; the category table without the default
        // ("promo"); the campaign table (5 x "cN"); Singapore's offset once; then one byte of
        // indexes per entry
        int tables = (1 + 6) + (1 + 5 * 3) + 1;
        byte[] bytes = write(scoped);
        assertEquals(write(plain).length + 3 + tables + 5, bytes.length);
        assertEquals(scoped, read(bytes));
        assertEquals(28_800, read(bytes).offsetSeconds(4));
        assertEquals("marketing", read(bytes).category(4));
    }

    @Test
    void manyChannelsAndTheEmptyHistoryRoundTrip() throws IOException {
        assertEquals("00", HexFormat.of().formatHex(write(UserHistory.EMPTY)));
        assertEquals(UserHistory.EMPTY, read(write(UserHistory.EMPTY)));
        UserHistory h = UserHistory.EMPTY;
        for (int c = 0; c < 9; c++) {
            h = h.with(DAY_1_NOON + c, c, "ch" + c);
        }
        assertEquals(h, read(write(h)));
    }

    @Test
    void messageIdsKeptForTheMirrorRoundTripAndSurvivePruning() throws IOException {
        // An entry counted before the mirror was turned on has no id; later ones do.
        UserHistory h =
                UserHistory.EMPTY
                        .with(DAY_1_NOON, 1, "push")
                        .with(DAY_1_NOON + 2, 2, "email", "m-2")
                        .with(DAY_1_NOON + 1, 3, "push", "m-\u00e9-1");
        assertEquals(null, h.messageId(0));
        assertEquals("m-\u00e9-1", h.messageId(1));
        assertEquals("m-2", h.messageId(2));
        assertEquals(h, read(write(h)));
        UserHistory pruned = h.prunedBefore(DAY_1_NOON);
        assertEquals(2, pruned.size());
        assertEquals("m-2", pruned.messageId(1));
        assertEquals(pruned, read(write(pruned)));
        // Ids make a history differ from the same entries without them.
        assertTrue(
                !h.equals(
                        UserHistory.EMPTY
                                .with(DAY_1_NOON, 1, "push")
                                .with(DAY_1_NOON + 2, 2, "email")
                                .with(DAY_1_NOON + 1, 3, "push")));
    }

    @Test
    void corruptBytesFailWithAClearError() {
        byte[] bad = HexFormat.of().parseHex("1a047075736805656d61696c80ecbddbaa330900");
        IOException e = assertThrows(IOException.class, () -> read(bad));
        assertTrue(e.getMessage().contains("channel index"), e.getMessage());
    }

    @Test
    void snapshotRestoresACompatibleSerializer() throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        TypeSerializerSnapshotSerializationUtil.writeSerializerSnapshot(
                out, SERIALIZER.snapshotConfiguration());
        TypeSerializerSnapshot<UserHistory> restored =
                TypeSerializerSnapshotSerializationUtil.readSerializerSnapshot(
                        new DataInputDeserializer(out.getCopyOfBuffer()),
                        getClass().getClassLoader());
        TypeSerializerSchemaCompatibility<UserHistory> compat =
                SERIALIZER.snapshotConfiguration().resolveSchemaCompatibility(restored);
        assertTrue(compat.isCompatibleAsIs());
        assertEquals(twoChannelHistory(), restored.restoreSerializer().copy(twoChannelHistory()));
    }
}
