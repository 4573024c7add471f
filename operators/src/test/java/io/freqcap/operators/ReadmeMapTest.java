package io.freqcap.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The map in {@code operators/README.md} ("to change a feature, open these files") names files that
 * exist: a move or a rename that leaves it behind fails here.
 */
class ReadmeMapTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern FILE = Pattern.compile("`([\\w/]+\\.java)`");

    @Test
    void everyFileTheMapNamesExists() throws Exception {
        String readme = Files.readString(ROOT.resolve("operators/README.md"));
        int map = readme.indexOf("## To change a feature");
        assertTrue(map > 0, "operators/README.md has its map");
        Matcher m = FILE.matcher(readme.substring(map));
        List<String> missing = new ArrayList<>();
        int named = 0;
        while (m.find()) {
            named++;
            if (!Files.isRegularFile(resolve(m.group(1)))) {
                missing.add(m.group(1));
            }
        }
        assertTrue(named > 50, "the map names the files of every feature: " + named);
        assertEquals(List.of(), missing, "files the map names that do not exist");
    }

    private static Path resolve(String file) {
        if (file.startsWith("schema/")) {
            return ROOT.resolve("state-schemas/src/main/java/io/freqcap/" + file);
        }
        if (file.startsWith("job/")) {
            return ROOT.resolve("job/src/main/java/io/freqcap/" + file);
        }
        return ROOT.resolve("operators/src/main/java/io/freqcap/operators/" + file);
    }
}
