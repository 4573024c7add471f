package io.freqcap.operators.segments;

import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.segment.SegmentUpdate;

/**
 * Reads and checks a segment file once, before its update is broadcast to every capping task, so
 * that all tasks apply it or none does: a load from a uri leaves with the CRC-32 of the file found
 * good, or with why it is not (every task then refuses it with that reason, and one audits it).
 * Other control records pass unchanged. Plain Java.
 */
public final class SegmentCheck {
    private SegmentCheck() {}

    public static ControlRecord check(ControlRecord rec, SegmentLoader loader) {
        if (rec.kind() != ControlRecord.Kind.SEGMENT) {
            return rec;
        }
        SegmentUpdate u;
        try {
            u = SegmentUpdate.parse(rec.value());
        } catch (MalformedRecordException | RuntimeException e) {
            return rec; // every capping task finds the same and refuses it alike
        }
        if (u.op() != SegmentUpdate.Op.LOAD || u.uri() == null) {
            return rec;
        }
        try {
            return rec.checked(SegmentCache.read(u.uri(), u.format(), loader).crc32(), null);
        } catch (MalformedRecordException e) {
            return rec.checked(null, "segment \"" + u.segmentId() + "\": " + e.getMessage());
        } catch (Throwable e) {
            if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                throw (VirtualMachineError) e;
            }
            return rec.checked(null, CheckedLoad.unreadable(u.uri(), e));
        }
    }
}
