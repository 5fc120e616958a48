package io.kmem4j.benchmarks.programs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs one program once in a child JVM and measures it the way an operator would: wall time, CPU
 * time, peak resident set, the throughput the program prints, and (with the agent) the allocator's
 * summary line.
 *
 * <ul>
 *   <li><b>Peak RSS</b> is the child's {@code VmHWM} (the kernel's high-water mark of its resident
 *       set), read from {@code /proc/<pid>/status} every {@value #POLL_MILLIS} ms while it runs; the
 *       mark only rises, so the last reading is the peak unless the last few milliseconds raised it.</li>
 *   <li><b>CPU time</b> is exact: user + system time of reaped children, {@code cutime + cstime} in
 *       this process's {@code /proc/self/stat}, taken before and after the child is reaped (so runs
 *       must not overlap: the harness runs one child at a time).</li>
 *   <li><b>Wall time</b>: from {@code start()} to the child's exit, JVM start-up included.</li>
 * </ul>
 * Linux only ({@code /proc}). Threads: one run at a time per process.
 */
final class ProgramRun {
    static final int POLL_MILLIS = 10;
    private static final Pattern THROUGHPUT = Pattern.compile("^\\S+: throughput (\\S+?)/s=([0-9.]+)", Pattern.MULTILINE);
    private static final Pattern SUMMARY = Pattern.compile(
        "\\[kmem4j] summary: allocations=(\\d+) .*bytesReserved=(\\d+) fallbacks=(\\d+)");
    private static final Pattern HIT_RATE = Pattern.compile("magazineHitRate=([0-9.]+)%");

    /**
     * What one run measured.
     *
     * @param exitCode     the child's exit code ({@code -1}: killed after the time-out)
     * @param wallMillis   start to exit, ms
     * @param cpuMillis    user + system CPU of the child, ms
     * @param peakRssBytes {@code VmHWM}, bytes
     * @param unit         the throughput's unit ({@code messages}, ...), or {@code null}
     * @param throughput   the program's own figure per second, or {@code NaN}
     * @param allocations  kmem4j's allocations from its summary, or {@code -1} (no agent or no summary)
     * @param fallbacks    kmem4j's fallbacks to the JDK, or {@code -1}
     * @param reservedBytes kmem4j's bytes reserved from the JDK at exit, or {@code -1}
     * @param hitRate      kmem4j's magazine hit rate, percent, or {@code NaN}
     * @param log          where the child's output was written
     */
    record Result(int exitCode, long wallMillis, long cpuMillis, long peakRssBytes, String unit, double throughput,
                  long allocations, long fallbacks, long reservedBytes, double hitRate, Path log) {
        boolean ok() {
            return exitCode == 0;
        }
    }

    private ProgramRun() {
    }

    /**
     * @param java     the {@code java} executable
     * @param args     everything after it
     * @param log      file for the child's stdout and stderr (merged)
     * @param timeoutSeconds kill the child after this long
     * @return the measurements
     * @throws IOException when the child cannot start or its output cannot be read
     * @throws InterruptedException when interrupted while waiting
     */
    static Result run(final Path java, final List<String> args, final Path log, final long timeoutSeconds)
        throws IOException, InterruptedException {
        final List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.addAll(args);
        Files.createDirectories(log.getParent());
        final long[] cpuBefore = Proc.childCpuTicks();
        final long t0 = System.nanoTime();
        final Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        final long deadline = t0 + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        long hwm = 0;
        boolean killed = false;
        while (!p.waitFor(POLL_MILLIS, TimeUnit.MILLISECONDS)) {
            hwm = Math.max(hwm, Proc.statusBytes(p.pid(), "VmHWM:"));
            if (System.nanoTime() > deadline) {
                p.destroyForcibly().waitFor();
                killed = true;
                break;
            }
        }
        final long wall = (System.nanoTime() - t0) / 1_000_000;
        final int exit = killed ? -1 : p.exitValue();
        final long[] cpuAfter = Proc.childCpuTicks();
        final long cpuMillis = ((cpuAfter[0] - cpuBefore[0]) + (cpuAfter[1] - cpuBefore[1])) * 1000 / Proc.TICKS_PER_SECOND;
        final String out = Files.readString(log, StandardCharsets.UTF_8);
        String unit = null;
        double throughput = Double.NaN;
        final Matcher t = THROUGHPUT.matcher(out);
        if (t.find()) {
            unit = t.group(1);
            throughput = Double.parseDouble(t.group(2));
        }
        long allocations = -1;
        long fallbacks = -1;
        long reserved = -1;
        final Matcher s = SUMMARY.matcher(out);
        if (s.find()) {
            allocations = Long.parseLong(s.group(1));
            reserved = Long.parseLong(s.group(2));
            fallbacks = Long.parseLong(s.group(3));
        }
        final Matcher h = HIT_RATE.matcher(out);
        final double hitRate = h.find() ? Double.parseDouble(h.group(1)) : Double.NaN;
        return new Result(exit, wall, cpuMillis, hwm, unit, throughput, allocations, fallbacks, reserved, hitRate, log);
    }
}
