package io.freqcap.job.tools;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** The {@code --name value} command lines of the tools that take options only. */
public final class ToolOptions {
    private ToolOptions() {}

    /**
     * @param known the option names (without {@code --}) the tool takes
     * @return each option's value by name, or null when {@code --help} was asked for
     * @throws InvalidOptionException for an unknown option or one without a value
     */
    public static Map<String, String> parse(String[] args, Set<String> known)
            throws InvalidOptionException {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--help")) {
                return null;
            }
            String name = args[i].startsWith("--") ? args[i].substring(2) : "";
            if (!known.contains(name)) {
                throw new InvalidOptionException("unknown option " + args[i]);
            }
            if (i + 1 >= args.length) {
                throw new InvalidOptionException("no value for " + args[i]);
            }
            opts.put(name, args[++i]);
        }
        return opts;
    }
}
