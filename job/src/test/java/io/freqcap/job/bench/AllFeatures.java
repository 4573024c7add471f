package io.freqcap.job.bench;

import io.freqcap.job.local.LocalKafka;
import io.freqcap.job.local.SampleData;
import io.freqcap.job.local.TrafficGenerator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Issue 61's workload, {@code -Dbench.workload=all}: every feature of contract v6 on at once.
 *
 * <ul>
 *   <li>A config with calendar limits in the users' zones, channel, category, campaign, lifetime
 *       and across-campaign limits, a reserve, preemption, hold and quiet hours, fatigue, {@code
 *       maxHeld} and a shadow, over three segments ({@link #LIMITS}; the local runner's segments).
 *   <li>Messages over the last {@code days} days up to the wall clock, skewed towards some users as
 *       the local runner's are, in four channels and 1,000 campaigns, a tenth transactional, three
 *       priorities, most users in a zone of their own.
 *   <li>Preferences for a tenth of the users (opt-outs, pauses, limits of their own), on their
 *       topic, before the messages.
 *   <li>A failed receipt for 5% and an opened receipt for 20% of the messages, each right after its
 *       message on the receipts topic. Which messages are ALLOWED is only known once decided: a
 *       receipt of a message that was not counted is read and changes nothing, as in production.
 *   <li>The held topic on: messages held past the wall clock wait there when the run ends.
 * </ul>
 */
final class AllFeatures {
    private AllFeatures() {}

    static final String LIMITS =
            """
            {"version": 1, "timezone": "Asia/Singapore", "maxHeld": 20,
             "rules": [
              {"segment": "new", "limits": [{"calendar": "day", "max": 2}, {"window": "7d", "max": 5}],
               "categories": {"promo": [{"calendar": "week", "max": 2}]},
               "campaign": [{"lifetime": true, "max": 2}, {"window": "3d", "max": 1}],
               "hold": "6h"},
              {"segment": "active",
               "limits": [{"calendar": "day", "max": 3, "reserve": {"slots": 1, "priority": 70}},
                          {"window": "7d", "max": 10}],
               "channels": {"email": [{"window": "1d", "max": 1}]},
               "campaigns": [{"window": "7d", "max": 4}],
               "quietHours": {"from": "22:00", "to": "07:30", "channels": ["push", "sms"]},
               "fatigue": {"after": 2, "scale": 0.5, "floor": 1, "window": "30d"}},
              {"segment": "*", "limits": [{"calendar": "day", "max": 1}, {"window": "7d", "max": 3}],
               "channels": {"sms": [{"window": "7d", "max": 1}]},
               "categories": {"promo": [{"calendar": "week", "max": 1}]},
               "campaign": [{"lifetime": true, "max": 1}],
               "campaigns": [{"window": "7d", "max": 2}],
               "hold": "12h",
               "quietHours": {"from": "21:00", "to": "08:00", "channels": ["push", "sms"]},
               "preempt": true,
               "fatigue": {"after": 3, "scale": 0.5, "floor": 1, "window": "14d"}}
             ],
             "exempt": ["transactional"],
             "shadow": {"rules": [
              {"segment": "*", "limits": [{"calendar": "day", "max": 1}, {"window": "7d", "max": 2}],
               "campaign": [{"lifetime": true, "max": 1}]}
             ]}}
            """;

    private static final String[] CHANNELS = {"push", "push", "email", "sms", "in_app"};

    /** Users' zones (null: the config's): each user keeps one. */
    private static final String[] ZONES = {
        null, "Asia/Kolkata", "America/New_York", "Europe/Berlin", "Australia/Sydney"
    };

    static final int CAMPAIGNS = 1000;

    /**
     * Creates the topics beside {@code prefix + "in"}, writes the config and segments into {@code
     * work} and returns the job's arguments for them.
     */
    static List<String> prepare(LocalKafka kafka, Path work, String prefix, int users)
            throws Exception {
        kafka.createCompactedTopics(4, List.of(prefix + "preferences", prefix + "held"));
        kafka.createTopics(4, List.of(prefix + "receipts"));
        Path segments = SampleData.segments(work, users);
        return new ArrayList<>(
                List.of(
                        "--preferences-topic",
                        prefix + "preferences",
                        "--receipts-topic",
                        prefix + "receipts",
                        "--held-topic",
                        prefix + "held",
                        "--segments",
                        segments.toString()));
    }

    /** Produces the preferences, then the messages with their receipts. */
    static void produce(
            KafkaProducer<byte[], byte[]> producer,
            String prefix,
            int messages,
            int users,
            long spanMillis) {
        Random rnd = new Random(42);
        long now = System.currentTimeMillis();
        long from = now - spanMillis - 3_600_000L;
        for (int user = 0; user < users; user += 10) {
            TrafficGenerator.send(
                    producer,
                    prefix + "preferences",
                    user,
                    preference(rnd, user, from, spanMillis));
        }
        double step = (double) spanMillis / messages;
        for (int i = 0; i < messages; i++) {
            long user = (long) Math.floor(Math.pow(rnd.nextDouble(), 2) * users);
            long t = from + (long) (i * step) + rnd.nextInt(3_600_000);
            int c = rnd.nextInt(10);
            String category = c == 0 ? "transactional" : c < 3 ? "promo" : "marketing";
            String zone = ZONES[(int) (user % ZONES.length)];
            int kind = rnd.nextInt(20);
            int priority = kind < 14 ? 10 : kind < 18 ? 40 : 80;
            String id = "m-" + i;
            TrafficGenerator.send(
                    producer,
                    prefix + "in",
                    user,
                    "{\"messageId\":\""
                            + id
                            + "\",\"userId\":"
                            + user
                            + ",\"channel\":\""
                            + CHANNELS[rnd.nextInt(CHANNELS.length)]
                            + "\",\"category\":\""
                            + category
                            + "\",\"campaignId\":\"campaign-"
                            + rnd.nextInt(CAMPAIGNS)
                            + "\",\"priority\":"
                            + priority
                            + (zone == null ? "" : ",\"timezone\":\"" + zone + "\"")
                            + ",\"timestamp\":"
                            + t
                            + ",\"payload\":{\"title\":\"20% off rides this weekend\","
                            + "\"deeplink\":\"app://promo/spring?src=push&id="
                            + i
                            + "\"}}");
            int r = rnd.nextInt(100);
            if (r < 25) {
                TrafficGenerator.send(
                        producer,
                        prefix + "receipts",
                        user,
                        "{\"messageId\":\""
                                + id
                                + "\",\"userId\":"
                                + user
                                + ",\"status\":\""
                                + (r < 5 ? "failed" : "opened")
                                + "\",\"timestamp\":"
                                + (t + 60_000)
                                + "}");
            }
        }
    }

    /** Opt-outs of SMS or promotions, a pause of a day somewhere in the span, or limits. */
    private static String preference(Random rnd, long user, long from, long spanMillis) {
        String head = "{\"userId\":" + user + ",\"version\":1";
        return switch (rnd.nextInt(5)) {
            case 0 -> head + ",\"optOut\":{\"channels\":[\"sms\"]}}";
            case 1 -> head + ",\"optOut\":{\"categories\":[\"promo\"]}}";
            case 2 ->
                    head
                            + ",\"pausedUntil\":"
                            + (from + (long) (rnd.nextDouble() * spanMillis))
                            + "}";
            case 3 -> head + ",\"limits\":[{\"window\":\"7d\",\"max\":2}]}";
            default -> head + ",\"channels\":{\"email\":[{\"calendar\":\"week\",\"max\":1}]}}";
        };
    }
}
