package io.kmem4j.benchmarks.programs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The load generator of {@code benchmarks/run --netty}: <a href="https://github.com/wg/wrk">wrk</a>
 * (Debian's package {@code wrk}), its command line and what its {@code --latency} report says.
 */
final class Wrk {
    /** Shown when wrk is missing. */
    static final String INSTALL = "wrk not found on PATH: install it with `apt-get install -y wrk` (Debian and Ubuntu"
        + " package wrk; elsewhere build https://github.com/wg/wrk)";
    private static final String TIME = "([0-9.]+)(us|ms|s|m|h)";
    private static final Pattern REQUESTS = Pattern.compile("(\\d+) requests in " + TIME);
    private static final Pattern RPS = Pattern.compile("Requests/sec:\\s+([0-9.]+)");
    private static final Pattern P50 = Pattern.compile("^\\s*50(?:\\.0+)?%\\s+" + TIME, Pattern.MULTILINE);
    private static final Pattern P99 = Pattern.compile("^\\s*99(?:\\.0+)?%\\s+" + TIME, Pattern.MULTILINE);
    private static final Pattern SOCKET_ERRORS =
        Pattern.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");
    private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses: (\\d+)");

    private Wrk() {
    }

    /**
     * The load of a run: wrk for {@code warmupSeconds} (not measured, skipped when 0), then wrk with
     * {@code --latency} for {@code seconds}, on {@code http://127.0.0.1:<port><path>}; each run's output to the log.
     *
     * @param cpu the CPU to pin wrk to, or -1
     */
    static LoadGenerator.Factory load(final int cpu, final int threads, final int connections, final int warmupSeconds,
                                      final int seconds, final String path) {
        return (port, log) -> new LoadGenerator() {
            private final String url = "http://127.0.0.1:" + port + path;

            @Override
            public void warmUp() throws IOException, InterruptedException {
                if (warmupSeconds > 0) {
                    LoadGenerator.log(log, "---- wrk warm-up\n" + run(command(cpu, threads, connections, warmupSeconds, url)));
                }
            }

            @Override
            public LoadResult measure() throws IOException, InterruptedException {
                final String out = run(command(cpu, threads, connections, seconds, url));
                LoadGenerator.log(log, "---- wrk load\n" + out);
                return parse(out);
            }

            @Override
            public String problem(final LoadResult r) {
                return "wrk: " + r.requests() + " requests, " + r.errors() + " socket errors, " + r.badAnswers()
                    + " non-2xx answers";
            }
        };
    }

    /** @return null when wrk runs, else what to tell the user */
    static String missing() {
        try {
            final Process p = new ProcessBuilder("wrk", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor();
            return null; // wrk --version exits 1 after printing its version and usage; it ran
        } catch (final IOException e) {
            return INSTALL;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while looking for wrk";
        }
    }

    /**
     * @param cpu         the CPU to pin wrk to ({@code taskset -c}), or -1
     * @param threads     wrk's threads
     * @param connections its connections (keep-alive, one request in flight each)
     * @param seconds     how long
     * @param url         the URL
     * @return the command line
     */
    static List<String> command(final int cpu, final int threads, final int connections, final int seconds,
                                final String url) {
        final List<String> c = new ArrayList<>();
        if (cpu >= 0) {
            c.addAll(List.of("taskset", "-c", Integer.toString(cpu)));
        }
        c.addAll(List.of("wrk", "-t" + threads, "-c" + connections, "-d" + seconds + "s", "--latency", url));
        return c;
    }

    /** Runs wrk to its end. @return its output (stdout and stderr) */
    static String run(final List<String> command) throws IOException, InterruptedException {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        final int exit = p.waitFor();
        if (exit != 0) {
            throw new IOException("wrk exited " + exit + ": " + out.strip());
        }
        return out;
    }

    /** @return the figures of a {@code wrk --latency} report */
    static LoadResult parse(final String out) {
        final Matcher n = REQUESTS.matcher(out);
        final boolean found = n.find();
        final Matcher e = SOCKET_ERRORS.matcher(out);
        long errors = 0;
        if (e.find()) {
            for (int g = 1; g <= 4; g++) {
                errors += Long.parseLong(e.group(g));
            }
        }
        final Matcher x = NON_2XX.matcher(out);
        final Matcher r = RPS.matcher(out);
        return new LoadResult(found ? Long.parseLong(n.group(1)) : 0, found ? micros(n.group(2), n.group(3)) / 1e6 : Double.NaN,
            r.find() ? Double.parseDouble(r.group(1)) : Double.NaN, micros(P50.matcher(out)), micros(P99.matcher(out)),
            errors, x.find() ? Long.parseLong(x.group(1)) : 0);
    }

    private static double micros(final Matcher m) {
        return m.find() ? micros(m.group(1), m.group(2)) : Double.NaN;
    }

    private static double micros(final String value, final String unit) {
        final double v = Double.parseDouble(value);
        return switch (unit.toLowerCase(Locale.ROOT)) {
            case "us" -> v;
            case "ms" -> v * 1e3;
            case "s" -> v * 1e6;
            case "m" -> v * 60e6;
            default -> v * 3600e6;
        };
    }
}
