package io.freqcap.operators.capping.history;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.Scope;
import io.freqcap.schema.history.Fingerprints;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.history.UserHistory;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A long history answers as the short one with the same entries would, and stores what it holds.
 */
class LongHistoryTest {
    private static final String[] CHANNELS = {"push", "email", "sms"};

    @Test
    void answersAsTheShortHistoryWithTheSameEntries() {
        Random random = new Random(13);
        for (int round = 0; round < 40; round++) {
            UserHistory shortOne = UserHistory.EMPTY;
            LongHistory longOne = new LongHistory(1 + random.nextInt(50));
            Map<Long, UserHistory> stored = new HashMap<>();
            java.util.List<Long> added = new java.util.ArrayList<>();
            long clock = random.nextInt(100);
            for (int step = 0; step < 300; step++) {
                int op = random.nextInt(10);
                if (op < 7) {
                    // Mostly in time order, sometimes earlier, sometimes equal.
                    long t = op < 5 ? (clock += random.nextInt(4)) : clock - random.nextInt(40);
                    t = Math.max(0, t);
                    String id = "m" + round + "-" + step;
                    long fp = Fingerprints.of(id);
                    String channel = CHANNELS[random.nextInt(CHANNELS.length)];
                    String kept = random.nextInt(3) == 0 ? null : id;
                    String category = random.nextInt(3) == 0 ? "promo" : "marketing";
                    String campaign = random.nextInt(3) == 0 ? null : "c" + random.nextInt(3);
                    int offset = random.nextInt(4) == 0 ? 19_800 : 0;
                    long held = random.nextInt(4) == 0 ? random.nextInt(20) : 0;
                    HistoryEntry entry =
                            new HistoryEntry(
                                    t, fp, channel, kept, category, campaign, offset, held);
                    shortOne = shortOne.with(entry);
                    longOne.add(entry);
                    added.add(fp);
                    if (random.nextInt(6) == 0) {
                        // A held message that stops counting: any entry, removed from both.
                        int i = random.nextInt(shortOne.size());
                        long at = shortOne.timestamp(i);
                        long gone = shortOne.fingerprint(i);
                        shortOne = shortOne.without(at, gone);
                        assertTrue(longOne.remove(at, gone));
                        assertFalse(longOne.remove(at, Fingerprints.of("never")));
                    }
                } else if (op < 8) {
                    long cutoff = clock - 30 - random.nextInt(30);
                    shortOne = shortOne.prunedBefore(cutoff);
                    longOne.pruneThrough(cutoff);
                } else if (op < 9) {
                    longOne.takeChanged()
                            .forEach(
                                    (b, h) -> {
                                        if (h.isEmpty()) {
                                            stored.remove(b);
                                        } else {
                                            stored.put(b, h);
                                        }
                                    });
                    LongHistory loaded = LongHistory.load(longOne.bucketMillis(), stored);
                    assertEquals(
                            shortOne, loaded.toUserHistory(), "stored buckets, round " + round);
                }
                assertSameAnswers(shortOne, longOne, random);
                for (int k = 0; k < 5 && !added.isEmpty(); k++) {
                    long fp = added.get(random.nextInt(added.size()));
                    assertEquals(shortOne.containsFingerprint(fp), longOne.containsFingerprint(fp));
                }
            }
            assertEquals(shortOne, longOne.toUserHistory());
            Map<Long, UserHistory> all = longOne.buckets();
            assertEquals(shortOne, LongHistory.load(longOne.bucketMillis(), all).toUserHistory());
        }
    }

    private static void assertSameAnswers(UserHistory s, LongHistory l, Random random) {
        assertEquals(s.size(), l.size());
        assertEquals(s.isEmpty(), l.isEmpty());
        if (s.isEmpty()) {
            return;
        }
        assertEquals(s.latest(), l.latest());
        assertEquals(s.latestStamped(), l.latestStamped());
        for (int i = 0; i < s.size(); i++) {
            assertTrue(l.containsFingerprint(s.fingerprint(i)));
        }
        assertFalse(l.containsFingerprint(Fingerprints.of("never-" + random.nextLong())));
        // what a receipt and a user's opt-out read (contract.md §10, §11)
        int pick = random.nextInt(s.size());
        assertEquals(
                s.withFingerprint(s.fingerprint(pick)), l.withFingerprint(s.fingerprint(pick)));
        long now = s.latest() - random.nextInt(30);
        java.util.Set<HistoryEntry> shortWaiting = new java.util.HashSet<>();
        java.util.Set<HistoryEntry> longWaiting = new java.util.HashSet<>();
        s.forEachHeldWaitingEntry(now, shortWaiting::add);
        l.forEachHeldWaitingEntry(now, longWaiting::add);
        assertEquals(shortWaiting, longWaiting, "held entries waiting at " + now);
        for (Scope channel :
                new Scope[] {
                    Scope.ALL,
                    Scope.channel("push"),
                    Scope.channel("email"),
                    Scope.channel("sms"),
                    Scope.channel("other"),
                    Scope.category("promo"),
                    Scope.category("marketing"),
                    Scope.category("news"),
                    Scope.campaign("c0"),
                    Scope.campaign("c2"),
                    Scope.campaign("c9")
                }) {
            long after = s.latest() - random.nextInt(60);
            long upTo = after + random.nextInt(60);
            assertEquals(
                    s.count(channel, after, upTo),
                    l.count(channel, after, upTo),
                    "count " + channel);
            assertArrayEquals(s.timestampsAfter(channel, after), l.timestampsAfter(channel, after));
            int inScope = s.count(channel, Long.MIN_VALUE, Long.MAX_VALUE);
            if (inScope > 0) {
                int k = 1 + random.nextInt(inScope);
                assertEquals(s.kthLatest(channel, k), l.kthLatest(channel, k));
            }
        }
    }

    @Test
    void fingerprintMultisetForgetsOnlyWhatWasRemoved() {
        FingerprintCounts f = new FingerprintCounts();
        Random random = new Random(5);
        Map<Long, Integer> model = new HashMap<>();
        for (int i = 0; i < 20_000; i++) {
            long key = random.nextInt(3000);
            if (random.nextBoolean()) {
                f.add(key);
                model.merge(key, 1, Integer::sum);
            } else {
                f.remove(key);
                model.computeIfPresent(key, (k, v) -> v == 1 ? null : v - 1);
            }
            long probe = random.nextInt(3000);
            assertEquals(model.containsKey(probe), f.contains(probe), "key " + probe);
        }
        assertEquals(model.size(), f.size());
    }

    @Test
    void itsBytesFollowTheStringsItsEntriesBring() {
        LongHistory plain = new LongHistory(600_000);
        LongHistory campaigns = new LongHistory(600_000);
        for (int i = 0; i < 1000; i++) {
            plain.add(HistoryEntry.plain(i, i, "push", null));
            campaigns.add(
                    new HistoryEntry(
                            i, i, "push", "m" + i, "marketing", "c".repeat(120) + i, 0, 0));
        }
        assertEquals(1000 * EntryBytes.PER_ENTRY, plain.bytes());
        assertTrue(
                campaigns.bytes() > 4 * plain.bytes(),
                "a new 128-character campaign per message: " + campaigns.bytes());
        campaigns.pruneThrough(499);
        assertEquals(500, campaigns.size());
        long half = campaigns.bytes();
        campaigns.pruneThrough(999);
        assertEquals(
                0, campaigns.bytes(), "what pruning drops leaves the budget (was " + half + ")");
    }
}
