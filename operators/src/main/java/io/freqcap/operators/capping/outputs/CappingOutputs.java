package io.freqcap.operators.capping.outputs;

import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The capping function's side outputs (the audit topic, the Redis mirror) and what goes with each
 * record sent there: its metric, and the mirror's bookkeeping (the users whose key is to be
 * written, {@link MirrorLogs}; deletions and rebuilds owed, {@link MirrorDebt}).
 *
 * @param logs the users whose Redis key is to be written; null with the mirror off
 * @param window the longest window of the config in force, as it changes
 * @param notices the held topic's records (contract.md §12), or null without {@code --held-topic}
 */
public record CappingOutputs(
        CappingMetrics metrics,
        MirrorDebt mirrorDebt,
        MirrorLogs logs,
        int maxRecordBytes,
        LongSupplier window,
        HeldNotices notices) {
    private static final Logger LOG = LoggerFactory.getLogger(CappingOutputs.class);

    public static final OutputTag<AuditEvent> AUDIT =
            new OutputTag<>("capping-audit", TypeInformation.of(AuditEvent.class));

    public static final OutputTag<MirrorWrite> MIRROR =
            new OutputTag<>("redis-mirror", TypeInformation.of(MirrorWrite.class));

    /** The longest window of the config in force. */
    public long windowMillis() {
        return window.getAsLong();
    }

    /** The deletion of a user's key, remembered until Redis confirms it ({@link MirrorDebt}). */
    public MirrorWrite deletion(long user) {
        return MirrorWrite.deletion(user, mirrorDebt.deleting(user));
    }

    /** Writes the logs of the users whose counted messages changed ({@link MirrorLogs}). */
    public void flushLogs(MirrorLogs.HistoryOf histories, Consumer<MirrorWrite> out) {
        if (logs != null) {
            logs.flush(histories, windowMillis(), this::deletion, out);
            mirrorDebt.noteDrops(); // the chained writer drops within output()
        }
    }

    /** The outputs of one call of the function (for a keyed element). */
    public Sink to(
            KeyedBroadcastProcessFunction<Long, ?, ?, ?>.ReadOnlyContext ctx,
            Consumer<Delivery> deliveries) {
        return new Sink(a -> ctx.output(AUDIT, a), w -> ctx.output(MIRROR, w), deliveries);
    }

    /** The outputs of one call of the function (for a broadcast element). */
    public Sink to(
            KeyedBroadcastProcessFunction<Long, ?, ?, ?>.Context ctx,
            Consumer<Delivery> deliveries) {
        return new Sink(a -> ctx.output(AUDIT, a), w -> ctx.output(MIRROR, w), deliveries);
    }

    /** The outputs of the operator itself (a timer, a start) as consumers. */
    public Sink to(
            Consumer<AuditEvent> audits,
            Consumer<MirrorWrite> writes,
            Consumer<Delivery> deliveries) {
        return new Sink(audits, writes, deliveries);
    }

    /** A decision's records, built: the PREEMPTED ones, its audit record or its delivery. */
    public record Prepared(
            Decided decided, List<AuditEvent> preemptions, AuditEvent audit, Delivery delivery) {}

    public final class Sink {
        private final Consumer<AuditEvent> audits;
        private final Consumer<MirrorWrite> writes;
        private final Consumer<Delivery> deliveries;

        private Sink(
                Consumer<AuditEvent> audits,
                Consumer<MirrorWrite> writes,
                Consumer<Delivery> deliveries) {
            this.audits = audits;
            this.writes = writes;
            this.deliveries = deliveries;
        }

        /**
         * The one way out of a decided record: its metrics; the PREEMPTED records of the held
         * messages whose place it took, and their removal from Redis before its own write; its
         * delivery now or its audit record (one held for later waits in state, {@code
         * Stores#apply}); its Redis write.
         */
        public void decided(Decided d) {
            emit(prepare(d));
        }

        /**
         * The records of a decision, built before anything is written or emitted: one that cannot
         * be built throws with nothing of the decision done, and the caller audits it instead (the
         * last guard).
         */
        public Prepared prepare(Decided d) {
            return new Prepared(
                    d,
                    d.preempted().isEmpty() ? List.of() : d.preemptions(maxRecordBytes),
                    d.route() == Decided.Route.AUDIT ? d.audit(maxRecordBytes) : null,
                    d.route() == Decided.Route.NOW ? d.delivery() : null);
        }

        /** Emits what {@link #prepare} built. */
        public void emit(Prepared p) {
            Decided d = p.decided();
            if (d.undecided()) {
                metrics.undecided.inc(); // the rule threw on it: see DecisionStep
            }
            metrics.decided(d);
            for (int i = 0; i < p.preemptions().size(); i++) {
                audits.accept(p.preemptions().get(i));
                left(d.preempted().get(i));
            }
            if (p.audit() != null) {
                audits.accept(p.audit());
            } else if (p.delivery() != null) {
                deliveries.accept(p.delivery());
            }
            if (d.message() != null) {
                // Not only what counts: a message decided again after a restore (a replay) may
                // not count where its first decision did, and Redis then holds it until written.
                changed(d.message().userId());
            }
        }

        /**
         * A message now held (the one {@code Stores#apply} kept): its HeldNotice, with the held
         * topic on.
         */
        public void held(HeldDelivery h) {
            if (notices != null) {
                notices.held(h, audits, deliveries);
            }
        }

        /** A held message's record that ended its hold before its send time, and its tombstone. */
        public void ended(Decision d, AuditEvent record, HeldDelivery h) {
            audit(d, record);
            left(h);
        }

        /** A held message delivered at its send time, and its tombstone. */
        public void released(HeldDelivery h) {
            deliveries.accept(h.delivery());
            if (notices != null) {
                notices.released(h, audits, deliveries);
            }
        }

        private void left(HeldDelivery h) {
            if (notices != null) {
                notices.left(h, audits, deliveries);
            }
        }

        /**
         * A notice of a message held that the held topic lacks (a start); false when it cannot be
         * built.
         */
        public boolean reconciled(HeldDelivery h) {
            return notices.held(h, audits, deliveries);
        }

        /** A key live on the held topic that nothing held has (a start): its tombstone. */
        public void staleKey(byte[] key) {
            notices.stale(key, audits, deliveries);
        }

        /** An audit record of a held message's outcome or a control record's, counted. */
        public void audit(Decision d, AuditEvent record) {
            metrics.count(d);
            audits.accept(record);
        }

        /** The INVALID_CONTROL record of a control record not applied. */
        public void notApplied(ControlRecord rec, String error) {
            invalid(error, rec.value(), rec.topic(), rec.partition(), rec.offset());
        }

        /** What applies a record of the preferences or receipts topic. */
        public interface Input {
            void apply() throws Exception;
        }

        /**
         * Applies a record of the preferences or receipts topic: an unreadable one, or one whose
         * application throws, becomes one INVALID_CONTROL record with its source; nothing here
         * stops the job.
         */
        public void input(InboundMessage in, Input apply) {
            if (in.isMalformed()) {
                notApplied(in, in.error());
                return;
            }
            try {
                apply.apply();
            } catch (MalformedRecordException e) {
                notApplied(in, e.getMessage()); // read once already: only a changed reader
            } catch (Exception e) {
                LOG.error("{} of user {} not applied", in.kind(), in.routingKey(), e);
                notApplied(in, "not applied: " + e.getClass().getSimpleName());
            }
        }

        private void notApplied(InboundMessage in, String error) {
            invalid(error, in.value(), in.topic(), in.partition(), in.offset());
        }

        /** The INVALID_CONTROL record of an input at this source. */
        private void invalid(String error, byte[] value, String topic, int partition, long offset) {
            audit(
                    Decision.INVALID_CONTROL,
                    AuditRecords.unreadable(
                            Decision.INVALID_CONTROL,
                            error,
                            value,
                            topic,
                            partition,
                            offset,
                            maxRecordBytes));
        }

        /** The user's counted messages changed: its Redis key is written soon, when it is on. */
        public void changed(long user) {
            if (logs != null) {
                logs.changed(user);
            }
        }

        /** A user's key deleted in Redis at once, remembered until Redis confirms it. */
        public void erase(long user) {
            if (logs != null) {
                writes.accept(deletion(user));
                mirrorDebt.noteDrops(); // the chained writer drops within output()
            }
        }

        /**
         * A rebuild's write: the debt it pays is settled by the rebuild itself, so drops are not
         * noted here.
         */
        public void rebuild(MirrorWrite w) {
            writes.accept(w);
        }

        /** The deletions Redis has not confirmed, sent again (a rebuild). */
        public void eraseAgain() {
            for (var e : mirrorDebt.deletions().entrySet()) {
                rebuild(
                        MirrorWrite.deletion(
                                e.getKey(), e.getValue().id(), e.getValue().legacyChannels()));
            }
        }
    }
}
