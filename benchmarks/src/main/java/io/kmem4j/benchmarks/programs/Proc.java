package io.kmem4j.benchmarks.programs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the harnesses read from Linux's {@code /proc} and from the machine: a process's resident set
 * ({@code VmRSS}, {@code VmHWM}), CPU time of a live process or of this process's reaped children,
 * the load average, and a JDK's version label. Every reader answers 0 (or {@code "?"}) when the
 * process or file is gone rather than throwing, so a poll racing a process's exit does no harm.
 */
final class Proc {
    /** USER_HZ: the unit of the times in {@code /proc/*}{@code /stat} on Linux. */
    static final long TICKS_PER_SECOND = 100;

    private Proc() {
    }

    /**
     * @param pid   a process
     * @param field a size line of {@code /proc/<pid>/status}, with its colon: {@code "VmRSS:"}, {@code "VmHWM:"}
     * @return its value in bytes, or 0 when the process is gone or the line is missing
     */
    static long statusBytes(final long pid, final String field) {
        try {
            for (final String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (final IOException | RuntimeException gone) {
            // exited between polls
        }
        return 0;
    }

    /** @return {@code {cutime, cstime}} of this process (CPU of its reaped children), clock ticks */
    static long[] childCpuTicks() throws IOException {
        final String[] f = statFields(Files.readString(Path.of("/proc/self/stat")));
        return new long[] {Long.parseLong(f[13]), Long.parseLong(f[14])};
    }

    /** @return user + system CPU time of a live process, ms; 0 when it is gone */
    static long cpuMillis(final long pid) {
        try {
            final String[] f = statFields(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 1000 / TICKS_PER_SECOND;
        } catch (final IOException | RuntimeException gone) {
            return 0;
        }
    }

    /** The fields of a {@code stat} line after "(comm) ", from the state (field 3, 1-based) on: utime is [11]. */
    private static String[] statFields(final String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    }

    /** @return the 1, 5 and 15 minute load averages, or {@code "?"} */
    static String loadAverage() {
        try {
            final String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (final IOException | RuntimeException e) {
            return "?";
        }
    }

    /**
     * @param millis how long to watch
     * @return the share of all CPUs' time spent busy (not idle or waiting for I/O) meanwhile, 0..1, or NaN
     */
    static double busyShare(final long millis) throws InterruptedException {
        final long[] a = cpuTimes();
        Thread.sleep(millis);
        final long[] b = cpuTimes();
        final long total = b[0] - a[0];
        return a[0] < 0 || b[0] < 0 || total <= 0 ? Double.NaN : 1.0 - (double) (b[1] - a[1]) / total;
    }

    /** @return {@code {total, idle + iowait}} of the {@code cpu} line of {@code /proc/stat}, ticks; -1 when unreadable */
    private static long[] cpuTimes() {
        try {
            final String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < f.length; i++) {
                total += Long.parseLong(f[i]);
            }
            return new long[] {total, Long.parseLong(f[4]) + Long.parseLong(f[5])};
        } catch (final IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
    }

    /** @return the soft limit of open files of this process (the JVM raises it to the hard limit), or -1 */
    static long openFilesLimit() {
        try {
            for (final String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) {
                    final String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
                    return soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft);
                }
            }
        } catch (final IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }

    /** @return the JDK's {@code java.runtime.version} without build suffix ({@code 17.0.15}), or the path */
    static String jdkLabel(final Path java) throws IOException, InterruptedException {
        final Process p = new ProcessBuilder(java.toString(), "-XshowSettings:properties", "-version")
            .redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        for (final String line : out.split("\n")) {
            final String t = line.trim();
            if (t.startsWith("java.runtime.version = ")) {
                return t.substring("java.runtime.version = ".length()).replaceAll("[+-].*", "");
            }
        }
        return java.toString();
    }
}
