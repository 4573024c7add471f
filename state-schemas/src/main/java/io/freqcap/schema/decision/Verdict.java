package io.freqcap.schema.decision;

import java.util.List;

/**
 * What the decision rule says of a message (contract.md §5, §6); counting an ALLOWED one is the
 * caller's. An audit record is built from it ({@link AuditRecords#decision}).
 *
 * @param segment the segment whose rule applied, or {@code *}
 * @param violations only for REJECTED: every limit the message would break
 * @param retryAfter only for REJECTED; {@code null} when no time would allow the message
 * @param reason a sentence explaining a DUPLICATE or STALE decision; {@code null} otherwise
 * @param shadow what the shadow rules would have decided, when the config has them and the message
 *     reached the limits; else null
 */
public record Verdict(
        Decision decision,
        String segment,
        List<Violation> violations,
        Long retryAfter,
        String reason,
        ShadowDecision shadow) {

    /** An ALLOWED or EXEMPT verdict. */
    public static Verdict passed(Decision decision, String segment) {
        return new Verdict(decision, segment, List.of(), null, null, null);
    }

    /** A REJECTED verdict. */
    public static Verdict rejected(String segment, List<Violation> violations, Long retryAfter) {
        return new Verdict(Decision.REJECTED, segment, violations, retryAfter, null, null);
    }

    /** A DUPLICATE or STALE verdict and why. */
    public static Verdict explained(Decision decision, String segment, String reason) {
        return new Verdict(decision, segment, List.of(), null, reason, null);
    }

    public Verdict withShadow(ShadowDecision s) {
        return new Verdict(decision, segment, violations, retryAfter, reason, s);
    }
}
