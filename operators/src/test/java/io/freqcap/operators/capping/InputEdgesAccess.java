package io.freqcap.operators.capping;

import java.util.Set;

/** {@link InputEdgesTest}'s poisoned values, for tests of other packages. */
public final class InputEdgesAccess {
    private InputEdgesAccess() {}

    /** A category set that throws when asked. */
    public static final Set<String> THROWS = InputEdgesTest.THROWS;
}
