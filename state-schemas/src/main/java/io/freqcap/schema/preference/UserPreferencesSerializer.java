package io.freqcap.schema.preference;

import io.freqcap.schema.common.FormatByte;
import io.freqcap.schema.common.ImmutableSerializer;
import io.freqcap.schema.config.Limit;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.StringValue;

/**
 * A user's {@link UserPreferences} in keyed state, in binary (format 1): read at every decision of
 * a user who has preferences, so parsing JSON there would be a measurable share of it. A leading
 * format byte ({@link FormatByte}) lets later versions read it.
 *
 * <p>Format 1: userId, version, the opted-out channels and categories (count, names), pausedUntil
 * (a flag, then the instant), then the limits: all, per channel, per category (count, then name and
 * list). A limit: its window text or null, window millis, max, calendar period or null. Preference
 * limits never carry a reserve (contract.md §10).
 */
public final class UserPreferencesSerializer extends ImmutableSerializer<UserPreferences> {
    private static final long serialVersionUID = 1L;
    public static final UserPreferencesSerializer INSTANCE = new UserPreferencesSerializer();
    static final int FORMAT = 1;

    private UserPreferencesSerializer() {
        super(Snapshot.class);
    }

    @Override
    public UserPreferences createInstance() {
        return new UserPreferences(0, 1, Set.of(), Set.of(), null, List.of(), Map.of(), Map.of());
    }

    @Override
    public void serialize(UserPreferences p, DataOutputView out) throws IOException {
        FormatByte.write(out, FORMAT);
        out.writeLong(p.userId());
        out.writeLong(p.version());
        writeNames(p.optOutChannels(), out);
        writeNames(p.optOutCategories(), out);
        out.writeBoolean(p.pausedUntil() != null);
        if (p.pausedUntil() != null) {
            out.writeLong(p.pausedUntil());
        }
        writeLimits(p.limits(), out);
        writeNamed(p.channels(), out);
        writeNamed(p.categories(), out);
    }

    @Override
    public UserPreferences deserialize(DataInputView in) throws IOException {
        FormatByte.read(in, "user preferences", FORMAT);
        long userId = in.readLong();
        long version = in.readLong();
        Set<String> channels = readNames(in);
        Set<String> categories = readNames(in);
        Long pausedUntil = in.readBoolean() ? in.readLong() : null;
        return new UserPreferences(
                userId,
                version,
                channels,
                categories,
                pausedUntil,
                readLimits(in),
                readNamed(in),
                readNamed(in));
    }

    private static void writeNames(Set<String> names, DataOutputView out) throws IOException {
        out.writeInt(names.size());
        for (String n : names) {
            StringValue.writeString(n, out);
        }
    }

    private static Set<String> readNames(DataInputView in) throws IOException {
        int n = count(in);
        if (n == 0) {
            return Set.of();
        }
        Set<String> out = new LinkedHashSet<>();
        for (int i = 0; i < n; i++) {
            out.add(StringValue.readString(in));
        }
        return Collections.unmodifiableSet(out);
    }

    private static void writeLimits(List<Limit> limits, DataOutputView out) throws IOException {
        out.writeInt(limits.size());
        for (Limit l : limits) {
            StringValue.writeString(l.window(), out);
            out.writeLong(l.windowMillis());
            out.writeInt(l.max());
            StringValue.writeString(l.calendar(), out);
        }
    }

    private static List<Limit> readLimits(DataInputView in) throws IOException {
        int n = count(in);
        if (n == 0) {
            return List.of();
        }
        List<Limit> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String window = StringValue.readString(in);
            long windowMillis = in.readLong();
            int max = in.readInt();
            String calendar = StringValue.readString(in);
            out.add(new Limit(window, windowMillis, max, calendar, null, 0, null, false));
        }
        return Collections.unmodifiableList(out);
    }

    private static void writeNamed(Map<String, List<Limit>> named, DataOutputView out)
            throws IOException {
        out.writeInt(named.size());
        for (Map.Entry<String, List<Limit>> e : named.entrySet()) {
            StringValue.writeString(e.getKey(), out);
            writeLimits(e.getValue(), out);
        }
    }

    private static Map<String, List<Limit>> readNamed(DataInputView in) throws IOException {
        int n = count(in);
        if (n == 0) {
            return Map.of();
        }
        Map<String, List<Limit>> out = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            out.put(StringValue.readString(in), readLimits(in));
        }
        return Collections.unmodifiableMap(out);
    }

    private static int count(DataInputView in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > 1 << 16) {
            throw new IOException("corrupt user preferences: a list of " + n);
        }
        return n;
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<UserPreferences> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }
}
