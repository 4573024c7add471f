package io.freqcap.operators.capping.decision;

import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.decision.DeliveryLine;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The one outcome of an input record (contract.md §5), malformed ones included, as the job, {@code
 * freqcap-simulate}, the metrics and simulate's summary all take it: delivered now ({@link
 * Route#NOW}), held until its send time ({@link Route#LATER}), or audited ({@link Route#AUDIT}).
 *
 * @param message the parsed message; null for a malformed record
 * @param config the config in force
 * @param verdict the rule's verdict; null for a malformed record
 * @param now the clock it was decided at: a held message whose send time it has reached goes out at
 *     once
 * @param preempted the held messages whose place it took (contract.md §6), each to end as
 *     PREEMPTED; empty for most
 * @param counting how an ALLOWED message is counted ({@link Stores#apply}); null for any other
 */
public record Decided(
        InboundMessage in,
        OutboundMessage message,
        LimitConfig config,
        Verdict verdict,
        long now,
        List<HeldDelivery> preempted,
        Counting counting) {

    /**
     * How an ALLOWED message is counted in its user's history ({@link Histories#count}).
     *
     * @param before the history the decision read, which counting changes in place when it is a
     *     long one; null when held messages' entries are un-counted first (then it is read again)
     * @param keptMillis the longest window the history must serve
     * @param clock the clock pruning reads
     */
    public record Counting(
            CountedHistory before, HistoryEntry entry, long keptMillis, long clock) {}

    /** Where a decided record goes. */
    public enum Route {
        /** To the delivery topic now. */
        NOW,
        /** Into held state until its send time. */
        LATER,
        /** To the audit topic. */
        AUDIT
    }

    /** The outcome of a record that could not be read: MALFORMED, no state touched. */
    public static Decided malformed(InboundMessage in, LimitConfig config) {
        return new Decided(in, null, config, null, Long.MIN_VALUE, List.of(), null);
    }

    /**
     * Whether the rule threw on it ({@link DecisionStep#UNDECIDED}): audited as MALFORMED, counted
     * in {@code undecided}.
     */
    public boolean undecided() {
        return in.error() != null && in.error().startsWith(DecisionStep.UNDECIDED);
    }

    public Decision decision() {
        return verdict == null ? Decision.MALFORMED : verdict.decision();
    }

    /** Whether it goes to the delivery topic (ALLOWED, EXEMPT), now or later. */
    public boolean delivered() {
        return decision().delivered();
    }

    /** Whether it was given a later send time (contract.md §5), whether or not that has passed. */
    public boolean held() {
        return verdict != null && verdict.isHeld();
    }

    public Route route() {
        if (!delivered()) {
            return Route.AUDIT;
        }
        return held() && verdict.sendAt() > now ? Route.LATER : Route.NOW;
    }

    /** The segment whose rule applied; null for a malformed record. */
    public String segment() {
        return verdict == null ? null : verdict.segment();
    }

    /** Whether a lifetime limit (contract.md §3) is among what the message breaks. */
    public boolean byLifetime() {
        if (verdict == null) {
            return false;
        }
        for (Violation v : verdict.violations()) {
            if (v instanceof Violation.Lifetime) {
                return true;
            }
        }
        return false;
    }

    /** Whether a preference of its user's (contract.md §10) is among what rejected it. */
    public boolean byPreference() {
        if (verdict == null) {
            return false;
        }
        for (Violation v : verdict.violations()) {
            if (v.isPreference()) {
                return true;
            }
        }
        return false;
    }

    /** Whether the shadow rules would have rejected it (contract.md §3). */
    public boolean shadowRejects() {
        return verdict != null
                && verdict.shadow() != null
                && verdict.shadow().decision() == Decision.REJECTED;
    }

    /**
     * The delivery: the input's bytes and key (the userId where it had none) with the decision's
     * headers. An ALLOWED delivery says what the shadow rules would have decided; EXEMPT ones do
     * not reach them.
     */
    public Delivery delivery() {
        byte[] k =
                in.key() != null
                        ? in.key()
                        : Long.toString(message.userId()).getBytes(StandardCharsets.UTF_8);
        String shadow = verdict.shadow() == null ? null : verdict.shadow().label();
        return new Delivery(
                k,
                in.value(),
                decision().name(),
                verdict.segment(),
                config.version(),
                shadow,
                verdict.sendAt());
    }

    /**
     * What a message held for later keeps in held state: its delivery, priority and timestamp (its
     * holder numbers it, {@link HeldDelivery#decidedAs}), and what its HeldNotice says (contract.md
     * §12): what held it, the limits before the quiet hours, and the zone its limits were read in.
     */
    public HeldDelivery heldDelivery() {
        List<Violation> heldBy = new ArrayList<>(verdict.violations().size());
        for (Violation v : verdict.violations()) {
            if (!v.isQuietHours()) {
                heldBy.add(v);
            }
        }
        for (Violation v : verdict.violations()) {
            if (v.isQuietHours()) {
                heldBy.add(v);
            }
        }
        return HeldDelivery.of(
                message,
                0,
                delivery(),
                AuditRecords.violationArray(heldBy),
                message.timezone() != null ? message.timezone() : config.timezone());
    }

    /** A delivery as one line of {@code freqcap-simulate}'s output (contract.md §8). */
    public DeliveryLine deliveryLine() {
        String shadow = verdict.shadow() == null ? null : verdict.shadow().label();
        return new DeliveryLine(
                decision().name(),
                message.messageId(),
                message.userId(),
                verdict.segment(),
                config.version(),
                shadow,
                verdict.sendAt(),
                null);
    }

    /**
     * The audit record of a record not delivered, its input kept within {@code maxRecordBytes}.
     *
     * @param inputLength the input's full length (more than its bytes when only the first were
     *     read)
     */
    public AuditEvent audit(long inputLength, int maxRecordBytes) {
        if (verdict == null) {
            return AuditRecords.malformed(in, inputLength, maxRecordBytes);
        }
        return AuditRecords.decision(
                verdict, message, config.version(), in.value(), maxRecordBytes);
    }

    /** The audit record of a record not delivered, its input kept within {@code maxRecordBytes}. */
    public AuditEvent audit(int maxRecordBytes) {
        return audit(in.value() == null ? 0 : in.value().length, maxRecordBytes);
    }

    /**
     * The outcome of this held message once {@code by} took its place (a backtest's, which knows
     * each held message's outcome by the record that decided it): PREEMPTED, with the send time it
     * had.
     */
    public Decided preemptedBy(OutboundMessage by) {
        if (!held()) {
            throw new IllegalStateException(message.messageId() + " was not held");
        }
        return new Decided(
                in,
                message,
                config,
                Withdrawn.preempted(verdict.segment(), verdict.sendAt(), message.priority(), by),
                now,
                List.of(),
                null);
    }

    /** The PREEMPTED records of the held messages whose place it took, in the order taken. */
    public List<AuditEvent> preemptions(int maxRecordBytes) {
        List<AuditEvent> out = new ArrayList<>(preempted.size());
        for (HeldDelivery h : preempted) {
            out.add(Withdrawn.preempted(h, message, maxRecordBytes));
        }
        return out;
    }
}
