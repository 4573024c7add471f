package io.freqcap.schema.history;

import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.history.UserHistorySerializerTest.MONROVIA_1971;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.message.InboundMessageSerializer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshotSerializationUtil;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class StoredHistorySerializerTest {
    static final StoredHistorySerializer SERIALIZER = StoredHistorySerializer.INSTANCE;

    static byte[] write(StoredHistory h) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        SERIALIZER.serialize(h, out);
        return out.getCopyOfBuffer();
    }

    /** Histories of every shape the format has: version 1, ids, packed, unpacked, many channels. */
    static List<UserHistory> histories() {
        List<UserHistory> all = new ArrayList<>();
        all.add(UserHistorySerializerTest.twoChannelHistory());
        all.add(UserHistorySerializerTest.scopedHistory());
        all.add(
                UserHistory.EMPTY.with(
                        new HistoryEntry(
                                DAY_1_NOON,
                                7L,
                                "push",
                                "m-1",
                                "marketing",
                                null,
                                MONROVIA_1971,
                                0)));
        Random rnd = new Random(5);
        String[] channels = {"push", "email", "sms", "in_app", "a", "b", "c", "d"};
        String[] categories = {"marketing", "promo"};
        String[] campaigns = {null, "spring-sale"};
        int[] offsets = {0, 28_800, -18_000, 20_700};
        for (int run = 0; run < 300; run++) {
            UserHistory h = UserHistory.EMPTY;
            for (int i = rnd.nextInt(12); i > 0; i--) {
                h =
                        h.with(
                                new HistoryEntry(
                                        DAY_1_NOON + rnd.nextInt(1_000_000_000),
                                        rnd.nextLong(),
                                        channels[rnd.nextInt(1 + run % channels.length)],
                                        run % 3 == 0 ? "m-" + i : null,
                                        categories[rnd.nextInt(run % 2 + 1)],
                                        campaigns[rnd.nextInt(run % 5 == 0 ? 2 : 1)],
                                        offsets[rnd.nextInt(run % 4 + 1)],
                                        0));
            }
            all.add(h);
        }
        return all;
    }

    @Test
    void anEncodedHistoryIsWrittenAsTheBytesItHoldsAndReadBackDecoded() throws IOException {
        for (UserHistory h : histories()) {
            byte[] bytes = UserHistorySerializerTest.write(h);
            byte[] padded = new byte[bytes.length + 6];
            System.arraycopy(bytes, 0, padded, 3, bytes.length);
            EncodedHistory encoded = EncodedHistory.copyOf(padded, 3, bytes.length);

            assertArrayEquals(bytes, write(encoded), h.toString());
            assertArrayEquals(bytes, write(h), h.toString());
            assertEquals(h, encoded.decoded());
            StoredHistory read = SERIALIZER.deserialize(new DataInputDeserializer(write(encoded)));
            assertEquals(h, StoredHistorySerializer.decoded(read));
            // State always reads decoded: what the operator's scans and cache misses rely on.
            assertTrue(read instanceof UserHistory);
        }
    }

    @Test
    void anEncodedHistoryKeepsItsOwnCopyOfTheBytes() throws IOException {
        UserHistory h = UserHistorySerializerTest.scopedHistory();
        byte[] buffer = UserHistorySerializerTest.write(h);
        EncodedHistory encoded = EncodedHistory.copyOf(buffer, 0, buffer.length);
        Arrays.fill(buffer, (byte) 0); // the cache reuses its slots
        assertEquals(h, encoded.decoded());
        assertEquals(EncodedHistory.copyOf(write(h), 0, buffer.length), encoded);
        assertNotEquals(EncodedHistory.copyOf(write(UserHistory.EMPTY), 0, 1), encoded);
    }

    @Test
    void aCorruptEncodedHistoryFailsWhenDecoded() throws IOException {
        byte[] bytes = UserHistorySerializerTest.write(UserHistorySerializerTest.scopedHistory());
        EncodedHistory cut = EncodedHistory.copyOf(bytes, 0, bytes.length - 3);
        assertThrows(UncheckedIOException.class, cut::decoded);
        byte[] longer = Arrays.copyOf(bytes, bytes.length + 1);
        UncheckedIOException e =
                assertThrows(
                        UncheckedIOException.class,
                        () -> EncodedHistory.copyOf(longer, 0, longer.length).decoded());
        assertTrue(e.getCause().getMessage().contains("after a history"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> EncodedHistory.copyOf(bytes, 0, 0));
    }

    @Test
    void aDecodedHistoryIsItsOwnDecodedForm() {
        UserHistory h = UserHistorySerializerTest.twoChannelHistory();
        assertSame(h, StoredHistorySerializer.decoded(h));
        assertNull(StoredHistorySerializer.decoded(null));
    }

    static TypeSerializerSnapshot<StoredHistory> restored(TypeSerializerSnapshot<?> written)
            throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        TypeSerializerSnapshotSerializationUtil.writeSerializerSnapshot(out, written);
        return TypeSerializerSnapshotSerializationUtil.readSerializerSnapshot(
                new DataInputDeserializer(out.getCopyOfBuffer()),
                StoredHistorySerializerTest.class.getClassLoader());
    }

    @Test
    void restoresStateWrittenByItselfOrByTheUserHistorySerializerAsItIs() throws IOException {
        // freqcap 0.1 and 0.2 named UserHistorySerializer for history-v1: same bytes, no migration.
        var fromOld = restored(UserHistorySerializer.INSTANCE.snapshotConfiguration());
        assertTrue(
                SERIALIZER
                        .snapshotConfiguration()
                        .resolveSchemaCompatibility(fromOld)
                        .isCompatibleAsIs());
        var fromItself = restored(SERIALIZER.snapshotConfiguration());
        assertTrue(
                SERIALIZER
                        .snapshotConfiguration()
                        .resolveSchemaCompatibility(fromItself)
                        .isCompatibleAsIs());
        UserHistory h = UserHistorySerializerTest.scopedHistory();
        assertEquals(h, fromItself.restoreSerializer().copy(h));
    }

    @Test
    void stateOfAnotherTypeIsIncompatible() throws IOException {
        var other = restored(InboundMessageSerializer.INSTANCE.snapshotConfiguration());
        assertFalse(
                SERIALIZER
                        .snapshotConfiguration()
                        .resolveSchemaCompatibility(other)
                        .isCompatibleAsIs());
    }
}
