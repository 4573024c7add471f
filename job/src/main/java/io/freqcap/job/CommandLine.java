package io.freqcap.job;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.description.BlockElement;
import org.apache.flink.configuration.description.TextElement;
import org.apache.flink.util.TimeUtils;

/**
 * The command line of the job jar and the local runner: {@code --name value} arguments read into
 * {@link FreqcapOptions} (plus a command's own options), one clear line for a bad one, and the
 * {@code --help} text.
 */
public final class CommandLine {
    private CommandLine() {}

    /** All options of {@link FreqcapOptions}, in declaration order. */
    public static List<ConfigOption<?>> all() {
        List<ConfigOption<?>> out = new ArrayList<>();
        for (Field f : FreqcapOptions.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigOption.class) {
                try {
                    out.add((ConfigOption<?>) f.get(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return out;
    }

    /**
     * Parses {@code --name value} (or {@code --name=value}) arguments.
     *
     * @param extra options accepted besides the job's own (the local runner's), may be empty
     */
    public static Configuration parse(String[] args, List<ConfigOption<?>> extra)
            throws InvalidOptionException {
        Map<String, ConfigOption<?>> known = new LinkedHashMap<>();
        for (ConfigOption<?> o : all()) {
            known.put(o.key(), o);
        }
        for (ConfigOption<?> o : extra) {
            known.put(o.key(), o);
        }
        Map<String, String> raw = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new InvalidOptionException(
                        "unexpected argument \"" + a + "\" (options start with --)");
            }
            String name = a.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else {
                ConfigOption<?> o = known.get(name);
                boolean flag = o != null && isBoolean(o);
                if (flag && (i + 1 >= args.length || args[i + 1].startsWith("--"))) {
                    value = "true";
                } else if (i + 1 >= args.length) {
                    throw new InvalidOptionException("--" + name + ": missing value");
                } else {
                    value = args[++i];
                }
            }
            ConfigOption<?> option = known.get(name);
            if (option == null) {
                throw new InvalidOptionException("unknown option --" + name + " (see --help)");
            }
            if (option.hasDefaultValue() && option.defaultValue() instanceof Enum) {
                value = value.replace('-', '_'); // exactly-once -> EXACTLY_ONCE
            }
            raw.put(name, value);
        }
        Configuration conf = Configuration.fromMap(raw);
        for (ConfigOption<?> o : known.values()) {
            try {
                conf.getOptional(o);
            } catch (IllegalArgumentException e) {
                throw new InvalidOptionException(
                        "--"
                                + o.key()
                                + ": invalid value \""
                                + String.valueOf(raw.get(o.key())).replace('_', '-')
                                + "\" ("
                                + describeType(o)
                                + ")");
            }
        }
        return conf;
    }

    private static boolean isBoolean(ConfigOption<?> o) {
        return o.hasDefaultValue() && o.defaultValue() instanceof Boolean;
    }

    private static String describeType(ConfigOption<?> o) {
        if (o == FreqcapOptions.GUARANTEE) {
            return "exactly-once or at-least-once";
        }
        if (o == FreqcapOptions.STARTING_OFFSETS) {
            return "earliest, latest or committed";
        }
        if (o == FreqcapOptions.CHECKPOINT_INTERVAL || o == FreqcapOptions.CLEANUP_INTERVAL) {
            return "a duration like 10s, 500ms, 1min";
        }
        if (o.hasDefaultValue()
                ? o.defaultValue() instanceof Number
                : o == FreqcapOptions.PARALLELISM) {
            return "an integer";
        }
        return text(o);
    }

    /** The plain text of an option's description. */
    static String text(ConfigOption<?> o) {
        StringBuilder sb = new StringBuilder();
        for (BlockElement b : o.description().getBlocks()) {
            if (b instanceof TextElement t) {
                sb.append(t.getFormat());
            }
        }
        return sb.toString();
    }

    /** The --help text: every option with its default and description. */
    public static String usage(String command, List<ConfigOption<?>> extra) {
        StringBuilder sb = new StringBuilder("Usage: " + command + " [--option value]...\n\n");
        List<ConfigOption<?>> options = new ArrayList<>(all());
        options.addAll(extra);
        for (ConfigOption<?> o : options) {
            String def = o.hasDefaultValue() ? String.valueOf(o.defaultValue()) : "";
            if (o.defaultValue() instanceof Enum<?> e) {
                def = e.name().toLowerCase().replace('_', '-');
            } else if (o.defaultValue() instanceof Duration d) {
                def = TimeUtils.formatWithHighestUnit(d);
            }
            sb.append(
                    String.format(
                            "  --%-22s %s%s%n",
                            o.key(), text(o), def.isEmpty() ? "" : " [default: " + def + "]"));
        }
        return sb.toString();
    }
}
