package io.freqcap.operators.capping.controlstate;

import io.freqcap.operators.segments.SegmentLoads;
import io.freqcap.operators.segments.SegmentTable;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * The capping operator's broadcast state descriptors: one per concept, shared by {@link
 * CappingOperator} (which names the segments for Flink's broadcast) and {@link CappingFunction}.
 */
public final class ControlState {
    private ControlState() {}

    /**
     * The segments: segmentId to a JSON descriptor ({@link SegmentTable#descriptors()}), which
     * references uri-loaded bitmaps instead of copying them, since every parallel task checkpoints
     * its own copy of broadcast state.
     */
    public static final MapStateDescriptor<String, String> SEGMENTS =
            new MapStateDescriptor<>("segments-v1", Types.STRING, Types.STRING);

    /**
     * Segment records waiting for their file to load off the task thread, in order (see {@link
     * SegmentLoads}): position to the record as a JSON line.
     */
    public static final MapStateDescriptor<Integer, String> WAITING =
            new MapStateDescriptor<>("segments-waiting-v1", Types.INT, Types.STRING);
}
