package io.freqcap.operators.capping;

import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.freqcap.schema.Records;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A user poisoned before {@code --max-future} existed: a snapshot written by freqcap 0.2 (commit
 * 54d89f3) holds user 77 with one message stamped in microseconds (year ~57,000), which makes every
 * later message of 77 STALE. It restores, and after {@code forget-user} 77 is decided as a new user
 * while everyone else keeps their history.
 *
 * <p>The fixture was written once with 0.2's code by {@link #main} ({@code mvn -q -pl operators
 * exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.freqcap.operators.capping.PoisonedUserSnapshotTest}) and is never rewritten.
 */
public class PoisonedUserSnapshotTest {
    static final long POISON = DAY_1_NOON * 1000; // microseconds taken for milliseconds
    static final String ONE_AN_HOUR = version(1).rule(rule("*", window("1h", 1))).json();
    static final Path FIXTURE =
            Path.of("src/test/resources/state-compat/capping-poisoned-0.2.snapshot");

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    static InboundMessage message(String id, long user, long t) {
        return Records.message(id, user, t).inbound(0);
    }

    static void send(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ?, ?> h, InboundMessage m)
            throws Exception {
        h.processElement(m, m.message().timestamp());
    }

    @Test
    void aPoisonedUserRestoresAndAfterForgetUserIsDecidedAsANewUser() throws Exception {
        var h =
                harnesses.open(
                        CappingSettings.of(ONE_AN_HOUR).withMirror(true),
                        OperatorSnapshotUtil.readStateHandle(FIXTURE.toString()),
                        1,
                        0);
        send(h, message("b77", 77, DAY_1_NOON + 2000));
        assertEquals(List.of("STALE"), CappingFixtures.auditDecisions(h), "poisoned");

        h.processBroadcastElement(
                CappingFunctionTest.control("{\"command\": \"forget-user\", \"userId\": 77}"), 0);
        send(h, message("c77", 77, DAY_1_NOON + 3000));
        send(h, message("d77", 77, DAY_1_NOON + 4000)); // within the hour of c77
        send(h, message("b5", 5, DAY_1_NOON + 60_000)); // 5 keeps its history
        send(h, message("b6", 6, DAY_1_NOON + 3_600_000)); // an hour on: allowed
        assertEquals(
                List.of("ALLOWED", "ALLOWED"),
                h.extractOutputValues().stream().map(Delivery::decision).toList());
        assertEquals(List.of("STALE", "REJECTED", "REJECTED"), CappingFixtures.auditDecisions(h));
    }

    public static void main(String[] args) throws Exception {
        try (CappingHarnesses harnesses = new CappingHarnesses()) {
            var h = harnesses.open(CappingSettings.of(ONE_AN_HOUR).withMirror(true), null, 1, 0);
            for (long user = 1; user <= 10; user++) {
                send(h, message("a" + user, user, DAY_1_NOON));
            }
            send(h, message("poison", 77, POISON));
            Files.createDirectories(FIXTURE.getParent());
            OperatorSnapshotUtil.writeStateHandle(h.snapshot(1, 1), FIXTURE.toString());
        }
        System.out.println("wrote " + FIXTURE.toAbsolutePath());
    }
}
