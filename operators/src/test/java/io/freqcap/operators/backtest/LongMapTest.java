package io.freqcap.operators.backtest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LongMapTest {
    @Test
    void holdsWhatAHashMapHoldsForDenseSparseAndNegativeKeys() {
        LongMap<String> map = new LongMap<>(4);
        Map<Long, String> expected = new HashMap<>();
        Random rnd = new Random(4);
        long[] special = {
            0, -1, Long.MIN_VALUE, Long.MAX_VALUE, LongMap.DENSE_KEYS - 1L, LongMap.DENSE_KEYS
        };
        for (int i = 0; i < 200_000; i++) {
            long key;
            switch (rnd.nextInt(4)) {
                case 0:
                    key = rnd.nextInt(100_000); // dense
                    break;
                case 1:
                    key = rnd.nextLong(); // sparse, negative too
                    break;
                case 2:
                    key = special[rnd.nextInt(special.length)];
                    break;
                default:
                    key = (1L << 40) + rnd.nextInt(50_000) * 1024L; // colliding low bits
            }
            String value = "v" + i;
            map.put(key, value);
            expected.put(key, value);
            long probe = rnd.nextBoolean() ? key : rnd.nextLong();
            assertEquals(expected.get(probe), map.get(probe), "key " + probe);
        }
        assertEquals(expected.size(), map.size());
        Map<Long, String> iterated = new HashMap<>();
        map.forEach(iterated::put);
        assertEquals(expected, iterated);
    }
}
