package io.freqcap.job;

import io.freqcap.operators.capping.CappingFunction;
import io.freqcap.operators.capping.CappingOperator;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.ingest.ControlIdleOperator;
import io.freqcap.operators.ingest.MessageTime;
import io.freqcap.operators.ingest.ParseFunction;
import io.freqcap.operators.ingest.UserInputParse;
import io.freqcap.operators.segments.SegmentCheckFunction;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.mirror.MirrorWrite;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;

/**
 * The freqcap graph: parse, key by user, decide against the broadcast control input, write
 * deliveries and audit records. Sources and sinks come from the caller, so tests hand it finite
 * sources and collecting sinks and {@link FreqcapMain} hands it Kafka.
 */
public final class FreqcapJob {
    private FreqcapJob() {}

    /** Operator uids: stable across versions, since savepoints map state by them. */
    public static final String UID_PARSE = "parse";

    public static final String UID_CAPPING = "capping";
    public static final String UID_DELIVERY_SINK = "delivery-sink";
    public static final String UID_AUDIT_SINK = "audit-sink";
    public static final String UID_MIRROR_SINK = "redis-mirror";
    public static final String UID_PARSE_PREFERENCES = "parse-preferences";
    public static final String UID_PARSE_RECEIPTS = "parse-receipts";

    /** A job without the preferences and receipts topics. */
    public static void build(
            CappingSettings settings,
            DataStream<RawRecord> input,
            DataStream<ControlRecord> control,
            Sink<Delivery> deliveries,
            Sink<AuditEvent> audit,
            Sink<MirrorWrite> mirror) {
        build(settings, input, null, null, control, deliveries, audit, mirror);
    }

    /**
     * @param settings what each capping task starts with (its mirror flag is set from {@code
     *     mirror})
     * @param preferences the preferences topic's records (contract.md §10), or null for none
     * @param receipts the receipts topic's records (§11), or null for none
     * @param mirror the Redis mirror's sink, or null for no mirror
     */
    public static void build(
            CappingSettings settings,
            DataStream<RawRecord> input,
            DataStream<RawRecord> preferences,
            DataStream<RawRecord> receipts,
            DataStream<ControlRecord> control,
            Sink<Delivery> deliveries,
            Sink<AuditEvent> audit,
            Sink<MirrorWrite> mirror) {
        CappingSettings capping = settings.withMirror(mirror != null);
        if (capping.heldTopic() != null && !input.getExecutionEnvironment().isChainingEnabled()) {
            // A key's notice and tombstone may take the two sinks (HeldNotices): they are in
            // order on the topic only if both flush before the barrier leaves the capping task.
            throw new IllegalArgumentException(
                    "--held-topic needs operator chaining (pipeline.operator-chaining.enabled:"
                            + " true): its records ride the delivery and audit sinks chained to"
                            + " the capping operator");
        }
        DataStream<InboundMessage> parsed =
                input.map(
                                new ParseFunction(
                                        capping.bounds().maxRecordBytes(),
                                        capping.bounds().maxFuture()))
                        .name("parse")
                        .uid(UID_PARSE)
                        .assignTimestampsAndWatermarks(MessageTime.messages())
                        .name("message-time")
                        .uid("message-time");
        // A user's preferences and receipts reach the task that holds the user's history.
        if (preferences != null) {
            parsed =
                    parsed.union(
                            userInput(
                                    preferences,
                                    InboundMessage.Kind.PREFERENCE,
                                    UID_PARSE_PREFERENCES));
        }
        if (receipts != null) {
            parsed =
                    parsed.union(
                            userInput(receipts, InboundMessage.Kind.RECEIPT, UID_PARSE_RECEIPTS));
        }
        // Segment files are read and checked once, here, so that all capping tasks apply one or
        // none (SegmentCheck).
        DataStream<ControlRecord> checked =
                control.process(new SegmentCheckFunction(capping.bounds().segmentLoader()))
                        .returns(TypeInformation.of(ControlRecord.class))
                        .setParallelism(1)
                        .name("segment-check")
                        .uid("segment-check");
        DataStream<ControlRecord> controlTimed =
                checked.transform(
                                "control-idle",
                                TypeInformation.of(ControlRecord.class),
                                new ControlIdleOperator<>())
                        .uid("control-idle");

        SingleOutputStreamOperator<Delivery> decided =
                parsed.keyBy(InboundMessage::routingKey, Types.LONG)
                        // The config in force is operator state of the capping function (see
                        // ControlInput.CONFIG_IN_FORCE); segments are broadcast state.
                        // CappingOperator: Flink's keyed-broadcast operator, which also lets the
                        // function write cached histories to keyed state at checkpoints.
                        .connect(controlTimed.broadcast())
                        .transform(
                                "capping",
                                TypeInformation.of(Delivery.class),
                                new CappingOperator(new CappingFunction(capping)))
                        .uid(UID_CAPPING);

        decided.sinkTo(deliveries).name("deliveries").uid(UID_DELIVERY_SINK);
        decided.getSideOutput(CappingFunction.AUDIT)
                .sinkTo(audit)
                .name("capping-audit")
                .uid(UID_AUDIT_SINK);
        if (mirror != null) {
            // Same parallelism, so chained to the capping operator: no serialization on the way,
            // and writer i drops within capping task i's output(), which then owes a rebuild in
            // its own state before any checkpoint (see MirrorLink).
            decided.getSideOutput(CappingFunction.MIRROR)
                    .sinkTo(mirror)
                    .name("redis-mirror")
                    .uid(UID_MIRROR_SINK);
        }
    }

    /** A keyed input other than the messages, out of event time ({@link ControlIdleOperator}). */
    private static DataStream<InboundMessage> userInput(
            DataStream<RawRecord> raw, InboundMessage.Kind kind, String uid) {
        return raw.map(new UserInputParse(kind))
                .name(uid)
                .uid(uid)
                .transform(
                        uid + "-idle",
                        TypeInformation.of(InboundMessage.class),
                        new ControlIdleOperator<>())
                .uid(uid + "-idle");
    }
}
