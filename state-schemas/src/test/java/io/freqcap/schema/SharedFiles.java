package io.freqcap.schema;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * Files of {@code ../shared} (the contract's examples, fixtures written by other tools). CI always
 * has it beside the project; a user's clone may not, and then the tests that read it are skipped
 * with a message saying so.
 */
public final class SharedFiles {
    private SharedFiles() {}

    /** Tests run in a module directory: ../shared of the project is ../../shared from here. */
    static final Path SHARED = Path.of("../../shared");

    public static byte[] read(String relative) throws Exception {
        Path p = SHARED.resolve(relative);
        Assumptions.assumeTrue(
                Files.exists(p), "../shared/" + relative + " is not beside this clone; skipping");
        return Files.readAllBytes(p);
    }
}
