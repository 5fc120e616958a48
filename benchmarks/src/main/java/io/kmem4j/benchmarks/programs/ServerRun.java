package io.kmem4j.benchmarks.programs;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One arm of {@code benchmarks/run --netty} once: a server ({@code io.kmem4j.benchmarks.netty.NettyHttpServer}
 * or {@code GrpcUnaryServer}) in a child JVM, driven by its load generator (wrk, or the gRPC load client),
 * then the burst. In order:
 * <ol>
 *   <li>warm-up: the load for the warm-up time (not measured);</li>
 *   <li>load: the measured run for the measured time; meanwhile the server's {@code VmRSS} every
 *       {@value #SAMPLE_MILLIS} ms, its CPU time ({@code /proc/<pid>/stat}) and its GC count and time (its
 *       metrics lines {@code load} and {@code before}) before and after;</li>
 *   <li>idle for a few seconds, then {@code VmRSS} = the RSS before the burst;</li>
 *   <li>burst ({@link BurstClient}): many connections each holding half an upload, held 1 s, completed and
 *       closed; the peak {@code VmRSS} meanwhile, then {@code VmRSS} at +2, +5 and +10 s after the last close;</li>
 *   <li>the end of the server's stdin: it prints its metrics ({@code server: metrics label=end ...}) and exits.</li>
 * </ol>
 * With {@code pin}, the server runs on CPU 0 (and the load generator, as its factory says, on CPU 1).
 */
final class ServerRun {
    static final int SAMPLE_MILLIS = 100;
    private static final long HOLD_MILLIS = 1_000;
    /** Seconds after the burst's last close at which {@code VmRSS} is read. */
    static final int[] AFTER_BURST_SECONDS = {2, 5, 10};
    private static final Pattern LISTENING = Pattern.compile("^server: listening port=(\\d+) upload-port=(\\d+)");
    private static final Pattern NETTY = Pattern.compile("^server: netty=(\\S+) allocator=(\\S+)(.*)");
    /** In the gRPC server's first line: gRPC's version. */
    private static final Pattern GRPC = Pattern.compile(" grpc=(\\S+)");
    private static final Pattern KEY_VALUE = Pattern.compile("(\\S+)=(\\S+)");

    /**
     * How to run.
     *
     * @param java             the {@code java} executable
     * @param jvmFlags         the arm's JVM flags (heap flags, allocator type or agent)
     * @param classPath        the server's class path (its classes and one Netty version's jars, or gRPC's)
     * @param serverClass      the server's main class
     * @param threads          the server's event-loop threads
     * @param pin              server on CPU 0
     * @param load             the load generator, given the server's port
     * @param idleSeconds      idle time before the RSS before the burst
     * @param upload           what a connection of the burst sends and reads
     * @param burstConnections the burst's connections (0: no burst)
     */
    record Settings(Path java, List<String> jvmFlags, String classPath, String serverClass, int threads, boolean pin,
                    LoadGenerator.Factory load, int idleSeconds, BurstClient.Upload upload, int burstConnections) {
    }

    /**
     * What one run measured. Sizes in bytes; 0 when not measured.
     *
     * @param failure      why the run does not count, or null
     * @param netty        the server's Netty version (the gRPC server's: {@code <Netty>, grpc-netty-shaded <gRPC>})
     * @param allocator    the server's allocator class: {@code ByteBufAllocator.DEFAULT}'s, the gRPC server's
     *                     accepted channels'
     * @param load         the load generator's report of the measured run
     * @param cpuMillis    the server's user + system CPU during the measured run
     * @param rssSamples   {@code VmRSS} during the measured run
     * @param rssBefore    {@code VmRSS} after the idle wait, before the burst
     * @param rssPeak      the highest {@code VmRSS} while the burst was open
     * @param rssAfter     {@code VmRSS} at {@link #AFTER_BURST_SECONDS} after the burst
     * @param burstOpened  connections the burst opened
     * @param burstAnswered uploads answered 200
     * @param metrics      the server's {@code metrics} lines by label ({@code start}, {@code held}, {@code end}, ...)
     * @param log          the run's log
     */
    record Result(String failure, String netty, String allocator, LoadResult load, long cpuMillis, long[] rssSamples,
                  long rssBefore, long rssPeak, long[] rssAfter, int burstOpened, int burstAnswered,
                  Map<String, Map<String, String>> metrics, Path log) {
        boolean ok() {
            return failure == null;
        }

        /** @return whether the run had a burst */
        boolean burst() {
            return rssPeak > 0;
        }

        double rps() {
            return load == null ? Double.NaN : load.rps();
        }

        double p99Micros() {
            return load == null ? Double.NaN : load.p99Micros();
        }

        /** @return server CPU per request, µs */
        double cpuMicrosPerRequest() {
            return load == null || load.requests() == 0 ? Double.NaN : cpuMillis * 1000.0 / load.requests();
        }

        double rssMedian() {
            return Rounds.median(java.util.Arrays.stream(rssSamples).asDoubleStream().toArray());
        }

        double rssMax() {
            return java.util.Arrays.stream(rssSamples).max().orElse(0);
        }

        /** @return {@code VmRSS} at the {@code i}-th time of {@link #AFTER_BURST_SECONDS}, NaN without a burst */
        double rssAfter(final int i) {
            return i < rssAfter.length && rssAfter[i] > 0 ? rssAfter[i] : Double.NaN;
        }

        /** @return {@code VmRSS} at the last sample after the burst (+10 s), NaN without a burst */
        double rssLast() {
            return rssAfter(rssAfter.length - 1);
        }

        /** @return RSS(+10 s) / RSS before the burst */
        double burstRatio() {
            return rssLast() / rssBefore;
        }

        /** @return the share of the burst's growth still resident at +10 s */
        double burstResident() {
            return rssPeak > rssBefore ? (rssLast() - rssBefore) / (rssPeak - rssBefore) : Double.NaN;
        }

        /** @return the GC count of the server during the measured run */
        double gcCount() {
            return metric("before", "gcCount") - metric("load", "gcCount");
        }

        /** @return the GC time of the server during the measured run, ms */
        double gcMillis() {
            return metric("before", "gcMillis") - metric("load", "gcMillis");
        }

        /** @return a number from a metrics line, NaN when absent */
        double metric(final String label, final String key) {
            final Map<String, String> m = metrics.get(label);
            final String v = m == null ? null : m.get(key);
            try {
                return v == null ? Double.NaN : Double.parseDouble(v);
            } catch (final NumberFormatException e) {
                return Double.NaN;
            }
        }
    }

    private ServerRun() {
    }

    /** Runs the server once as {@code s} says; the server's and the load generator's output go to {@code log}. */
    static Result run(final Settings s, final Path log) throws IOException, InterruptedException {
        Files.createDirectories(log.getParent());
        final List<String> cmd = new ArrayList<>();
        if (s.pin()) {
            cmd.addAll(List.of("taskset", "-c", "0"));
        }
        cmd.add(s.java().toString());
        cmd.addAll(s.jvmFlags());
        cmd.addAll(List.of("-cp", s.classPath(), s.serverClass(), "--threads", Integer.toString(s.threads())));
        final List<String> lines = new CopyOnWriteArrayList<>();
        try (BufferedWriter logFile = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
            logFile.write(String.join(" ", cmd) + "\n");
            final Process server = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            final Thread pump = pump(server, logFile, lines);
            try {
                return drive(s, server, lines, logFile, log);
            } catch (final IOException e) { // the load generator failed, or the server's stdin
                return failed(e.toString(), lines, log);
            } finally {
                stop(server);
                pump.join(TimeUnit.SECONDS.toMillis(10));
            }
        }
    }

    private static Result drive(final Settings s, final Process server, final List<String> lines, final Writer logFile,
                                final Path log) throws IOException, InterruptedException {
        final Matcher listening = awaitLine(server, lines, LISTENING, 60);
        if (listening == null) {
            return failed("the server did not start (exit " + (server.isAlive() ? "-" : server.exitValue()) + ")", lines, log);
        }
        final Matcher id = first(lines, NETTY);
        final int port = Integer.parseInt(listening.group(1));
        final int uploadPort = Integer.parseInt(listening.group(2));
        final long pid = server.pid();
        final OutputStream commands = server.getOutputStream();

        final LoadResult load;
        final String loadProblem;
        final long cpu0;
        final long cpu1;
        final long[] rss;
        try (LoadGenerator generator = s.load().create(port, logFile)) {
            generator.warmUp();
            command(commands, "metrics load");
            final Sampler sampler = new Sampler(pid);
            cpu0 = Proc.cpuMillis(pid);
            load = generator.measure();
            cpu1 = Proc.cpuMillis(pid);
            rss = sampler.stop();
            loadProblem = load.clean() ? null : generator.problem(load);
        }

        TimeUnit.SECONDS.sleep(s.idleSeconds());
        final long before = Proc.statusBytes(pid, "VmRSS:");
        command(commands, "metrics before");
        long peak = 0;
        final long[] after = new long[AFTER_BURST_SECONDS.length];
        int opened = 0;
        int answered = 0;
        String burstFailure = null;
        if (s.burstConnections() > 0) {
            final Sampler burst = new Sampler(pid);
            try (BurstClient client = new BurstClient(s.upload())) {
                opened = client.open(new InetSocketAddress("127.0.0.1", uploadPort), s.burstConnections());
                TimeUnit.MILLISECONDS.sleep(HOLD_MILLIS);
                command(commands, "metrics held");
                answered = client.complete();
                if (client.firstFailure() != null) {
                    burstFailure = client.firstFailure().toString();
                }
            }
            final long closed = System.nanoTime();
            peak = java.util.Arrays.stream(burst.stop()).max().orElse(0);
            for (int i = 0; i < AFTER_BURST_SECONDS.length; i++) {
                final long wait = closed + TimeUnit.SECONDS.toNanos(AFTER_BURST_SECONDS[i]) - System.nanoTime();
                TimeUnit.NANOSECONDS.sleep(Math.max(0, wait));
                after[i] = Proc.statusBytes(pid, "VmRSS:");
            }
            command(commands, "metrics after");
        }
        commands.close(); // the server prints its end metrics and exits
        if (!server.waitFor(30, TimeUnit.SECONDS)) {
            return failed("the server did not exit within 30 s of the end of its stdin", lines, log);
        }
        String failure = null;
        if (server.exitValue() != 0) {
            failure = "the server exited " + server.exitValue();
        } else if (loadProblem != null) {
            failure = loadProblem;
        } else if (answered < s.burstConnections()) {
            failure = "burst: " + opened + " of " + s.burstConnections() + " connections opened, " + answered
                + " answered" + (burstFailure == null ? "" : " (" + burstFailure + ")");
        }
        return new Result(failure, id == null ? "?" : version(id), id == null ? "?" : id.group(2), load, cpu1 - cpu0, rss,
            before, peak, after, opened, answered, metrics(lines), log);
    }

    /** @return the Netty version of the server's first line, and gRPC's where it says one */
    static String version(final Matcher id) {
        final Matcher grpc = GRPC.matcher(id.group(3));
        return grpc.find() ? id.group(1) + ", grpc-netty-shaded " + grpc.group(1) : id.group(1);
    }

    private static Result failed(final String why, final List<String> lines, final Path log) {
        return new Result(why, "?", "?", null, 0, new long[0], 0, 0, new long[0], 0, 0, metrics(lines), log);
    }

    /** @return the {@code server: metrics label=L k=v ...} lines, by label */
    static Map<String, Map<String, String>> metrics(final List<String> lines) {
        final Map<String, Map<String, String>> all = new HashMap<>();
        for (final String line : lines) {
            if (line.startsWith("server: metrics ")) {
                final Map<String, String> m = new HashMap<>();
                final Matcher kv = KEY_VALUE.matcher(line);
                while (kv.find()) {
                    m.put(kv.group(1), kv.group(2));
                }
                all.put(m.getOrDefault("label", "?"), m);
            }
        }
        return all;
    }

    private static void command(final OutputStream commands, final String line) throws IOException {
        commands.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        commands.flush();
    }

    /** Copies the server's output to the log and to {@code lines}, line by line, until it ends. */
    private static Thread pump(final Process server, final Writer log, final List<String> lines) {
        final Thread t = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                    synchronized (log) {
                        log.write(line + "\n");
                        log.flush();
                    }
                }
            } catch (final IOException e) {
                // the server is gone
            }
        }, "server-output");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static Matcher awaitLine(final Process server, final List<String> lines, final Pattern p, final int seconds)
        throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            final Matcher m = first(lines, p);
            if (m != null) {
                return m;
            }
            if (!server.isAlive()) {
                TimeUnit.MILLISECONDS.sleep(200); // let the pump take its last lines
                return first(lines, p);
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
        return null;
    }

    private static Matcher first(final List<String> lines, final Pattern p) {
        for (final String line : lines) {
            final Matcher m = p.matcher(line);
            if (m.find()) {
                return m;
            }
        }
        return null;
    }

    private static void stop(final Process server) throws InterruptedException {
        if (server.isAlive()) {
            server.destroy();
            if (!server.waitFor(10, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor();
            }
        }
    }

    /** {@code VmRSS} of a process every {@value #SAMPLE_MILLIS} ms on a thread of its own, until {@link #stop}. */
    static final class Sampler {
        private final List<Long> samples = new CopyOnWriteArrayList<>();
        private final Thread thread;
        private volatile boolean running = true;

        Sampler(final long pid) {
            thread = new Thread(() -> {
                while (running) {
                    final long rss = Proc.statusBytes(pid, "VmRSS:");
                    if (rss > 0) {
                        samples.add(rss);
                    }
                    try {
                        TimeUnit.MILLISECONDS.sleep(SAMPLE_MILLIS);
                    } catch (final InterruptedException e) {
                        return;
                    }
                }
            }, "rss-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        /** @return the samples taken */
        long[] stop() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join();
            return samples.stream().mapToLong(Long::longValue).toArray();
        }
    }
}
