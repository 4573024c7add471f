package io.freqcap.job.tools;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import java.io.PrintStream;
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

    /**
     * A tool's command line read: its options, or how the tool ends at once ({@code --help}: the
     * usage on {@code out}, exit 0; a bad option: the reason and the usage on {@code err}, exit 2).
     *
     * @param options each option's value by name; null when the tool ends at once
     * @param exit the exit code to end with at once, or null
     */
    public record Parsed(Map<String, String> options, Integer exit) {}

    /** Reads a tool's command line, printing the usage where it ends at once. */
    public static Parsed parse(
            String tool,
            String usage,
            String[] args,
            Set<String> known,
            PrintStream out,
            PrintStream err) {
        try {
            Map<String, String> opts = parse(args, known);
            if (opts == null) {
                out.println(usage);
                return new Parsed(null, 0);
            }
            return new Parsed(opts, null);
        } catch (InvalidOptionException e) {
            err.println(tool + ": " + e.getMessage() + "\n" + usage);
            return new Parsed(null, 2);
        }
    }
}
