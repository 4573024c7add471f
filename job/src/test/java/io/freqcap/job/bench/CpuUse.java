package io.freqcap.job.bench;

import io.freqcap.job.KafkaBrokerProcess;
import io.freqcap.job.LocalKafka;
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
    private final long compileStart = compileMillis();
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
        var threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> byName = new TreeMap<>();
        for (var info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long used =
                    threads.getThreadCpuTime(info.getThreadId())
                            - threadStart.getOrDefault(info.getThreadId(), 0L);
            String name = info.getThreadName().replaceAll("[0-9]+", "#");
            byName.merge(name.length() > 70 ? name.substring(0, 70) : name, used, Long::sum);
        }
        long process = processCpuNanos(ProcessHandle.current().pid()) - processStart;
        System.out.printf("CPU per message: this JVM %.1f µs", process / 1e3 / messages);
        if (broker != null) {
            System.out.printf(
                    ", broker JVM %.1f µs",
                    (processCpuNanos(broker.pid()) - brokerStart) / 1e3 / messages);
        }
        System.out.printf(
                "; JIT compilation %.1f s, GC %.1f s of this JVM's time",
                (compileMillis() - compileStart) / 1e3, (gcMillis() - gcStart) / 1e3);
        System.out.println("; busiest threads of this JVM (µs per message):");
        byName.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(10)
                .forEach(
                        e ->
                                System.out.printf(
                                        "  %6.2f  %s%n",
                                        e.getValue() / 1e3 / messages, e.getKey()));
    }

    private static long compileMillis() {
        var jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported()
                ? jit.getTotalCompilationTime()
                : 0;
    }

    private static long gcMillis() {
        long sum = 0;
        for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sum += Math.max(0, gc.getCollectionTime());
        }
        return sum;
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
