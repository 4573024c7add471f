package io.freqcap.job.bench;

import io.freqcap.job.local.TempDirs;
import io.freqcap.job.tools.simulate.SimulateAccess;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * {@code freqcap-simulate}'s speed, single-threaded: a JSONL file of seeded traffic (users over
 * days, three channels, 5% exempt, campaigns, a few hours out of order) decided by a rolling-only
 * config (contract §3's example) or, with {@code -Dbench.calendarConfig=true}, the calendar example
 * with scopes and a shadow; the file is decided {@code rounds} times in one JVM, each round timed
 * from the first line read to the last decision written (the summary's printing excluded).
 *
 * <p>Run: {@code mvn -q -DskipTests install && mvn -q -pl job exec:exec@simulate}
 */
public final class SimulateBenchmark {
    static final String ROLLING =
            "{\"version\":7,\"rules\":["
                    + "{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1},"
                    + "{\"window\":\"7d\",\"max\":3}],"
                    + "\"channels\":{\"email\":[{\"window\":\"1d\",\"max\":1}]}}],"
                    + "\"exempt\":[\"transactional\"]}";

    static final String CALENDAR =
            "{\"version\":8,\"timezone\":\"Asia/Singapore\",\"rules\":["
                    + "{\"segment\":\"*\",\"limits\":[{\"calendar\":\"day\",\"max\":1},"
                    + "{\"calendar\":\"month\",\"max\":12}],"
                    + "\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":2}]},"
                    + "\"campaign\":[{\"window\":\"3d\",\"max\":1}]}],"
                    + "\"exempt\":[\"transactional\"],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":["
                    + "{\"calendar\":\"day\",\"max\":1},{\"window\":\"7d\",\"max\":2}]}]}}";

    public static void main(String[] args) throws Exception {
        int messages = Integer.parseInt(args[0]);
        int users = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        boolean calendar = Boolean.getBoolean("bench.calendarConfig");
        Path dir = Files.createTempDirectory("freqcap-simulate-bench");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> TempDirs.deleteRecursively(dir)));
        try {
            Path input = dir.resolve("messages.jsonl");
            long bytes = write(input, messages, users);
            Path limits =
                    Files.writeString(dir.resolve("limits.json"), calendar ? CALENDAR : ROLLING);
            System.out.printf(
                    "%,d messages (%,d bytes), %,d users, %s config%n",
                    messages, bytes, users, calendar ? "calendar" : "rolling");
            for (int r = 1; r <= rounds; r++) {
                ByteArrayOutputStream summary = new ByteArrayOutputStream();
                ByteArrayOutputStream err = new ByteArrayOutputStream();
                int code =
                        SimulateAccess.run(
                                new String[] {
                                    "--input", input.toString(),
                                    "--limits", limits.toString(),
                                    "--output", dir.resolve("decisions.jsonl").toString()
                                },
                                new PrintStream(summary, true, StandardCharsets.UTF_8),
                                new PrintStream(err, true, StandardCharsets.UTF_8));
                if (code != 0) {
                    throw new IllegalStateException(err.toString(StandardCharsets.UTF_8));
                }
                System.out.print("round " + r + ": " + err.toString(StandardCharsets.UTF_8));
                if (r == rounds) {
                    System.out.print(summary.toString(StandardCharsets.UTF_8));
                }
            }
        } finally {
            TempDirs.deleteRecursively(dir);
        }
    }

    public static long write(Path file, int messages, int users) throws Exception {
        Random rnd = new Random(11);
        long start = 1_763_769_600_000L;
        long step = 10L * 86_400_000L / messages; // ten days
        String[] channels = {"push", "push", "email", "sms"};
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            for (int i = 0; i < messages; i++) {
                long t = start + i * step - rnd.nextInt(3_600_000);
                String category =
                        rnd.nextInt(20) == 0
                                ? "transactional"
                                : rnd.nextInt(10) == 0 ? "promo" : "marketing";
                w.write("{\"messageId\":\"m-");
                w.write(Integer.toString(i));
                w.write("\",\"userId\":");
                w.write(Integer.toString(rnd.nextInt(users)));
                w.write(",\"channel\":\"");
                w.write(channels[rnd.nextInt(channels.length)]);
                w.write("\",\"category\":\"");
                w.write(category);
                w.write("\",\"campaignId\":\"c");
                w.write(Integer.toString(rnd.nextInt(20)));
                w.write("\",\"timestamp\":");
                w.write(Long.toString(t));
                w.write(",\"payload\":{\"title\":\"Sale ");
                w.write(Integer.toString(i));
                w.write("\"}}\n");
            }
        }
        return Files.size(file);
    }
}
