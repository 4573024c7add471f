package io.freqcap.operators.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.freqcap.operators.control.ControlHandler.Outcome;
import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.LimitConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Control handling in plain Java: what each control record does, and what it asks to audit. */
class ControlHandlerTest {
    static final String V1 =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}]}]}";

    static ControlRecord config(String json) {
        return Records.config(json);
    }

    static ControlRecord segment(String json) {
        return Records.segment(json);
    }

    static ControlHandler start(List<String> restored) throws Exception {
        List<String> log = new ArrayList<>();
        return ControlHandler.start(
                LimitConfig.parse(V1),
                restored,
                Map.of(),
                List.of(),
                FlinkFileLoader.INSTANCE,
                log::add);
    }

    @Test
    void theHighestVersionWinsWhateverItsSource() throws Exception {
        try (ControlHandler c = start(List.of(V1.replace("\"version\":1", "\"version\":5")))) {
            assertEquals(5, c.config().version(), "restored v5 beats the initial v1");
            Outcome stale = c.apply(config(V1.replace("\"version\":1", "\"version\":4")));
            assertEquals(
                    "stale version: 4 is not greater than the version in force, 5",
                    ((Outcome.NotApplied) stale).error());
            assertInstanceOf(
                    Outcome.ConfigApplied.class,
                    c.apply(config(V1.replace("\"version\":1", "\"version\":6"))));
            assertEquals(6, c.config().version());
        }
    }

    @Test
    void commandsSegmentsAndErrorsSayWhatHappened() throws Exception {
        try (ControlHandler c = start(List.of())) {
            assertEquals(
                    new Outcome.Command("rebuild-mirror"),
                    c.apply(config("{\"command\":\"rebuild-mirror\"}")));
            assertEquals(
                    "unknown command \"reboot\"",
                    ((Outcome.NotApplied) c.apply(config("{\"command\":\"reboot\"}"))).error());
            Outcome added =
                    c.apply(
                            segment(
                                    "{\"segmentId\":\"vip\",\"version\":1,\"format\":\"roaring32\","
                                            + "\"bitmap\":\"OjAAAAIAAAAAAAIAAQAAABgAAAAeAAAAKgDpA+oDyCw=\"}"));
            assertEquals("vip", ((Outcome.SegmentApplied) added).segmentId());
            assertEquals(1, c.segments().size());
            Outcome unknown =
                    c.apply(segment("{\"segmentId\":\"x\",\"version\":2,\"op\":\"delete\"}"));
            assertEquals("unknown segment \"x\"", ((Outcome.NotApplied) unknown).error());
            Outcome garbage = c.apply(config("{"));
            assertInstanceOf(Outcome.NotApplied.class, garbage);
            assertEquals(1, c.config().version(), "nothing changed the config");
        }
    }
}
