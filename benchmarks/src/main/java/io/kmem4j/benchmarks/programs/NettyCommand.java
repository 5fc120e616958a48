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
 * ({@code io.kmem4j.benchmarks.netty.NettyHttpServer}) under wrk on loopback, and a gRPC unary server on
 * grpc-netty-shaded ({@code GrpcUnaryServer}) under a grpc-java load client in a second JVM
 * ({@code GrpcLoadClient}, {@link GrpcLoad}), with Netty's pooled allocator, its adaptive allocator and
 * kmem4j's {@code presets=netty-allocator}, all in the same run, in interleaved rounds (the arms' order
 * rotates every round), for each protocol, Netty version (HTTP; gRPC brings its own), event-loop count
 * and size mix. Reports per cell the medians of requests/s, p99, server CPU per request, RSS under
 * load and RSS around a burst of connections holding half-sent uploads, and the median over rounds of
 * each arm's ratio to the better Netty allocator of its cell, round by round ({@link ServerRun}, {@link ServerCell},
 * {@link NettyTable}).
 *
 * <p>Writes the tables to {@code BENCHMARKS.md} between {@value #BEGIN} and {@value #END} (unless
 * {@code --no-md}), every run's log and {@code runs.csv} to {@code benchmarks/target/netty/}. Run
 * nothing else meanwhile: the server and its load generator share the machine's two cores.
 */
@Command(name = "benchmarks/run --netty", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Runs a Netty HTTP server under wrk and a gRPC unary server (grpc-netty-shaded) under a grpc-java"
        + " load client in a second JVM, each with Netty's pooled and adaptive allocators and with kmem4j's"
        + " presets=netty-allocator, interleaved, and reports requests/s, p99, server CPU and RSS under load and"
        + " after a burst, with each arm's median ratio to the better Netty allocator.",
        "HTTP needs wrk (apt-get install -y wrk); the burst needs --burst open files in the harness and in the server"
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
    /** What a gRPC run takes on top: the load client's JVM, its connections and its drain. */
    private static final int GRPC_OVERHEAD_SECONDS = 3;
    private static final int BURST_SECONDS = 14;
    /** Warn when the CPUs are busier than this before the start. */
    private static final double BUSY_WARNING = 0.05;

    @Option(names = "--protocol", split = ",", defaultValue = "http,grpc", paramLabel = "PROTOCOL",
        description = "http: the Netty HTTP/1.1 server under wrk, for each --netty line; grpc: the gRPC unary server on"
            + " grpc-netty-shaded (its own Netty) under the gRPC load client (default: ${DEFAULT-VALUE}).")
    List<String> protocols;

    @Option(names = "--rounds", defaultValue = "5", paramLabel = "N",
        description = "Interleaved rounds per cell (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--duration", defaultValue = "30", paramLabel = "SECONDS",
        description = "Measured load per arm and round (default: ${DEFAULT-VALUE}).")
    int duration;

    /*
     * 20 s, not 10, as a precaution: with one event loop the server has one CPU, which it shares with its JIT
     * compilers. After a 10 s warm-up C2 was still compiling for 0.06-1.19 s (wall time) of a measured 10 s
     * (gRPC small, --duration=10; JFR, every compilation; six runs, all arms); the run with the most made the
     * fewest requests. With the default --duration of 30 s that is a smaller share, but still noise.
     */
    @Option(names = "--warmup", defaultValue = "20", paramLabel = "SECONDS",
        description = "Warm-up load before it, not measured (default: ${DEFAULT-VALUE}; with one event loop the"
            + " server's JIT compilers share its CPU, and after 10 s they were still compiling).")
    int warmup;

    @Option(names = "--threads", split = ",", defaultValue = "1,2", paramLabel = "N",
        description = "Server event-loop threads (default: ${DEFAULT-VALUE}); with 1 the server runs on CPU 0 and the"
            + " load generator on CPU 1 (taskset), otherwise both float.")
    List<Integer> threads;

    @Option(names = "--sizes", split = ",", defaultValue = "small,mixed", paramLabel = "SIZE",
        description = "small: 256 B answers; mixed: 256 B 40 %%, 2 KiB 25 %%, 8 KiB 15 %%, 24 KiB 10 %%, 60 KiB 8 %%,"
            + " 200 KiB 2 %% in a fixed server-side sequence; HTTP: GET /s or /m, gRPC: the methods Small or Mixed"
            + " (default: ${DEFAULT-VALUE}).")
    List<String> sizes;

    @Option(names = "--arms", split = ",", defaultValue = "pooled,adaptive,kmem4j", paramLabel = "ARM",
        description = "pooled (HTTP: -Dio.netty.allocator.type=pooled; gRPC: its default, its own PooledByteBufAllocator),"
            + " adaptive (HTTP: ...=adaptive; gRPC: -Dio.grpc.netty.shaded.io.grpc.netty.useCustomAllocator=false"
            + " -Dio.grpc.netty.shaded.io.netty.allocator.type=adaptive), kmem4j (the agent with --agent-options and the"
            + " server's default allocator); a gRPC run whose server reports another allocator class stops the"
            + " benchmark (default: ${DEFAULT-VALUE}).")
    List<String> arms;

    @Option(names = "--netty", split = ",", defaultValue = "4.2", paramLabel = "VERSION",
        description = "Netty lines of the HTTP server: 4.2 (the project's netty.version), 4.1 (netty41.version of the"
            + " parent pom); jars from benchmarks/target/netty-<line>. The gRPC server runs on grpc-netty-shaded's own"
            + " Netty (grpc.version of the parent pom; jars from benchmarks/target/grpc) (default: ${DEFAULT-VALUE}).")
    List<String> netty;

    @Option(names = "--jdk", split = ",", paramLabel = "HOME", description = "JDK homes (default: the running JDK).")
    List<Path> jdks;

    @Option(names = "--connections", defaultValue = "64", paramLabel = "N",
        description = "wrk's connections (one request outstanding on each); gRPC: the load client's outstanding calls"
            + " (default: ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--wrk-threads", defaultValue = "1", paramLabel = "N",
        description = "wrk's threads; gRPC: the load client's event-loop threads (default: ${DEFAULT-VALUE}).")
    int wrkThreads;

    @Option(names = "--grpc-channels", defaultValue = "4", paramLabel = "N",
        description = "The gRPC load client's channels, one HTTP/2 connection each, over which its --connections"
            + " outstanding calls are spread (call i on channel i mod N); 4 gives each of 1 or 2 event loops the same"
            + " number of connections (default: ${DEFAULT-VALUE}).")
    int grpcChannels;

    @Option(names = "--burst", defaultValue = "10000", paramLabel = "CONNECTIONS",
        description = "Connections of the burst, each holding half of a 32 KiB upload (HTTP: a POST; gRPC: a unary call's"
            + " message over raw HTTP/2); 0: no burst (default: ${DEFAULT-VALUE}).")
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
        description = "Where the servers' classes (classes/), the Netty jars (netty-4.1/, netty-4.2/), gRPC's (grpc/)"
            + " and the gRPC load client's (grpc-client/) are (default: ${DEFAULT-VALUE}).")
    Path target;

    @Option(names = "--no-pin", description = "Do not pin the 1-event-loop server and its load generator to CPUs 0 and 1.")
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
        final List<Protocol> chosen = protocols.stream().distinct().map(Protocol::of).toList();
        final int perCell = threads.size() * sizes.size() * rounds * arms.size();
        final int perRun = OVERHEAD_SECONDS + warmup + duration + idle + (burst > 0 ? BURST_SECONDS : 0);
        int total = 0;
        int seconds = 0;
        for (final Protocol p : chosen) {
            final int runs = homes.size() * lines(p).size() * perCell;
            total += runs;
            seconds += runs * (perRun + (p == Protocol.GRPC ? GRPC_OVERHEAD_SECONDS : 0));
        }
        progress(String.format(Locale.ROOT, "%d runs of about %d s each: about %.0f min", total, seconds / total,
            seconds / 60.0));
        final String loadBefore = Proc.loadAverage();
        final double busy = Proc.busyShare(2000);
        if (busy > BUSY_WARNING) {
            progress(String.format(Locale.ROOT, "the CPUs were %.0f %% busy in the 2 s before the start: something else"
                + " runs on this machine, and the figures will show it", busy * 100));
        }
        final long start = System.nanoTime();
        final List<ServerCell> cells = new ArrayList<>();
        final StringBuilder csv = new StringBuilder("jdk,protocol,netty,size,threads,round,arm,ok,rps,p50_us,p99_us,requests,"
            + "errors,bad_answers,cpu_ms,gc_count,gc_ms,rss_median,rss_max,rss_before,rss_peak,rss_2s,rss_5s,rss_10s,"
            + "burst_opened,burst_answered,allocator_used_direct_held,allocator_used_direct_after,kmem4j_buffers,kmem4j_passed,"
            + "failure,log\n");
        int done = 0;
        for (final Path home : homes) {
            final Path java = home.resolve("bin/java");
            final String jdk = Proc.jdkLabel(java);
            for (final Protocol protocol : chosen) {
                for (final String line : lines(protocol)) {
                    final String classPath = classPath(line);
                    for (final int t : threads) {
                        for (final String size : sizes) {
                            final List<List<ServerRun.Result>> runs = new ArrayList<>();
                            arms.forEach(a -> runs.add(new ArrayList<>()));
                            final boolean pin = canPin && t == 1;
                            String version = line;
                            for (int r = 0; r < rounds; r++) {
                                for (final int k : Rounds.order(arms.size(), r)) {
                                    final String arm = arms.get(k);
                                    final ServerRun.Settings settings = new ServerRun.Settings(java, armFlags(protocol, arm),
                                        classPath, protocol.serverClass, t, pin, load(protocol, java, size, pin ? 1 : -1), idle,
                                        protocol.upload, burst);
                                    final String tag = String.join("-", jdk, protocol == Protocol.HTTP ? "netty" + line
                                        : line, size, t + "t", "r" + (r + 1), arm);
                                    final ServerRun.Result res = ServerRun.run(settings,
                                        resultsDir.resolve(tag.replaceAll("[^A-Za-z0-9.+-]", "_") + ".log"));
                                    requireAllocator(protocol, arm, res);
                                    runs.get(k).add(res);
                                    version = res.netty().equals("?") ? version : res.netty();
                                    done++;
                                    progress(describe(done, total, jdk, protocol, version, size, t, r, arm, res));
                                    csv.append(csvLine(jdk, protocol, version, size, t, r, arm, res));
                                }
                            }
                            cells.add(new ServerCell(protocol, jdk, version, size, t, List.copyOf(arms), runs));
                        }
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

    /** @return the JVM flags of an arm: {@link #commonFlags()}, then its allocator's ({@link Protocol#allocatorFlags}) */
    List<String> armFlags(final Protocol protocol, final String arm) {
        final List<String> f = commonFlags();
        if (ServerCell.NETTY_ARMS.contains(arm)) {
            f.addAll(protocol.allocatorFlags(arm));
        } else {
            f.add("-javaagent:" + agent.toAbsolutePath() + "=" + agentOptions);
        }
        return f;
    }

    /** @return the Netty lines a protocol's server runs on: --netty for HTTP, gRPC's own jars for gRPC */
    List<String> lines(final Protocol protocol) {
        return protocol == Protocol.HTTP ? netty : List.of("grpc");
    }

    /** @return the server's class path for a Netty line or {@code grpc}: its classes and those jars */
    String classPath(final String line) {
        return target.resolve("classes").toAbsolutePath() + File.pathSeparator + jars(line.equals("grpc") ? line : "netty-" + line);
    }

    private String jars(final String dir) {
        return target.resolve(dir).toAbsolutePath() + File.separator + "*";
    }

    /** @return the load generator of a run: wrk for HTTP, the gRPC load client for gRPC; on {@code cpu} or floating (-1) */
    LoadGenerator.Factory load(final Protocol protocol, final Path java, final String size, final int cpu) {
        return protocol == Protocol.HTTP
            ? Wrk.load(cpu, wrkThreads, connections, warmup, duration, size.equals("small") ? "/s" : "/m")
            : GrpcLoad.load(java, classPath("grpc") + File.pathSeparator + jars("grpc-client"), cpu, size, grpcChannels,
                connections, wrkThreads, warmup, duration);
    }

    private static void atLeast(final CommandLine cl, final String option, final int value, final int min,
                                final String unit) {
        if (value < min) {
            throw new CommandLine.ParameterException(cl, option + ": " + value + " is not allowed; at least " + min + unit);
        }
    }

    /** A JVM memory size as {@code -Xmx} and {@code -XX:MaxDirectMemorySize} take it: digits and an optional k, m, g or t. */
    static boolean isJvmSize(final String size) {
        return size != null && size.matches("[0-9]+[kKmMgGtT]?");
    }

    private static void jvmSize(final CommandLine cl, final String option, final String size) {
        if (!isJvmSize(size)) {
            throw new CommandLine.ParameterException(cl, option + ": '" + size + "' is not a JVM memory size;"
                + " digits with an optional k, m, g or t, e.g. 128m");
        }
    }

    /**
     * Stops the benchmark when a server reports an allocator other than its arm's ({@link Protocol#expectedAllocator}):
     * the arm's flags did not do what the arm means, and every further run would measure the wrong thing.
     */
    static void requireAllocator(final Protocol protocol, final String arm, final ServerRun.Result res) {
        final String expected = protocol.expectedAllocator(arm);
        if (expected != null && !res.allocator().equals("?") && !res.allocator().equals(expected)) {
            throw new IllegalStateException(protocol.label + " arm " + arm + ": the server's channels use "
                + res.allocator() + ", not " + expected + " as the arm means; the arm's JVM flags do not select it"
                + " (log: " + res.log() + ")");
        }
    }

    private void validate() {
        final CommandLine cl = new CommandLine(this);
        requireKnown(cl, "--arms", arms, ARMS);
        requireKnown(cl, "--sizes", sizes, SIZES);
        requireKnown(cl, "--netty", netty, NETTY_VERSIONS);
        requireKnown(cl, "--protocol", protocols, Protocol.options());
        atLeast(cl, "--rounds", rounds, 1, "");
        atLeast(cl, "--duration", duration, 1, " (seconds)");
        atLeast(cl, "--warmup", warmup, 0, " (seconds)");
        atLeast(cl, "--idle", idle, 0, " (seconds)");
        atLeast(cl, "--burst", burst, 0, " (connections)");
        atLeast(cl, "--connections", connections, 1, "");
        atLeast(cl, "--wrk-threads", wrkThreads, 1, "");
        atLeast(cl, "--grpc-channels", grpcChannels, 1, "");
        for (final int t : threads) {
            atLeast(cl, "--threads", t, 1, " (event-loop threads)");
        }
        jvmSize(cl, "--heap", heap);
        jvmSize(cl, "--max-direct", maxDirect);
        final boolean http = protocols.contains(Protocol.HTTP.option);
        final boolean grpc = protocols.contains(Protocol.GRPC.option);
        if (grpc && connections < grpcChannels) {
            throw new CommandLine.ParameterException(cl, "--connections (the gRPC client's outstanding calls, "
                + connections + ") must be at least --grpc-channels (" + grpcChannels + "): a channel without a call is idle");
        }
        final String wrk = http ? Wrk.missing() : null;
        if (wrk != null) {
            throw new CommandLine.ParameterException(cl, wrk);
        }
        final List<Path> needed = new ArrayList<>();
        for (final String p : protocols) {
            needed.add(target.resolve("classes").resolve(Protocol.of(p).serverClass.replace('.', '/') + ".class"));
        }
        if (http) {
            netty.forEach(n -> needed.add(target.resolve("netty-" + n)));
        }
        if (grpc) {
            needed.addAll(List.of(target.resolve("grpc"), target.resolve("grpc-client")));
        }
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

    private static String describe(final int done, final int total, final String jdk, final Protocol protocol,
                                   final String netty, final String size, final int threads, final int round,
                                   final String arm, final ServerRun.Result r) {
        final double mb = 1024 * 1024;
        return String.format(Locale.ROOT, "%d/%d JDK %s %s Netty %s %s %d event loop(s) round %d %s: %s", done, total, jdk,
            protocol.label, netty, size, threads, round + 1, arm, r.load() == null ? "failed: " + r.failure()
                : String.format(Locale.ROOT, "%,.0f req/s, p99 %.2f ms, %.1f µs CPU/req, RSS %.0f MB under load%s%s",
                    r.rps(), r.p99Micros() / 1000, r.cpuMicrosPerRequest(), r.rssMedian() / mb, !r.burst() ? ""
                        : String.format(Locale.ROOT, "; burst %.0f → %.0f → %.0f MB (+10 s, %.2f×)", r.rssBefore() / mb,
                            r.rssPeak() / mb, r.rssLast() / mb, r.burstRatio()),
                    r.ok() ? "" : "; does not count: " + r.failure()));
    }

    static String csvLine(final String jdk, final Protocol protocol, final String netty, final String size,
                          final int threads, final int round, final String arm, final ServerRun.Result r) {
        final LoadResult w = r.load();
        final List<Object> v = new ArrayList<>(List.of(jdk, protocol.option, netty.replace(',', ';'), size, threads,
            round + 1, arm, r.ok(), r.rps(), w == null ? Double.NaN : w.p50Micros(), r.p99Micros(),
            w == null ? 0 : w.requests(), w == null ? 0 : w.errors(), w == null ? 0 : w.badAnswers(), r.cpuMillis(),
            r.gcCount(), r.gcMillis(),
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
            .append("` (in effect: `--rounds=").append(rounds).append(" --duration=").append(duration)
            .append(" --warmup=").append(warmup).append(" --idle=").append(idle).append(" --burst=").append(burst)
            .append(" --connections=").append(connections).append("`) on ").append(ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z")))
            .append(String.format(Locale.ROOT, " (%.1f min, %d CPUs)", minutes, Runtime.getRuntime().availableProcessors()))
            .append(". Load average before / after: ").append(loadBefore).append(" / ").append(loadAfter).append(".\n\n");
        final boolean http = protocols.contains(Protocol.HTTP.option);
        final boolean grpc = protocols.contains(Protocol.GRPC.option);
        if (http) {
            b.append("A Netty HTTP/1.1 server (`HttpServerCodec`, keep-alive, NIO; every answer a direct buffer from the")
                .append(" channel's allocator, filled by the handler) under `wrk -t").append(wrkThreads).append(" -c")
                .append(connections).append(" -d").append(duration).append("s --latency` after a ").append(warmup)
                .append(" s warm-up.").append(grpc ? " " : "\n\n");
        }
        if (grpc) {
            b.append("A gRPC unary server (grpc-netty-shaded, gRPC's relocated Netty; NIO, `directExecutor()`, no")
                .append(" protobuf: `byte[]` messages, which gRPC copies into buffers of the channel's allocator) under a")
                .append(" grpc-java load client in a second JVM (`").append(String.join(" ", GrpcLoad.JVM_FLAGS))
                .append("`, no agent, gRPC's default allocator): ").append(connections)
                .append(" outstanding unary calls in a closed loop over ").append(grpcChannels)
                .append(" channels (HTTP/2 connections), the client on ").append(wrkThreads).append(" event-loop thread")
                .append(wrkThreads == 1 ? "" : "s").append(", ").append(duration).append(" s measured after a ")
                .append(warmup).append(" s warm-up in the same JVM, latencies in an HdrHistogram.\n\n");
        }
        b.append("`small` answers 256 B, `mixed` 256 B 40 %, 2 KiB 25 %, 8 KiB 15 %, 24 KiB 10 %, 60 KiB 8 %, 200 KiB 2 %")
            .append(" (a fixed sequence). Arms, the same ").append(rounds)
            .append(" interleaved rounds (the order rotates each round): `pooled` (");
        if (http) {
            b.append(grpc ? "HTTP: " : "").append("`-Dio.netty.allocator.type=pooled`").append(grpc ? "; " : "");
        }
        if (grpc) {
            b.append(http ? "gRPC: " : "").append("gRPC's default, its own `PooledByteBufAllocator`");
        }
        b.append("), `adaptive` (");
        if (http) {
            b.append(grpc ? "HTTP: " : "").append("`...=adaptive`").append(grpc ? "; " : "");
        }
        if (grpc) {
            b.append(http ? "gRPC: " : "").append('`').append(String.join(" ", Protocol.GRPC.allocatorFlags("adaptive")))
                .append("`, Netty's default allocator instead of gRPC's own, adaptive");
        }
        b.append("), `kmem4j` (`-javaagent:kmem4j-agent.jar=").append(agentOptions).append("`, the server's default")
            .append(" allocator: ").append(http ? "the Netty version's" : "").append(http && grpc ? ", " : "")
            .append(grpc ? "gRPC's own pooled one" : "").append(")");
        if (grpc) {
            b.append("; every gRPC server reported the allocator class of its accepted connections, and it was the arm's");
        }
        b.append("; every arm `").append(String.join(" ", commonFlags())).append("` and Netty's default leak detection.")
            .append(" With 1 event loop ")
            .append(pinned ? "the server runs on CPU 0 and its load generator on CPU 1 (`taskset`; the JVMs then see one"
                + " CPU and pick Serial GC)" : "nothing is pinned").append("; with 2 both float over all CPUs.\n\n");
        b.append("Figures are medians over rounds; `× better Netty` is the median over rounds of the arm's figure divided")
            .append(" by the same round's figure of the better Netty allocator of the cell, the one of `pooled` and `adaptive`")
            .append(" with the higher median req/s (its p99 and CPU too: the issue's \"at most its p99\"; a better of two")
            .append(" arms taken per round and per figure would set one sample against the best of two); in the goals the range after it is the")
            .append(" lowest and the highest round's ratio, and server CPU per request (no goal of the issue) says what")
            .append(" req/s cannot where the load generator, not the server, is the limit. Server CPU is user + system time of")
            .append(" the server process during the measured run per request; GCs and their time: the server's during the")
            .append(" measured run. RSS is `VmRSS`: under load sampled every")
            .append(" 100 ms; the burst: after ").append(idle).append(" s idle (*before*), ").append(burst)
            .append(" connections each send ");
        if (http) {
            b.append(grpc ? "(HTTP) " : "").append("the head and 16 KiB of a 32 KiB `POST` to an `HttpObjectAggregator`")
                .append(grpc ? ", " : "");
        }
        if (grpc) {
            b.append(http ? "(gRPC) " : "").append("over raw HTTP/2 the HEADERS of a unary call and the first 16 KiB of its")
                .append(" 32 KiB message, which gRPC's deframer holds in the received buffers until the message is whole");
        }
        b.append(", are held 1 s, then completed, answered and closed (*peak*: the highest sample meanwhile), then +2,")
            .append(" +5 and +10 s after the last close, the server idle. *Still resident*: (RSS +10 s − before) / (peak −")
            .append(" before). Logs and every run's figures: `").append(resultsDir).append("/`.\n\n");
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
