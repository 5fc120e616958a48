package io.kmem4j.benchmarks.programs;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The server benchmark of issue 17 ({@code benchmarks/run --netty}): a Netty HTTP/1.1 server
 * ({@code io.kmem4j.benchmarks.netty.NettyHttpServer}) under wrk on loopback, with Netty's pooled
 * allocator, its adaptive allocator and kmem4j's {@code presets=netty-allocator}, all in the same run,
 * in interleaved rounds (the arms' order rotates every round), for each Netty version, event-loop count
 * and size mix. Reports per cell the medians of requests/s, p99, server CPU per request, RSS under
 * load and RSS around a burst of connections holding half-sent uploads, and the median over rounds of
 * each arm's ratio to the better Netty arm of its round ({@link ServerRun}, {@link ServerCell},
 * {@link NettyTable}).
 *
 * <p>Writes the tables to {@code BENCHMARKS.md} between {@value #BEGIN} and {@value #END} (unless
 * {@code --no-md}), every run's log and {@code runs.csv} to {@code benchmarks/target/netty/}. Run
 * nothing else meanwhile: the server and wrk share the machine's two cores.
 */
@Command(name = "benchmarks/run --netty", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Runs a Netty HTTP server under wrk with Netty's pooled and adaptive allocators and with kmem4j's"
        + " presets=netty-allocator, interleaved, and reports requests/s, p99, server CPU and RSS under load and"
        + " after a burst, with each arm's median ratio to the better Netty arm.",
        "Needs wrk (apt-get install -y wrk) and, for the burst, --burst open files in the harness and in the server"
            + " (benchmarks/run raises ulimit -n to its hard limit)."})
public final class NettyCommand implements Callable<Integer> {
    static final String BEGIN = "<!-- netty-servers: begin (benchmarks/run --netty rewrites this block) -->";
    static final String END = "<!-- netty-servers: end -->";
    /** The arms and their JVM flags ({@code kmem4j}'s is the agent, added in {@link #armFlags}). */
    static final List<String> ARMS = List.of("pooled", "adaptive", "kmem4j");
    static final List<String> SIZES = List.of("small", "mixed");
    static final List<String> NETTY_VERSIONS = List.of("4.2", "4.1");
    /** Seconds a run takes besides warm-up, load and idle time: JVM start and exit, the burst and its +10 s. */
    private static final int OVERHEAD_SECONDS = 4;
    private static final int BURST_SECONDS = 14;
    /** Warn when the CPUs are busier than this before the start. */
    private static final double BUSY_WARNING = 0.05;

    @Option(names = "--rounds", defaultValue = "5", paramLabel = "N",
        description = "Interleaved rounds per cell (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--duration", defaultValue = "30", paramLabel = "SECONDS",
        description = "Measured wrk run per arm and round (default: ${DEFAULT-VALUE}).")
    int duration;

    @Option(names = "--warmup", defaultValue = "10", paramLabel = "SECONDS",
        description = "wrk warm-up before it, not measured (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--threads", split = ",", defaultValue = "1,2", paramLabel = "N",
        description = "Server event-loop threads (default: ${DEFAULT-VALUE}); with 1 the server runs on CPU 0 and wrk"
            + " on CPU 1 (taskset), otherwise both float.")
    List<Integer> threads;

    @Option(names = "--sizes", split = ",", defaultValue = "small,mixed", paramLabel = "SIZE",
        description = "small: 256 B answers; mixed: 256 B 40 %%, 2 KiB 25 %%, 8 KiB 15 %%, 24 KiB 10 %%, 60 KiB 8 %%,"
            + " 200 KiB 2 %% in a fixed server-side sequence (default: ${DEFAULT-VALUE}).")
    List<String> sizes;

    @Option(names = "--arms", split = ",", defaultValue = "pooled,adaptive,kmem4j", paramLabel = "ARM",
        description = "pooled (-Dio.netty.allocator.type=pooled), adaptive (...=adaptive), kmem4j (the agent with"
            + " --agent-options, the version's default allocator) (default: ${DEFAULT-VALUE}).")
    List<String> arms;

    @Option(names = "--netty", split = ",", defaultValue = "4.2", paramLabel = "VERSION",
        description = "Netty lines: 4.2 (the project's netty.version), 4.1 (netty41.version of the parent pom); jars"
            + " from benchmarks/target/netty-<line> (default: ${DEFAULT-VALUE}).")
    List<String> netty;

    @Option(names = "--jdk", split = ",", paramLabel = "HOME", description = "JDK homes (default: the running JDK).")
    List<Path> jdks;

    @Option(names = "--connections", defaultValue = "64", paramLabel = "N",
        description = "wrk's connections (default: ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--wrk-threads", defaultValue = "1", paramLabel = "N",
        description = "wrk's threads (default: ${DEFAULT-VALUE}).")
    int wrkThreads;

    @Option(names = "--burst", defaultValue = "10000", paramLabel = "CONNECTIONS",
        description = "Connections of the burst, each holding half of a 32 KiB upload; 0: no burst (default:"
            + " ${DEFAULT-VALUE}).")
    int burst;

    @Option(names = "--idle", defaultValue = "5", paramLabel = "SECONDS",
        description = "Idle time between the load and the RSS before the burst (default: ${DEFAULT-VALUE}).")
    int idle;

    @Option(names = "--heap", defaultValue = "128m", paramLabel = "SIZE",
        description = "-Xms and -Xmx of every arm, pre-touched, so the heap's RSS is constant (default: ${DEFAULT-VALUE}).")
    String heap;

    @Option(names = "--max-direct", defaultValue = "1g", paramLabel = "SIZE",
        description = "-XX:MaxDirectMemorySize of every arm; the burst needs room (default: ${DEFAULT-VALUE}).")
    String maxDirect;

    @Option(names = "--jvm-flag", paramLabel = "FLAG", description = "An extra JVM flag for every arm (repeatable).")
    List<String> jvmFlags = new ArrayList<>();

    @Option(names = "--agent", defaultValue = "agent/target/kmem4j-agent.jar", paramLabel = "JAR",
        description = "The agent jar (default: ${DEFAULT-VALUE}).")
    Path agent;

    @Option(names = "--agent-options", defaultValue = "presets=netty-allocator", paramLabel = "OPTIONS",
        description = "The kmem4j arm's agent options (default: ${DEFAULT-VALUE}).")
    String agentOptions;

    @Option(names = "--target", defaultValue = "benchmarks/target", paramLabel = "DIR",
        description = "Where the server's classes (classes/) and the Netty jars (netty-4.1/, netty-4.2/) are"
            + " (default: ${DEFAULT-VALUE}).")
    Path target;

    @Option(names = "--no-pin", description = "Do not pin the 1-event-loop server and wrk to CPUs 0 and 1.")
    boolean noPin;

    @Option(names = "--out", defaultValue = "BENCHMARKS.md", paramLabel = "FILE",
        description = "Markdown file whose netty-servers block is rewritten (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--no-md", description = "Print the tables only.")
    boolean noMarkdown;

    @Option(names = "--results-dir", defaultValue = "benchmarks/target/netty", paramLabel = "DIR",
        description = "Logs of every run and runs.csv (default: ${DEFAULT-VALUE}).")
    Path resultsDir;

    private String commandLine = "";

    /**
     * @param args command-line arguments
     */
    public static void main(final String[] args) {
        final NettyCommand command = new NettyCommand();
        command.commandLine = String.join(" ", args);
        System.exit(new CommandLine(command).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        validate();
        final List<Path> homes = jdks == null || jdks.isEmpty() ? List.of(Path.of(System.getProperty("java.home")))
            : ProgramsCommand.checkedJdkHomes(jdks, this);
        final boolean canPin = !noPin && Runtime.getRuntime().availableProcessors() >= 2 && onPath("taskset");
        final int total = homes.size() * netty.size() * threads.size() * sizes.size() * rounds * arms.size();
        final int perRun = OVERHEAD_SECONDS + warmup + duration + idle + (burst > 0 ? BURST_SECONDS : 0);
        progress(String.format(Locale.ROOT, "%d runs of about %d s each: about %.0f min", total, perRun,
            total * perRun / 60.0));
        final String loadBefore = Proc.loadAverage();
        final double busy = Proc.busyShare(2000);
        if (busy > BUSY_WARNING) {
            progress(String.format(Locale.ROOT, "the CPUs were %.0f %% busy in the 2 s before the start: something else"
                + " runs on this machine, and the figures will show it", busy * 100));
        }
        final long start = System.nanoTime();
        final List<ServerCell> cells = new ArrayList<>();
        final StringBuilder csv = new StringBuilder("jdk,netty,size,threads,round,arm,ok,rps,p50_us,p99_us,requests,"
            + "socket_errors,non2xx,cpu_ms,gc_count,gc_ms,rss_median,rss_max,rss_before,rss_peak,rss_2s,rss_5s,rss_10s,"
            + "burst_opened,burst_answered,allocator_used_direct_held,allocator_used_direct_after,kmem4j_buffers,kmem4j_passed,"
            + "failure,log\n");
        int done = 0;
        for (final Path home : homes) {
            final Path java = home.resolve("bin/java");
            final String jdk = Proc.jdkLabel(java);
            for (final String line : netty) {
                final String classPath = target.resolve("classes").toAbsolutePath() + File.pathSeparator
                    + target.resolve("netty-" + line).toAbsolutePath() + File.separator + "*";
                for (final int t : threads) {
                    for (final String size : sizes) {
                        final List<List<ServerRun.Result>> runs = new ArrayList<>();
                        arms.forEach(a -> runs.add(new ArrayList<>()));
                        final boolean pin = canPin && t == 1;
                        String version = line;
                        for (int r = 0; r < rounds; r++) {
                            for (final int k : Rounds.order(arms.size(), r)) {
                                final String arm = arms.get(k);
                                final ServerRun.Settings settings = new ServerRun.Settings(java, armFlags(arm), classPath,
                                    t, size.equals("small") ? "/s" : "/m", pin, warmup, duration, idle, wrkThreads,
                                    connections, burst);
                                final String tag = String.join("-", jdk, "netty" + line, size, t + "t", "r" + (r + 1), arm);
                                final ServerRun.Result res = ServerRun.run(settings,
                                    resultsDir.resolve(tag.replaceAll("[^A-Za-z0-9.+-]", "_") + ".log"));
                                runs.get(k).add(res);
                                version = res.netty().equals("?") ? version : res.netty();
                                done++;
                                progress(describe(done, total, jdk, version, size, t, r, arm, res));
                                csv.append(csvLine(jdk, version, size, t, r, arm, res));
                            }
                        }
                        cells.add(new ServerCell(jdk, version, size, t, List.copyOf(arms), runs));
                    }
                }
            }
        }
        Files.createDirectories(resultsDir);
        Files.writeString(resultsDir.resolve("runs.csv"), csv, StandardCharsets.UTF_8);
        final String block = block(cells, (System.nanoTime() - start) / 60e9, loadBefore, Proc.loadAverage(), canPin);
        System.out.println(block);
        if (!noMarkdown) {
            ProgramsCommand.write(out, BEGIN, END, block);
            progress("wrote the netty-servers block of " + out);
        }
        return cells.stream().allMatch(c -> c.arms().stream().allMatch(a -> c.okRounds(a) > 0)) ? 0 : 1;
    }

    /** @return the JVM flags every arm has: a fixed, pre-touched heap, room for direct memory, and --jvm-flag */
    List<String> commonFlags() {
        final List<String> f = new ArrayList<>(List.of("-Xms" + heap, "-Xmx" + heap, "-XX:+AlwaysPreTouch",
            "-XX:MaxDirectMemorySize=" + maxDirect));
        f.addAll(jvmFlags);
        return f;
    }

    /** @return the JVM flags of an arm: {@link #commonFlags()}, then its allocator's */
    List<String> armFlags(final String arm) {
        final List<String> f = commonFlags();
        f.add(switch (arm) {
            case "pooled" -> "-Dio.netty.allocator.type=pooled";
            case "adaptive" -> "-Dio.netty.allocator.type=adaptive";
            default -> "-javaagent:" + agent.toAbsolutePath() + "=" + agentOptions;
        });
        return f;
    }

    private void validate() {
        final CommandLine cl = new CommandLine(this);
        requireKnown(cl, "--arms", arms, ARMS);
        requireKnown(cl, "--sizes", sizes, SIZES);
        requireKnown(cl, "--netty", netty, NETTY_VERSIONS);
        if (rounds < 1 || duration < 1 || warmup < 0 || idle < 0 || burst < 0 || connections < 1 || wrkThreads < 1
            || threads.stream().anyMatch(t -> t < 1)) {
            throw new CommandLine.ParameterException(cl, "--rounds, --duration, --connections, --wrk-threads and"
                + " --threads must be at least 1; --warmup, --idle and --burst at least 0");
        }
        final String wrk = Wrk.missing();
        if (wrk != null) {
            throw new CommandLine.ParameterException(cl, wrk);
        }
        final List<Path> needed = new ArrayList<>(List.of(target.resolve("classes").resolve(
            ServerRun.SERVER_CLASS.replace('.', '/') + ".class")));
        netty.forEach(n -> needed.add(target.resolve("netty-" + n)));
        if (arms.contains("kmem4j")) {
            needed.add(agent);
        }
        for (final Path p : needed) {
            if (!Files.exists(p)) {
                throw new CommandLine.ParameterException(cl, p + " missing: build it with"
                    + " ./mvnw -B -q -pl agent,sample-apps,benchmarks -am -DskipTests package");
            }
        }
        final long files = Proc.openFilesLimit();
        if (burst > 0 && files >= 0 && files < burst + 1024L) {
            throw new CommandLine.ParameterException(cl, "--burst " + burst + " needs more open files than this process"
                + " may have (" + files + "): raise ulimit -n (benchmarks/run raises it to the hard limit) or lower --burst");
        }
    }

    private static void requireKnown(final CommandLine cl, final String option, final List<String> given,
                                     final List<String> known) {
        for (final String g : given) {
            if (!known.contains(g)) {
                throw new CommandLine.ParameterException(cl, option + ": unknown '" + g + "'; known: " + String.join(", ", known));
            }
        }
    }

    private static boolean onPath(final String tool) {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    private static String describe(final int done, final int total, final String jdk, final String netty, final String size,
                                   final int threads, final int round, final String arm, final ServerRun.Result r) {
        final double mb = 1024 * 1024;
        return String.format(Locale.ROOT, "%d/%d JDK %s Netty %s %s %d event loop(s) round %d %s: %s", done, total, jdk,
            netty, size, threads, round + 1, arm, r.wrk() == null ? "failed: " + r.failure()
                : String.format(Locale.ROOT, "%,.0f req/s, p99 %.2f ms, %.1f µs CPU/req, RSS %.0f MB under load%s%s",
                    r.rps(), r.p99Micros() / 1000, r.cpuMicrosPerRequest(), r.rssMedian() / mb, !r.burst() ? ""
                        : String.format(Locale.ROOT, "; burst %.0f → %.0f → %.0f MB (+10 s, %.2f×)", r.rssBefore() / mb,
                            r.rssPeak() / mb, r.rssLast() / mb, r.burstRatio()),
                    r.ok() ? "" : "; does not count: " + r.failure()));
    }

    private static String csvLine(final String jdk, final String netty, final String size, final int threads,
                                  final int round, final String arm, final ServerRun.Result r) {
        final Wrk.Result w = r.wrk();
        final List<Object> v = new ArrayList<>(List.of(jdk, netty, size, threads, round + 1, arm, r.ok(), r.rps(),
            w == null ? Double.NaN : w.p50Micros(), r.p99Micros(), w == null ? 0 : w.requests(),
            w == null ? 0 : w.socketErrors(), w == null ? 0 : w.non2xx(), r.cpuMillis(), r.gcCount(), r.gcMillis(),
            (long) r.rssMedian(), (long) r.rssMax(), r.rssBefore(), r.rssPeak()));
        for (int i = 0; i < ServerRun.AFTER_BURST_SECONDS.length; i++) {
            v.add(i < r.rssAfter().length ? r.rssAfter()[i] : 0);
        }
        v.addAll(List.of(r.burstOpened(), r.burstAnswered(), r.metric("held", "allocatorUsedDirect"),
            r.metric("after", "allocatorUsedDirect"), r.metric("end", "kmem4j.Buffers"),
            r.metric("end", "kmem4j.BuffersPassed"), r.failure() == null ? "" : r.failure().replace(',', ';'), r.log()));
        return v.stream().map(String::valueOf).collect(Collectors.joining(",")) + "\n";
    }

    private String block(final List<ServerCell> cells, final double minutes, final String loadBefore,
                         final String loadAfter, final boolean pinned) {
        final StringBuilder b = new StringBuilder();
        b.append(BEGIN).append("\n\n## Netty servers: kmem4j against Netty's own allocators\n\n");
        b.append("Generated by `benchmarks/run --netty").append(commandLine.isBlank() ? "" : " " + commandLine)
            .append("` on ").append(ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z")))
            .append(String.format(Locale.ROOT, " (%.1f min, %d CPUs)", minutes, Runtime.getRuntime().availableProcessors()))
            .append(". Load average before / after: ").append(loadBefore).append(" / ").append(loadAfter).append(".\n\n");
        b.append("A Netty HTTP/1.1 server (`HttpServerCodec`, keep-alive, NIO; every answer a direct buffer from the")
            .append(" channel's allocator, filled by the handler) under `wrk -t").append(wrkThreads).append(" -c")
            .append(connections).append(" -d").append(duration).append("s --latency` after a ").append(warmup)
            .append(" s warm-up; `small` answers 256 B, `mixed` 256 B 40 %, 2 KiB 25 %, 8 KiB 15 %, 24 KiB 10 %, 60 KiB")
            .append(" 8 %, 200 KiB 2 % (a fixed sequence). Arms, the same ").append(rounds)
            .append(" interleaved rounds (the order rotates each round): `pooled` (`-Dio.netty.allocator.type=pooled`),")
            .append(" `adaptive` (`...=adaptive`), `kmem4j` (`-javaagent:kmem4j-agent.jar=").append(agentOptions)
            .append("`, the version's default allocator); every arm `").append(String.join(" ", commonFlags())).append("` and Netty's default leak detection. With 1 event loop ")
            .append(pinned ? "the server runs on CPU 0 and wrk on CPU 1 (`taskset`; the JVM then sees one CPU and picks"
                + " Serial GC)" : "nothing is pinned").append("; with 2 both float over all CPUs.\n\n");
        b.append("Figures are medians over rounds; `× better Netty` is the median over rounds of the arm's figure divided")
            .append(" by the better of `pooled` and `adaptive` in the same round. Server CPU is user + system time of")
            .append(" the server process during the measured run per request; GCs and their time: the server's during the")
            .append(" measured run. RSS is `VmRSS`: under load sampled every")
            .append(" 100 ms; the burst: after ").append(idle).append(" s idle (*before*), ").append(burst)
            .append(" connections each send the head and 16 KiB of a 32 KiB `POST` to an `HttpObjectAggregator`, are")
            .append(" held 1 s, then completed and closed (*peak*: the highest sample meanwhile), then +2, +5 and +10 s")
            .append(" after the last close, the server idle. *Still resident*: (RSS +10 s − before) / (peak − before).")
            .append(" Logs and every run's figures: `benchmarks/target/netty/`.\n\n");
        b.append("### Goals\n\n").append(NettyTable.goals(cells)).append("\n### Results\n");
        for (final ServerCell c : cells) {
            b.append('\n').append(NettyTable.table(c));
        }
        b.append('\n').append(END).append('\n');
        return b.toString();
    }

    private static void progress(final String line) {
        System.err.println("[netty] " + line);
    }
}
