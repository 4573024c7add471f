package io.freqcap.schema.decision;

import java.util.List;

/**
 * What a config's shadow rules would have decided for a message (contract.md §5), against the same
 * counted history; never enforced.
 *
 * @param decision ALLOWED or REJECTED
 * @param segment the segment whose shadow rule applied, or {@code *}
 * @param violations empty when ALLOWED
 * @param sendAt when ALLOWED with a later send time (the shadow rules would have held it); else
 *     null
 */
public record ShadowDecision(
        Decision decision, String segment, List<Violation> violations, Long sendAt) {

    /** {@code ALLOWED}, {@code HELD} or {@code REJECTED}: the header's and the record's word. */
    public String label() {
        return sendAt != null ? "HELD" : decision.name();
    }
}
