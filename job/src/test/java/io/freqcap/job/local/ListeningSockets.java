package io.freqcap.job.local;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The TCP sockets a process listens on, read from Linux's /proc (no tool needed): which address
 * each is bound to. Empty where /proc is missing.
 */
final class ListeningSockets {
    private static final String LISTEN = "0A";

    private ListeningSockets() {}

    /** Linux only: /proc/net/tcp6 and /proc/self/fd exist. */
    static boolean available() {
        return Files.isReadable(Path.of("/proc/net/tcp"))
                && Files.isDirectory(Path.of("/proc/self/fd"));
    }

    /** What {@code process} and every process below it listen on. */
    static Map<Long, List<InetSocketAddress>> ofTree(ProcessHandle process) throws IOException {
        Map<String, InetSocketAddress> byInode = new HashMap<>();
        read(Path.of("/proc/net/tcp"), byInode);
        read(Path.of("/proc/net/tcp6"), byInode);
        Map<Long, List<InetSocketAddress>> result = new HashMap<>();
        for (ProcessHandle p : Stream.concat(Stream.of(process), process.descendants()).toList()) {
            List<InetSocketAddress> bound = new ArrayList<>();
            Path fds = Path.of("/proc", Long.toString(p.pid()), "fd");
            try (Stream<Path> links = Files.list(fds)) {
                for (Path fd : links.toList()) {
                    String target;
                    try {
                        target = Files.readSymbolicLink(fd).toString();
                    } catch (IOException closedMeanwhile) {
                        continue;
                    }
                    if (target.startsWith("socket:[")) {
                        InetSocketAddress a = byInode.get(target.substring(8, target.length() - 1));
                        if (a != null) {
                            bound.add(a);
                        }
                    }
                }
            } catch (IOException exited) {
                continue;
            }
            result.put(p.pid(), bound);
        }
        return result;
    }

    /** The listening sockets of a /proc/net/tcp(6) table, by inode. */
    private static void read(Path table, Map<String, InetSocketAddress> byInode)
            throws IOException {
        if (!Files.isReadable(table)) {
            return;
        }
        List<String> lines = Files.readAllLines(table);
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.trim().split("\\s+");
            if (!f[3].equals(LISTEN)) {
                continue;
            }
            String[] local = f[1].split(":");
            byInode.put(
                    f[9], new InetSocketAddress(address(local[0]), Integer.parseInt(local[1], 16)));
        }
    }

    /** The kernel prints an address as 32-bit words in host (little-endian) byte order. */
    private static InetAddress address(String hex) throws IOException {
        byte[] raw = HexFormat.of().parseHex(hex);
        for (int word = 0; word < raw.length; word += 4) {
            for (int i = 0; i < 2; i++) {
                byte b = raw[word + i];
                raw[word + i] = raw[word + 3 - i];
                raw[word + 3 - i] = b;
            }
        }
        return InetAddress.getByAddress(raw);
    }
}
