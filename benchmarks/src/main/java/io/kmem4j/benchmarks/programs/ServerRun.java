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
 * One arm of {@code benchmarks/run --netty} once: the HTTP server ({@code io.kmem4j.benchmarks.netty.NettyHttpServer})
 * in a child JVM, driven by wrk, then the burst. In order:
 * <ol>
 *   <li>warm-up: wrk for the warm-up time (not measured);</li>
 *   <li>load: wrk with {@code --latency} for the measured time; meanwhile the server's {@code VmRSS} every
 *       {@value #SAMPLE_MILLIS} ms, its CPU time ({@code /proc/<pid>/stat}) and its GC count and time (its
 *       metrics lines {@code load} and {@code before}) before and after;</li>
 *   <li>idle for a few seconds, then {@code VmRSS} = the RSS before the burst;</li>
 *   <li>burst ({@link BurstClient}): many connections each holding half an upload, held 1 s, completed and
 *       closed; the peak {@code VmRSS} meanwhile, then {@code VmRSS} at +2, +5 and +10 s after the last close;</li>
 *   <li>the end of the server's stdin: it prints its metrics ({@code server: metrics label=end ...}) and exits.</li>
 * </ol>
 * With {@code pin}, the server runs on CPU 0 and wrk on CPU 1 ({@code taskset}).
 */
final class ServerRun {
    static final int SAMPLE_MILLIS = 100;
    static final String SERVER_CLASS = "io.kmem4j.benchmarks.netty.NettyHttpServer";
    private static final long HOLD_MILLIS = 1_000;
    /** Seconds after the burst's last close at which {@code VmRSS} is read. */
    static final int[] AFTER_BURST_SECONDS = {2, 5, 10};
    private static final Pattern LISTENING = Pattern.compile("^server: listening port=(\\d+) upload-port=(\\d+)");
    private static final Pattern NETTY = Pattern.compile("^server: netty=(\\S+) allocator=(\\S+)");
    private static final Pattern KEY_VALUE = Pattern.compile("(\\S+)=(\\S+)");

    /**
     * How to run.
     *
     * @param java             the {@code java} executable
     * @param jvmFlags         the arm's JVM flags (heap flags, allocator type or agent)
     * @param classPath        the server's class path (its classes and one Netty version's jars)
     * @param threads          the server's event-loop threads
     * @param path             {@code /s} or {@code /m}
     * @param pin              server on CPU 0, wrk on CPU 1
     * @param warmupSeconds    wrk's warm-up
     * @param seconds          wrk's measured run
     * @param idleSeconds      idle time before the RSS before the burst
     * @param wrkThreads       wrk's threads
     * @param connections      wrk's connections
     * @param burstConnections the burst's connections (0: no burst)
     */
    record Settings(Path java, List<String> jvmFlags, String classPath, int threads, String path, boolean pin,
                    int warmupSeconds, int seconds, int idleSeconds, int wrkThreads, int connections, int burstConnections) {
    }

    /**
     * What one run measured. Sizes in bytes; 0 when not measured.
     *
     * @param failure      why the run does not count, or null
     * @param netty        the server's Netty version
     * @param allocator    the server's {@code ByteBufAllocator.DEFAULT} class
     * @param wrk          wrk's report of the measured run
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
    record Result(String failure, String netty, String allocator, Wrk.Result wrk, long cpuMillis, long[] rssSamples,
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
            return wrk == null ? Double.NaN : wrk.rps();
        }

        double p99Micros() {
            return wrk == null ? Double.NaN : wrk.p99Micros();
        }

        /** @return server CPU per request, µs */
        double cpuMicrosPerRequest() {
            return wrk == null || wrk.requests() == 0 ? Double.NaN : cpuMillis * 1000.0 / wrk.requests();
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

    /** Runs the server once as {@code s} says; the server's and wrk's output go to {@code log}. */
    static Result run(final Settings s, final Path log) throws IOException, InterruptedException {
        Files.createDirectories(log.getParent());
        final List<String> cmd = new ArrayList<>();
        if (s.pin()) {
            cmd.addAll(List.of("taskset", "-c", "0"));
        }
        cmd.add(s.java().toString());
        cmd.addAll(s.jvmFlags());
        cmd.addAll(List.of("-cp", s.classPath(), SERVER_CLASS, "--threads", Integer.toString(s.threads())));
        final List<String> lines = new CopyOnWriteArrayList<>();
        try (BufferedWriter logFile = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
            logFile.write(String.join(" ", cmd) + "\n");
            final Process server = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            final Thread pump = pump(server, logFile, lines);
            try {
                return drive(s, server, lines, logFile, log);
            } catch (final IOException e) { // wrk failed, or the server's stdin
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
        final String url = "http://127.0.0.1:" + port + s.path();
        final int wrkCpu = s.pin() ? 1 : -1;
        final long pid = server.pid();
        final OutputStream commands = server.getOutputStream();

        if (s.warmupSeconds() > 0) {
            logged(logFile, "warm-up", Wrk.run(Wrk.command(wrkCpu, s.wrkThreads(), s.connections(), s.warmupSeconds(), url)));
        }
        command(commands, "metrics load");
        final Sampler load = new Sampler(pid);
        final long cpu0 = Proc.cpuMillis(pid);
        final String out = Wrk.run(Wrk.command(wrkCpu, s.wrkThreads(), s.connections(), s.seconds(), url));
        final long cpu1 = Proc.cpuMillis(pid);
        final long[] rss = load.stop();
        logged(logFile, "load", out);
        final Wrk.Result wrk = Wrk.parse(out);

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
            try (BurstClient client = new BurstClient()) {
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
        } else if (!wrk.clean()) {
            failure = "wrk: " + wrk.requests() + " requests, " + wrk.socketErrors() + " socket errors, " + wrk.non2xx()
                + " non-2xx answers";
        } else if (answered < s.burstConnections()) {
            failure = "burst: " + opened + " of " + s.burstConnections() + " connections opened, " + answered
                + " answered" + (burstFailure == null ? "" : " (" + burstFailure + ")");
        }
        return new Result(failure, id == null ? "?" : id.group(1), id == null ? "?" : id.group(2), wrk, cpu1 - cpu0, rss,
            before, peak, after, opened, answered, metrics(lines), log);
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

    private static void logged(final Writer log, final String phase, final String wrkOutput) throws IOException {
        synchronized (log) {
            log.write("---- wrk " + phase + "\n" + wrkOutput);
            log.flush();
        }
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
