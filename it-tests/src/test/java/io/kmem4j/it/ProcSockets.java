package io.kmem4j.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sockets a Linux process holds, read the way {@code ss -p} does: the inodes behind
 * {@code /proc/<pid>/fd/*} ({@code socket:[inode]}), looked up in {@code /proc/<pid>/net/tcp},
 * {@code tcp6}, {@code udp}, {@code udp6} and {@code unix} (the tables of the process's network
 * namespace).
 *
 * <p>A socket is <em>listening</em> when it accepts traffic nobody asked for: TCP in state
 * {@code 0A} (LISTEN), any UDP socket (bound, so it receives datagrams), and a Unix socket with the
 * accept-connections flag ({@code __SO_ACCEPTCON}, 0x10000).
 */
public final class ProcSockets {

    /**
     * One socket of the process.
     *
     * @param protocol  {@code tcp}, {@code tcp6}, {@code udp}, {@code udp6}, {@code unix}, or {@code other}
     *                  (an inode in none of the tables, e.g. netlink)
     * @param local     local address:port (hex as in /proc, decoded port) or the Unix path
     * @param listening see the class comment
     * @param inode     the socket's inode
     */
    public record Socket(String protocol, String local, boolean listening, long inode) {
        @Override
        public String toString() {
            return protocol + " " + local + (listening ? " LISTENING" : "") + " (inode " + inode + ")";
        }
    }

    private static final Pattern SOCKET_LINK = Pattern.compile("socket:\\[(\\d+)]");
    private static final int UNIX_ACCEPTCON = 0x10000;

    private ProcSockets() {
    }

    /** True when {@code /proc/self/net/tcp} exists (Linux). */
    public static boolean supported() {
        return Files.isReadable(Path.of("/proc/self/net/tcp")) && Files.isDirectory(Path.of("/proc/self/fd"));
    }

    /** Every socket the process {@code pid} holds. */
    public static List<Socket> of(long pid) {
        Set<Long> inodes = socketInodes(pid);
        List<Socket> sockets = new ArrayList<>();
        Path net = Path.of("/proc", String.valueOf(pid), "net");
        for (String protocol : List.of("tcp", "tcp6", "udp", "udp6")) {
            for (String line : lines(net.resolve(protocol))) {
                String[] f = line.trim().split("\\s+");
                if (f.length < 10 || !f[0].endsWith(":")) {
                    continue; // header
                }
                long inode = Long.parseLong(f[9]);
                if (inodes.remove(inode)) {
                    boolean listening = protocol.startsWith("udp") || f[3].equals("0A");
                    sockets.add(new Socket(protocol, decode(f[1]), listening, inode));
                }
            }
        }
        for (String line : lines(net.resolve("unix"))) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 7 || !f[0].endsWith(":")) {
                continue;
            }
            long inode = Long.parseLong(f[6]);
            if (inodes.remove(inode)) {
                boolean listening = (Integer.parseInt(f[3], 16) & UNIX_ACCEPTCON) != 0;
                sockets.add(new Socket("unix", f.length > 7 ? f[7] : "(unnamed)", listening, inode));
            }
        }
        for (long inode : inodes) {
            sockets.add(new Socket("other", "?", false, inode));
        }
        return sockets;
    }

    /** The listening sockets of {@code pid}. */
    public static List<Socket> listening(long pid) {
        return of(pid).stream().filter(Socket::listening).toList();
    }

    private static Set<Long> socketInodes(long pid) {
        Set<Long> inodes = new LinkedHashSet<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", String.valueOf(pid), "fd"))) {
            for (Path fd : fds) {
                try {
                    Matcher m = SOCKET_LINK.matcher(Files.readSymbolicLink(fd).toString());
                    if (m.matches()) {
                        inodes.add(Long.parseLong(m.group(1)));
                    }
                } catch (NoSuchFileException closedMeanwhile) {
                    // the descriptor was closed while we listed them
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the descriptors of pid " + pid, e);
        }
        return inodes;
    }

    private static List<String> lines(Path table) {
        try {
            return Files.readAllLines(table);
        } catch (NoSuchFileException e) {
            return List.of(); // e.g. no IPv6 in this kernel
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + table, e);
        }
    }

    /** {@code 0100007F:1F90} -> {@code 0100007F:8080}: the address as /proc shows it, the port in decimal. */
    private static String decode(String hexAddressAndPort) {
        int colon = hexAddressAndPort.lastIndexOf(':');
        return hexAddressAndPort.substring(0, colon) + ":" + Integer.parseInt(hexAddressAndPort.substring(colon + 1), 16);
    }
}
