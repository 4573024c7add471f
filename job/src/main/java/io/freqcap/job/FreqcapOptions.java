package io.freqcap.job;

import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.schema.decision.AuditRecords;
import java.time.Duration;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;

/**
 * Every command-line option of the job (contract.md §8), as typed Flink options with defaults and
 * descriptions. {@link #parse} turns {@code --name value} arguments into a {@link Configuration}
 * and rejects anything unknown or out of range with one line naming the option.
 */
public final class FreqcapOptions {
    private FreqcapOptions() {}

    public enum Guarantee {
        EXACTLY_ONCE,
        AT_LEAST_ONCE
    }

    public enum StartingOffsets {
        EARLIEST,
        LATEST,
        COMMITTED
    }

    public static final ConfigOption<String> BOOTSTRAP_SERVERS =
            ConfigOptions.key("bootstrap-servers")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Kafka bootstrap servers (required for the job jar).");
    public static final ConfigOption<String> KAFKA_CONFIG =
            ConfigOptions.key("kafka-config")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "A Kafka client properties file (security.protocol, sasl.*, ssl.*,"
                                    + " config.providers for secrets, ...) applied to every Kafka"
                                    + " client; the job's own settings (bootstrap, group,"
                                    + " isolation, transactions) still win.");
    public static final ConfigOption<Duration> TRANSACTION_TIMEOUT =
            ConfigOptions.key("transaction-timeout")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(15))
                    .withDescription(
                            "The Kafka transactions' timeout (at most the brokers'"
                                    + " transaction.max.timeout.ms, 15 min by default; more than"
                                    + " the checkpoint interval): a Kafka outage shorter than"
                                    + " this costs latency only.");
    public static final ConfigOption<String> GROUP_ID =
            ConfigOptions.key("group-id")
                    .stringType()
                    .defaultValue("freqcap")
                    .withDescription(
                            "Consumer group of the input topic; also names the transactional ids.");
    public static final ConfigOption<String> INPUT_TOPIC =
            ConfigOptions.key("input-topic")
                    .stringType()
                    .defaultValue("outbound-messages")
                    .withDescription("OutboundMessage JSON, keyed by userId.");
    public static final ConfigOption<String> SEGMENTS_TOPIC =
            ConfigOptions.key("segments-topic")
                    .stringType()
                    .defaultValue("segment-updates")
                    .withDescription("SegmentUpdate JSON.");
    public static final ConfigOption<String> PREFERENCES_TOPIC =
            ConfigOptions.key("preferences-topic")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "UserPreferences JSON keyed by userId, a compacted topic (contract.md"
                                    + " §10); read from its beginning by a job without state."
                                    + " None: no preferences.");
    public static final ConfigOption<String> RECEIPTS_TOPIC =
            ConfigOptions.key("receipts-topic")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "DeliveryReceipt JSON (contract.md §11): a failed delivery stops"
                                    + " counting. None: no receipts.");
    public static final ConfigOption<String> HELD_TOPIC =
            ConfigOptions.key("held-topic")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "HeldNotices keyed <userId>/<messageId>, a compacted topic (contract.md"
                                    + " §12): a notice while a message waits, a tombstone once it"
                                    + " has left. None: no view of what waits.");
    public static final ConfigOption<String> CONFIG_TOPIC =
            ConfigOptions.key("config-topic")
                    .stringType()
                    .defaultValue("limit-config")
                    .withDescription("LimitConfig JSON or commands.");
    public static final ConfigOption<String> DELIVERY_TOPIC =
            ConfigOptions.key("delivery-topic")
                    .stringType()
                    .defaultValue("deliveries")
                    .withDescription("Allowed and exempt messages, byte for byte, with headers.");
    public static final ConfigOption<String> AUDIT_TOPIC =
            ConfigOptions.key("audit-topic")
                    .stringType()
                    .defaultValue("capping-audit")
                    .withDescription("AuditRecord JSON for everything not delivered.");
    public static final ConfigOption<String> LIMITS =
            ConfigOptions.key("limits")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Initial LimitConfig: a file path or uri (required).");
    public static final ConfigOption<String> SEGMENTS =
            ConfigOptions.key("segments")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Initial segments, a JSON array of full loads.");
    public static final ConfigOption<String> REDIS_PASSWORD_FILE =
            ConfigOptions.key("redis-password-file")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "A file holding the Redis password (AUTH, with the --redis uri's user"
                                    + " name for an ACL user), read by each task when it connects,"
                                    + " so that the password stays off the command line.");
    public static final ConfigOption<String> REDIS =
            ConfigOptions.key("redis")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Redis mirror: redis://host:port, rediss://host:port or"
                                    + " redis-cluster://h1:p1,h2:p2,...; none = no mirror.");
    public static final ConfigOption<String> REDIS_KEY_PREFIX =
            ConfigOptions.key("redis-key-prefix")
                    .stringType()
                    .defaultValue("fc")
                    .withDescription("Prefix of the Redis mirror's keys.");
    public static final ConfigOption<Long> REDIS_MAX_BACKLOG =
            ConfigOptions.key("redis-max-backlog")
                    .longType()
                    .defaultValue(1_000_000L)
                    .withDescription(
                            "Counted messages the mirror may hold unwritten while Redis is away.");
    public static final ConfigOption<Guarantee> GUARANTEE =
            ConfigOptions.key("guarantee")
                    .enumType(Guarantee.class)
                    .defaultValue(Guarantee.EXACTLY_ONCE)
                    .withDescription("exactly-once or at-least-once.");
    public static final ConfigOption<Duration> CHECKPOINT_INTERVAL =
            ConfigOptions.key("checkpoint-interval")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription("How often state and Kafka transactions are committed.");
    public static final ConfigOption<StartingOffsets> STARTING_OFFSETS =
            ConfigOptions.key("starting-offsets")
                    .enumType(StartingOffsets.class)
                    .defaultValue(StartingOffsets.COMMITTED)
                    .withDescription(
                            "earliest, latest or committed (earliest where none is committed).");
    public static final ConfigOption<Duration> CLEANUP_INTERVAL =
            ConfigOptions.key("cleanup-interval")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(10))
                    .withDescription(
                            "How often each capping task clears the histories nothing can need"
                                    + " any more (not in the contract; an addition).");
    public static final ConfigOption<Integer> HISTORY_CACHE =
            ConfigOptions.key("history-cache")
                    .intType()
                    .defaultValue(CappingSettings.DEFAULT_HISTORY_CACHE_SLOTS)
                    .withDescription(
                            "Users whose histories each capping task keeps on the heap in front of"
                                    + " RocksDB (136 bytes each, rounded up to a power of two; 0 for"
                                    + " none; at most "
                                    + CappingSettings.MAX_HISTORY_CACHE_SLOTS
                                    + "). Saves a RocksDB read for users seen"
                                    + " recently (not in the contract; an addition).");
    public static final ConfigOption<Integer> MAX_RECORD_BYTES =
            ConfigOptions.key("max-record-bytes")
                    .intType()
                    .defaultValue(AuditRecords.DEFAULT_MAX_BYTES)
                    .withDescription(
                            "The largest output record; inputs beyond it are MALFORMED and audit"
                                    + " records carry only the first bytes of larger inputs. The"
                                    + " brokers' and topics' limits must allow it.");
    public static final ConfigOption<String> MAX_FUTURE =
            ConfigOptions.key("max-future")
                    .stringType()
                    .defaultValue("1d")
                    .withDescription(
                            "How far after the job's wall clock a message's timestamp may lie"
                                    + " (30m, 1d, 2w, ...); later is MALFORMED. off accepts any.");
    public static final ConfigOption<String> LIFETIME_RETENTION =
            ConfigOptions.key("lifetime-retention")
                    .stringType()
                    .defaultValue("730d")
                    .withDescription(
                            "How long a user's lifetime count of a campaign outlives its latest"
                                    + " send time (1d..3650d); a message later than that counts"
                                    + " it afresh.");
    public static final ConfigOption<Long> MAX_SEGMENT_BYTES =
            ConfigOptions.key("max-segment-bytes")
                    .longType()
                    .defaultValue(FlinkFileLoader.DEFAULT_MAX_BYTES)
                    .withDescription(
                            "The largest segment file read from a uri; larger is"
                                    + " INVALID_CONTROL.");
    public static final ConfigOption<String> SEGMENT_URIS =
            ConfigOptions.key("segment-uris")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Comma-separated uri prefixes segment files may be read from (e.g."
                                    + " s3://acme-segments/); others are INVALID_CONTROL. Default:"
                                    + " any.");
    public static final ConfigOption<Integer> PARALLELISM =
            ConfigOptions.key("parallelism")
                    .intType()
                    .noDefaultValue()
                    .withDescription("Parallelism; the cluster's default when not given.");

    /** A bad command line; the message is the one line the user sees. */
    public static final class InvalidOptionException extends Exception {
        private static final long serialVersionUID = 1L;

        public InvalidOptionException(String message) {
            super(message);
        }
    }
}
