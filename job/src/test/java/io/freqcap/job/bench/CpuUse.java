package io.freqcap.job.bench;

import io.freqcap.job.local.KafkaBrokerProcess;
import io.freqcap.job.local.LocalKafka;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where the CPU of a run went: this JVM's own CPU time (all threads, native ones included), the CPU
 * time of its Java threads grouped by name, and the broker process's CPU time when it runs in its
 * own JVM. Printed per message, so runs of different lengths compare.
 */
final class CpuUse {
    private final KafkaBrokerProcess broker;
    private final long processStart;
    private final long brokerStart;
    private final Map<Long, Long> threadStart = new java.util.HashMap<>();
    private final Map<String, Long> procStart = threadsFromProc();
    private final long gcStart = gcMillis();

    CpuUse(LocalKafka kafka) {
        this.broker = kafka instanceof KafkaBrokerProcess b ? b : null;
        this.processStart = processCpuNanos(ProcessHandle.current().pid());
        this.brokerStart = broker == null ? 0 : processCpuNanos(broker.pid());
        var threads = ManagementFactory.getThreadMXBean();
        for (long id : threads.getAllThreadIds()) {
            threadStart.put(id, Math.max(0, threads.getThreadCpuTime(id)));
        }
    }

    void report(long messages) {
        long process = processCpuNanos(ProcessHandle.current().pid()) - processStart;
        System.out.printf("CPU per message: this JVM %.1f µs", process / 1e3 / messages);
        if (broker != null) {
            System.out.printf(
                    ", broker JVM %.1f µs",
                    (processCpuNanos(broker.pid()) - brokerStart) / 1e3 / messages);
        }
        System.out.printf(
                "; GC %.1f s; busiest threads of this JVM (µs per message):%n",
                (gcMillis() - gcStart) / 1e3);
        Map<String, Long> used = new TreeMap<>();
        Map<String, Long> fromProc = threadsFromProc();
        if (!fromProc.isEmpty()) {
            // /proc sees every thread, native ones (RocksDB, JIT compilers) included; Linux cuts
            // the names at 15 characters.
            fromProc.forEach(
                    (tid, cpu) ->
                            used.merge(
                                    tid.substring(tid.indexOf(' ') + 1).replaceAll("[0-9]+", "#"),
                                    cpu - procStart.getOrDefault(tid, 0L),
                                    Long::sum));
        } else {
            var threads = ManagementFactory.getThreadMXBean();
            for (var info : threads.getThreadInfo(threads.getAllThreadIds())) {
                if (info != null) {
                    used.merge(
                            info.getThreadName().replaceAll("[0-9]+", "#"),
                            threads.getThreadCpuTime(info.getThreadId())
                                    - threadStart.getOrDefault(info.getThreadId(), 0L),
                            Long::sum);
                }
            }
        }
        used.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(12)
                .forEach(
                        e ->
                                System.out.printf(
                                        "  %6.2f  %s%n",
                                        e.getValue() / 1e3 / messages, e.getKey()));
    }

    private static long gcMillis() {
        long sum = 0;
        for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sum += Math.max(0, gc.getCollectionTime());
        }
        return sum;
    }

    /** CPU time (ns) of each live thread of this process, keyed by "tid name", from /proc. */
    private static Map<String, Long> threadsFromProc() {
        Map<String, Long> out = new java.util.HashMap<>();
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    String name = Files.readString(t.resolve("comm")).trim();
                    String stat = Files.readString(t.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
                    out.put(t.getFileName() + " " + name, ticks * 10_000_000L);
                } catch (Exception gone) {
                    // the thread ended meanwhile
                }
            }
        } catch (Exception noProc) {
            // not Linux
        }
        return out;
    }

    /** utime + stime of a process from /proc, in nanoseconds (clock ticks of 10 ms). */
    private static long processCpuNanos(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
        } catch (Exception e) {
            return 0;
        }
    }
}
