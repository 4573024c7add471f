package io.freqcap.schema.decision;

import java.util.List;

/**
 * What a config's shadow rules would have decided for a message (contract.md §5), against the same
 * counted history; never enforced.
 *
 * @param decision ALLOWED or REJECTED
 * @param segment the segment whose shadow rule applied, or {@code *}
 * @param violations empty when ALLOWED
 */
public record ShadowDecision(Decision decision, String segment, List<Violation> violations) {}
