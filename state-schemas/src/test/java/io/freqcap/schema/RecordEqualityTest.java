package io.freqcap.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Records holding bytes compare the bytes, not the arrays. */
class RecordEqualityTest {
    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Two records made from equal but distinct arrays are equal; other bytes are not. */
    static <T> void equalByContent(Function<String, T> make) {
        T one = make.apply("x");
        T same = make.apply("x");
        T other = make.apply("y");
        assertEquals(one, same);
        assertEquals(one.hashCode(), same.hashCode());
        assertNotEquals(one, other);
    }

    @Test
    void recordsWithBytesCompareTheirContent() {
        equalByContent(s -> new RawRecord(b("k"), b(s), "in", 1, 2));
        equalByContent(s -> AuditEvent.audit(b("42"), b(s)));
        equalByContent(s -> new Delivery(b("42"), b(s), "ALLOWED", "*", 7, null, null));
        equalByContent(s -> new ControlRecord(ControlRecord.Kind.CONFIG, b(s), "c", 0, 3));
        equalByContent(
                s ->
                        InboundMessage.of(
                                new RawRecord(
                                        null,
                                        b(
                                                "{\"messageId\":\""
                                                        + s
                                                        + "\",\"userId\":1,\"channel\":\"push\","
                                                        + "\"timestamp\":5}"),
                                        "in",
                                        0,
                                        9)));
    }

    @Test
    void toStringsStayShortForLargeValues() {
        byte[] big = new byte[5_000_000];
        for (Object r :
                List.of(
                        new RawRecord(null, big, "in", 0, 1),
                        AuditEvent.audit(null, big),
                        new Delivery(null, big, "ALLOWED", "*", 1, null, null),
                        new ControlRecord(ControlRecord.Kind.SEGMENT, big, "s", 0, 1))) {
            assertTrue(r.toString().length() < 400, r.getClass().getSimpleName());
        }
    }

    /** Scopes write their equality out (for speed): it must still be the record's. */
    @Test
    void scopesAreEqualByKindAndName() {
        assertEquals(Scope.category("promo"), Scope.category(new String("promo")));
        assertEquals(
                Scope.category("promo").hashCode(), Scope.category(new String("promo")).hashCode());
        assertNotEquals(Scope.category("promo"), Scope.category("news"));
        assertNotEquals(Scope.category("push"), Scope.channel("push"));
        assertNotEquals(Scope.campaign("c1"), Scope.campaign("c2"));
        assertNotEquals(Scope.ALL, Scope.campaign("c1"));
        assertNotEquals(Scope.campaign("c1"), Scope.ALL);
        assertEquals(Scope.ALL, new Scope(Scope.Kind.ALL, null));
    }
}
