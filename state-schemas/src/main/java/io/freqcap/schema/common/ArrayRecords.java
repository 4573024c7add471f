package io.freqcap.schema.common;

import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.Objects;

/**
 * Equality by content for records that hold arrays (raw bytes, columns): a record's own {@code
 * equals} compares arrays by identity. Every component is compared with {@link Objects#deepEquals},
 * so a record that uses these compares all of its components, arrays by their elements. For tests
 * and logs, not hot paths: it reads the components reflectively.
 */
public final class ArrayRecords {
    private ArrayRecords() {}

    private static final ClassValue<Method[]> ACCESSORS =
            new ClassValue<>() {
                @Override
                protected Method[] computeValue(Class<?> type) {
                    RecordComponent[] components = type.getRecordComponents();
                    Method[] out = new Method[components.length];
                    for (int i = 0; i < out.length; i++) {
                        out[i] = components[i].getAccessor();
                    }
                    return out;
                }
            };

    /** Whether {@code b} is a record of {@code a}'s class with equal components. */
    public static boolean equal(Record a, Object b) {
        if (a == b) {
            return true;
        }
        if (b == null || a.getClass() != b.getClass()) {
            return false;
        }
        for (Method m : ACCESSORS.get(a.getClass())) {
            if (!Objects.deepEquals(component(m, a), component(m, b))) {
                return false;
            }
        }
        return true;
    }

    /** A hash of every component, arrays by their elements. */
    public static int hash(Record r) {
        Method[] accessors = ACCESSORS.get(r.getClass());
        Object[] values = new Object[accessors.length];
        for (int i = 0; i < values.length; i++) {
            values[i] = component(accessors[i], r);
        }
        return java.util.Arrays.deepHashCode(values);
    }

    private static Object component(Method accessor, Object r) {
        try {
            return accessor.invoke(r);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read " + accessor, e);
        }
    }
}
