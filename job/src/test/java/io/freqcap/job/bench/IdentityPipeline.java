package io.freqcap.job.bench;

import io.freqcap.job.FreqcapOptions;
import io.freqcap.job.KafkaConnectors;
import io.freqcap.job.KafkaSettings;
import io.freqcap.schema.message.RawRecord;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The reference pipeline of the machine notes, for comparison with freqcap in the same harness:
 * Kafka → keyBy(record key) + a ValueState counter per key (RocksDB) → Kafka, exactly-once, the
 * same source, checkpointing and state backend settings as the job.
 */
final class IdentityPipeline {
    private IdentityPipeline() {}

    static void wire(StreamExecutionEnvironment env, Configuration options) {
        String topic = options.get(FreqcapOptions.DELIVERY_TOPIC);
        KafkaRecordSerializationSchema<RawRecord> serializer =
                (r, context, timestamp) -> new ProducerRecord<>(topic, r.key(), r.value());
        KafkaSink<RawRecord> sink =
                KafkaSink.<RawRecord>builder()
                        .setBootstrapServers(options.get(FreqcapOptions.BOOTSTRAP_SERVERS))
                        .setRecordSerializer(serializer)
                        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                        .setTransactionalIdPrefix(
                                options.get(FreqcapOptions.GROUP_ID) + "-identity")
                        .setProperty("transaction.timeout.ms", "600000")
                        .setProperty("linger.ms", "10")
                        .setProperty("batch.size", "262144")
                        .build();
        env.fromSource(
                        KafkaConnectors.inputSource(KafkaSettings.of(options)),
                        WatermarkStrategy.noWatermarks(),
                        "in")
                .keyBy(r -> new String(r.key(), java.nio.charset.StandardCharsets.UTF_8))
                .process(new Count())
                .uid("count")
                .sinkTo(sink)
                .uid("out");
    }

    static final class Count extends KeyedProcessFunction<String, RawRecord, RawRecord> {
        private transient ValueState<Long> seen;

        @Override
        public void open(OpenContext context) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.LONG));
        }

        @Override
        public void processElement(RawRecord r, Context ctx, Collector<RawRecord> out)
                throws Exception {
            Long n = seen.value();
            seen.update(n == null ? 1 : n + 1);
            out.collect(r);
        }
    }
}
