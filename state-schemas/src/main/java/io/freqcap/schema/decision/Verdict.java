package io.freqcap.schema.decision;

import java.util.List;

/**
 * What the decision rule says of a message (contract.md §5, §6); counting an ALLOWED one is the
 * caller's. An audit record is built from it ({@link AuditRecords#decision}).
 *
 * @param segment the segment whose rule applied, or {@code *}
 * @param violations for REJECTED: every limit the message would break; for a held ALLOWED message
 *     (contract.md §12 {@code heldBy}): the limits and quiet hours it broke at its timestamp, the
 *     reason it waits; empty otherwise
 * @param retryAfter only for REJECTED; {@code null} when no time would allow the message
 * @param why for DUPLICATE, STALE, FORGOTTEN, CANCELLED and PREEMPTED: why; null otherwise
 * @param shadow what the shadow rules would have decided, when the config has them and the message
 *     reached the limits; else null
 * @param sendAt only for ALLOWED: the later send time of a held message (contract.md §6), at which
 *     it is counted and delivered; null when it goes out at once (for FORGOTTEN, PREEMPTED and
 *     CANCELLED: the send time the held message had)
 * @param lowered whether the rule's {@code fatigue} lowered a limit the message falls under
 *     (contract.md §6): it was decided under a lowered cap
 */
public record Verdict(
        Decision decision,
        String segment,
        List<Violation> violations,
        Long retryAfter,
        Why why,
        ShadowDecision shadow,
        Long sendAt,
        boolean lowered) {

    /**
     * Why a message was decided as it was, where a sentence says it.
     *
     * @param reason a sentence explaining the decision
     * @param preemptedBy only for PREEMPTED: the messageId of the message that took the place
     */
    public record Why(String reason, String preemptedBy) {}

    /** A sentence explaining a DUPLICATE, STALE or ended held message's decision; else null. */
    public String reason() {
        return why == null ? null : why.reason();
    }

    /** Only for PREEMPTED: the messageId of the message that took the place; else null. */
    public String preemptedBy() {
        return why == null ? null : why.preemptedBy();
    }

    private static Verdict of(Decision decision, String segment, String reason, Long sendAt) {
        return new Verdict(
                decision,
                segment,
                List.of(),
                null,
                reason == null ? null : new Why(reason, null),
                null,
                sendAt,
                false);
    }

    /**
     * An ALLOWED verdict with a later send time (the message is held until then), and what held it
     * (the violations at its timestamp).
     */
    public static Verdict held(String segment, long sendAt, List<Violation> heldBy) {
        return new Verdict(Decision.ALLOWED, segment, heldBy, null, null, null, sendAt, false);
    }

    /** A held message whose user was erased before its send time ({@code reason} forget-user). */
    public static Verdict forgotten(String segment, long sendAt) {
        return of(Decision.FORGOTTEN, segment, "forget-user", sendAt);
    }

    /**
     * A held message withdrawn before its send time.
     *
     * @param reason {@code cancel-held}, or the preference that withdrew it
     */
    public static Verdict cancelled(String segment, long sendAt, String reason) {
        return of(Decision.CANCELLED, segment, reason, sendAt);
    }

    /**
     * A held message whose place a message of higher priority took before its send time
     * (contract.md §6).
     *
     * @param by the messageId of the message that took the place
     * @param reason says so, with both priorities
     */
    public static Verdict preempted(String segment, long sendAt, String by, String reason) {
        return new Verdict(
                Decision.PREEMPTED,
                segment,
                List.of(),
                null,
                new Why(reason, by),
                null,
                sendAt,
                false);
    }

    /** Whether the message waits for a later send time. */
    public boolean isHeld() {
        return sendAt != null;
    }

    /** An ALLOWED or EXEMPT verdict. */
    public static Verdict passed(Decision decision, String segment) {
        return of(decision, segment, null, null);
    }

    /** A REJECTED verdict. */
    public static Verdict rejected(String segment, List<Violation> violations, Long retryAfter) {
        return new Verdict(
                Decision.REJECTED, segment, violations, retryAfter, null, null, null, false);
    }

    /** A DUPLICATE or STALE verdict and why. */
    public static Verdict explained(Decision decision, String segment, String reason) {
        return of(decision, segment, reason, null);
    }

    public Verdict withShadow(ShadowDecision s) {
        return new Verdict(decision, segment, violations, retryAfter, why, s, sendAt, lowered);
    }

    /** The same verdict, reached under limits {@code fatigue} lowered (contract.md §9 fatigued). */
    public Verdict underLoweredLimits() {
        return new Verdict(decision, segment, violations, retryAfter, why, shadow, sendAt, true);
    }
}
