package io.kmem4j.agent.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import io.kmem4j.agent.pool.PoolSpec;
import io.kmem4j.agent.pool.Presets;
import io.kmem4j.core.SlabAllocatorConfig;

/**
 * The agent's settings, read from four sources. Precedence, highest first:
 * <ol>
 *   <li>agent arguments: {@code -javaagent:kmem4j-agent.jar=key=value,key=value}</li>
 *   <li>system properties: {@code -Dkmem4j.key=value}</li>
 *   <li>environment: {@code KMEM4J_KEY=value}, the key in upper snake case
 *       ({@code chunkSizeBytes} is {@code KMEM4J_CHUNK_SIZE_BYTES})</li>
 *   <li>a properties file named by {@code configFile} (from any source above)</li>
 * </ol>
 * Every value is validated; a bad value, or an unknown key in the agent arguments or the file,
 * throws {@link IllegalArgumentException} naming the key, the value and what is allowed. Only known
 * keys are read from system properties and the environment; an unknown {@code -Dkmem4j.*} property
 * is listed in {@link #unknownSystemProperties} for a warning (the prefix is shared with other tools).
 */
public final class AgentConfig {
    /** Keys the agent itself reads; the allocator's keys come from {@link SlabAllocatorConfig}. */
    static final String ENABLED = "enabled";
    static final String SUMMARY = "summary";
    static final String LOG_LEVEL = "logLevel";
    static final String CONFIG_FILE = "configFile";
    static final String OWNED_LIFECYCLE = "ownedLifecycle";
    static final String TRIM_NATIVE_HEAP = "trimNativeHeap";
    static final String PRESETS = "presets";
    static final String POOLS = "pools";
    static final String EXCLUDE_CALLERS = "excludeCallers";
    static final String NETTY_MAX_SIZE_CLASS_BYTES = "nettyMaxSizeClassBytes";
    /**
     * The default largest size class of the allocator behind Netty's buffers: 256 KiB, above the
     * agent's 64 KiB, because Netty's allocators pool such buffers too and its adaptive allocator
     * (Netty 4.2's default, which gets what kmem4j leaves) makes a zeroed buffer for each one above its
     * own classes (measured: an HTTP server answering 2 % of its requests with 200 KiB spent 1 % of its
     * CPU zeroing them).
     */
    public static final int NETTY_MAX_SIZE_CLASS_DEFAULT = 256 << 10;
    /** {@code io.kmem4j.agent.}: the agent's packages (this one's parent), whatever they are relocated to. */
    private static final String AGENT_PACKAGES =
        AgentConfig.class.getPackageName().substring(0, AgentConfig.class.getPackageName().lastIndexOf('.') + 1);
    /** Keys whose value is a list: in the agent arguments a part without {@code =} continues their value. */
    private static final java.util.Set<String> LIST_KEYS = java.util.Set.of(PRESETS, POOLS, EXCLUDE_CALLERS);

    /** {@code kmem4j.*} system properties read elsewhere (debug mode and the unsupported-JDK test switch). */
    private static final java.util.Set<String> NOT_SETTINGS = java.util.Set.of("debug", "simulateUnsupportedJdk");

    public final boolean enabled;
    public final boolean summary;
    public final String logLevel;
    /** Keep tracked buffers' JDK cleaners out of the JDK's list ({@code ownedLifecycle}, default true). */
    public final boolean ownedLifecycle;
    /** After kmem4j gives chunks back, have the JVM trim the C heap ({@code trimNativeHeap}, default true). */
    public final boolean trimNativeHeap;
    public final SlabAllocatorConfig allocator;
    /** The pools kmem4j serves: the presets' first, then {@code pools}. */
    public final java.util.List<PoolSpec> pools;
    /** Package prefixes whose {@code allocateDirect} call sites go to the JDK ({@code excludeCallers}). */
    public final java.util.List<String> excludeCallers;
    /** {@code presets=netty-allocator}: Netty's pooled and adaptive direct buffers from kmem4j. */
    public final boolean nettyAllocator;
    /**
     * The allocator behind Netty's buffers ({@link #nettyAllocatorConfig}); {@code null} without
     * {@code presets=netty-allocator}.
     */
    public final SlabAllocatorConfig nettyAllocatorConfig;
    /** {@code nettyMaxSizeClassBytes} was set without {@code presets=netty-allocator} (a warning at start). */
    public final boolean nettyMaxSizeClassIgnored;
    public final Map<String, String> effective;
    /**
     * {@code -Dkmem4j.*} properties that are not settings. Other tools share the prefix, so these are
     * reported with one warning instead of failing start-up (agent arguments and the file are strict).
     */
    public final java.util.List<String> unknownSystemProperties = new java.util.ArrayList<>();
    /**
     * {@code KMEM4J_*} environment variables that are not settings (a misspelt {@code KMEM4J_SUMARY}
     * was ignored without a word: trial finding), reported with one warning as the properties are;
     * the build's own {@link #BUILD_VARIABLES} are not listed.
     */
    public final java.util.List<String> unknownEnvironmentVariables = new java.util.ArrayList<>();
    /** Environment variables of kmem4j's build and tests (README, Supported JDKs), not agent settings. */
    static final java.util.Set<String> BUILD_VARIABLES = java.util.Set.of("KMEM4J_TEST_JDKS", "KMEM4J_SMOKE_JDKS");

    private AgentConfig(final boolean enabled, final boolean summary, final String logLevel,
                        final boolean ownedLifecycle, final boolean trimNativeHeap, final SlabAllocatorConfig allocator,
                        final java.util.List<PoolSpec> pools,
                        final java.util.List<String> excludeCallers, final boolean nettyAllocator,
                        final SlabAllocatorConfig nettyAllocatorConfig, final boolean nettyMaxSizeClassIgnored,
                        final Map<String, String> effective) {
        this.enabled = enabled;
        this.summary = summary;
        this.logLevel = logLevel;
        this.ownedLifecycle = ownedLifecycle;
        this.trimNativeHeap = trimNativeHeap;
        this.allocator = allocator;
        this.pools = pools;
        this.excludeCallers = excludeCallers;
        this.nettyAllocator = nettyAllocator;
        this.nettyAllocatorConfig = nettyAllocatorConfig;
        this.nettyMaxSizeClassIgnored = nettyMaxSizeClassIgnored;
        this.effective = effective;
    }

    /** Reads the configuration from the agent arguments, system properties and environment. */
    public static AgentConfig load(final String agentArgs) {
        return load(agentArgs, System.getProperties(), System.getenv());
    }

    public static AgentConfig load(final String agentArgs, final Properties sysProps, final Map<String, String> env) {
        final java.util.List<String> unknownProperties = new java.util.ArrayList<>();
        final Map<String, String> sources = new java.util.HashMap<>();
        Map<String, String> merged = Map.of();
        final AgentConfig config;
        try {
            merged = merge(agentArgs, sysProps, env, unknownProperties, sources);
            config = fromMap(merged);
        } catch (final IllegalArgumentException e) {
            throw naming(e, merged, sources);
        }
        config.unknownSystemProperties.addAll(unknownProperties);
        final java.util.Set<String> names = new java.util.HashSet<>(BUILD_VARIABLES);
        names.addAll(knownEnvironmentNames());
        for (final String name : env.keySet()) {
            if (name.startsWith("KMEM4J_") && !names.contains(name)) {
                config.unknownEnvironmentVariables.add(name);
            }
        }
        java.util.Collections.sort(config.unknownEnvironmentVariables);
        return config;
    }

    /**
     * An invalid setting is named as it was given ({@code chunkSizeBytes=300k}, not the number it was
     * read as, which the allocator's check sees), and one that came from the environment, a system
     * property or the configuration file says where it came from: the agent arguments are what a user
     * reads first, and a stale {@code KMEM4J_...} variable is easy to forget (trial findings).
     */
    private static IllegalArgumentException naming(final IllegalArgumentException e, final Map<String, String> merged,
                                                   final Map<String, String> sources) {
        final String message = e.getMessage();
        if (message == null) {
            return e;
        }
        for (final Map.Entry<String, String> v : merged.entrySet()) {
            final String setting = "setting " + v.getKey() + "=";
            final int at = message.indexOf(setting);
            if (at < 0) {
                continue;
            }
            final int from = at + setting.length();
            final int to = message.indexOf(" (", from) < 0 ? message.length() : message.indexOf(" (", from);
            final String shown = message.substring(from, to);
            final String given = v.getValue().trim();
            String named = shown.matches("-?[0-9]+") && !shown.equals(given)
                ? message.substring(0, from) + given + message.substring(to) : message;
            final String source = sources.get(v.getKey());
            if (source != null) {
                named += "; set by " + source;
            }
            if (named.equals(message)) {
                return e;
            }
            final IllegalArgumentException renamed = new IllegalArgumentException(named);
            renamed.setStackTrace(e.getStackTrace());
            return renamed;
        }
        return e;
    }

    /**
     * Whether the settings ask for {@code summary=true}, read without checking the others: an agent
     * whose configuration is invalid still prints its one summary line at exit when asked to.
     *
     * @return true for {@code summary=true} from any source (from the arguments alone when the
     *         configuration file cannot be read); false when absent, false or unreadable
     */
    public static boolean summaryRequested(final String agentArgs, final Properties sysProps, final Map<String, String> env) {
        try {
            String v;
            try {
                v = merge(agentArgs, sysProps, env, new java.util.ArrayList<>(), new java.util.HashMap<>()).get(SUMMARY);
            } catch (final RuntimeException unreadableOrRepeated) {
                // a configFile that cannot be read, or a key given twice: the arguments' summary values alone,
                // true when every one says true (a summary=true beside a repeated other key still prints)
                boolean any = false;
                for (final String part : agentArgs == null ? new String[0] : agentArgs.split(",")) {
                    final int eq = part.indexOf('=');
                    if (eq > 0 && SUMMARY.equals(part.substring(0, eq).trim())) {
                        if (!"true".equalsIgnoreCase(part.substring(eq + 1).trim())) {
                            return false;
                        }
                        any = true;
                    }
                }
                return any;
            }
            return v != null && "true".equalsIgnoreCase(v.trim());
        } catch (final Throwable unreadable) {
            return false; // never in the way of the agent's start
        }
    }

    /**
     * The settings of every source, later sources winning: file, environment, system properties, arguments.
     *
     * @param sources filled with where each setting that is not an agent argument came from
     */
    private static Map<String, String> merge(final String agentArgs, final Properties sysProps, final Map<String, String> env,
                                             final java.util.List<String> unknownProperties,
                                             final Map<String, String> sources) {
        final Map<String, String> args = parseArgs(agentArgs);
        final Map<String, String> merged = new LinkedHashMap<>();
        final String file = firstOf(CONFIG_FILE, args, sysProps, env);
        if (file != null) {
            for (final Map.Entry<String, String> e : readFile(file).entrySet()) {
                merged.put(e.getKey(), e.getValue());
                sources.put(e.getKey(), "the configuration file " + file);
            }
        }
        for (final String key : knownKeys()) {
            final String envValue = env.get(envName(key));
            if (envValue != null) {
                merged.put(key, envValue);
                sources.put(key, "the environment variable " + envName(key));
            }
        }
        final java.util.List<String> known = new java.util.ArrayList<>();
        for (final String k : knownKeys()) { // a loop, not known::add: no lambda spun in premain
            known.add(k);
        }
        for (final String name : sysProps.stringPropertyNames()) {
            if (!name.startsWith("kmem4j.")) {
                continue;
            }
            final String key = name.substring("kmem4j.".length());
            if (known.contains(key)) {
                merged.put(key, sysProps.getProperty(name));
                sources.put(key, "-D" + name);
            } else if (!NOT_SETTINGS.contains(key)) {
                unknownProperties.add(name);
            }
        }
        merged.putAll(args);
        for (final String key : args.keySet()) {
            sources.remove(key); // the agent's own arguments: named as they are
        }
        merged.remove(CONFIG_FILE);
        return merged;
    }

    static AgentConfig fromMap(final Map<String, String> values) {
        boolean enabled = true;
        boolean summary = false;
        String logLevel = "info";
        boolean ownedLifecycle = true;
        boolean trimNativeHeap = true;
        boolean nettyAllocator = false;
        long nettyMaxSizeClassBytes = -1;
        final java.util.List<PoolSpec> presets = new java.util.ArrayList<>();
        final java.util.List<PoolSpec> userPools = new java.util.ArrayList<>();
        final java.util.List<String> excludeCallers = new java.util.ArrayList<>();
        final Map<String, String> lists = new LinkedHashMap<>();
        final SlabAllocatorConfig.Builder b = SlabAllocatorConfig.builder();
        for (final Map.Entry<String, String> e : values.entrySet()) {
            final String key = e.getKey();
            final String value = e.getValue().trim();
            switch (key) {
                case ENABLED:
                    enabled = parseBoolean(key, value);
                    break;
                case SUMMARY:
                    summary = parseBoolean(key, value);
                    break;
                case LOG_LEVEL:
                    logLevel = parseLevel(key, value);
                    break;
                case OWNED_LIFECYCLE:
                    ownedLifecycle = parseBoolean(key, value);
                    break;
                case TRIM_NATIVE_HEAP:
                    trimNativeHeap = parseBoolean(key, value);
                    break;
                case PRESETS:
                    presets.addAll(parseList(key, value, Presets::resolve,
                        "preset names separated by ',' or ';', from: " + String.join(", ", Presets.names())));
                    nettyAllocator |= Presets.nettyAllocator(value);
                    lists.put(key, value);
                    break;
                case POOLS:
                    userPools.addAll(parseList(key, value, PoolSpec::parsePools, "pools separated by ';', each"
                        + " Class#method(types)/Class#method(types)[/...], a release may end in +original"));
                    lists.put(key, value);
                    break;
                case NETTY_MAX_SIZE_CLASS_BYTES:
                    nettyMaxSizeClassBytes = parseNettyMaxSizeClass(key, value);
                    break;
                case EXCLUDE_CALLERS:
                    excludeCallers.addAll(parseList(key, value, AgentConfig::packagePrefixes,
                        "package prefixes separated by ',' or ';', e.g. com.acme."));
                    lists.put(key, value);
                    break;
                default:
                    if (!SlabAllocatorConfig.keys().contains(key)) {
                        throw new IllegalArgumentException("unknown kmem4j setting " + key + "=" + value
                            + " (known: " + String.join(", ", knownKeys()) + ")");
                    }
                    b.set(key, value); // the allocator's keys: parsed and checked by the allocator's configuration
            }
        }
        // the interceptor's and pool router's frames are no sites; nor are Netty's allocators' (netty-allocator)
        b.siteFramesToSkip(nettyAllocator ? java.util.List.of(AGENT_PACKAGES, "io.netty.buffer.",
            "io.grpc.netty.shaded.io.netty.buffer.") : java.util.List.of(AGENT_PACKAGES));
        final SlabAllocatorConfig allocator = b.build();
        final SlabAllocatorConfig netty = nettyAllocator ? nettyAllocatorConfig(allocator, nettyMaxSizeClassBytes) : null;
        final Map<String, String> effective = new LinkedHashMap<>();
        effective.put(ENABLED, Boolean.toString(enabled));
        effective.put(SUMMARY, Boolean.toString(summary));
        effective.put(LOG_LEVEL, logLevel);
        effective.put(OWNED_LIFECYCLE, Boolean.toString(ownedLifecycle));
        effective.put(TRIM_NATIVE_HEAP, Boolean.toString(trimNativeHeap));
        effective.putAll(allocator.asMap());
        effective.putAll(lists);
        if (netty != null) {
            effective.put(NETTY_MAX_SIZE_CLASS_BYTES, Integer.toString(netty.maxSizeClassBytes()));
        }
        final java.util.List<PoolSpec> pools = new java.util.ArrayList<>(presets);
        pools.addAll(userPools);
        return new AgentConfig(enabled, summary, logLevel, ownedLifecycle, trimNativeHeap, allocator,
            java.util.List.copyOf(pools),
            java.util.List.copyOf(excludeCallers), nettyAllocator, netty, !nettyAllocator && nettyMaxSizeClassBytes >= 0,
            Collections.unmodifiableMap(effective));
    }

    private static long parseNettyMaxSizeClass(final String key, final String value) {
        final String allowed = "a size in [" + SlabAllocatorConfig.MIN_SIZE_CLASS_BYTES + ", "
            + SlabAllocatorConfig.MAX_SIZE_CLASS_BYTES + "], e.g. 262144 or 256k";
        final long bytes;
        try {
            bytes = SlabAllocatorConfig.parseSize(value);
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("invalid kmem4j setting " + key + "=" + value + " (allowed: " + allowed + ")");
        }
        if (bytes < SlabAllocatorConfig.MIN_SIZE_CLASS_BYTES || bytes > SlabAllocatorConfig.MAX_SIZE_CLASS_BYTES) {
            throw new IllegalArgumentException("invalid kmem4j setting " + key + "=" + value + " (allowed: " + allowed + ")");
        }
        return bytes;
    }

    /**
     * The configuration of the allocator behind Netty's buffers ({@code presets=netty-allocator}): the
     * agent's settings, no zeroing (Netty's pooled contract: a buffer holds what its last user left),
     * and {@code nettyMaxSizeClassBytes} as its largest size class; Netty buffers above it stay Netty's.
     *
     * @param agent                  the agent's allocator configuration
     * @param nettyMaxSizeClassBytes the largest class asked for, or -1 for the default: {@link
     *                               #NETTY_MAX_SIZE_CLASS_DEFAULT} or the agent's {@code maxSizeClassBytes}
     *                               if larger, or the agent's when a slab of the default's does not fit
     *                               the agent's {@code chunkSizeBytes}
     * @throws IllegalArgumentException naming {@code nettyMaxSizeClassBytes} when a slab of the class
     *                               asked for does not fit a chunk
     */
    public static SlabAllocatorConfig nettyAllocatorConfig(final SlabAllocatorConfig agent, final long nettyMaxSizeClassBytes) {
        if (nettyMaxSizeClassBytes < 0) {
            try {
                return nettyCopy(agent).maxSizeClassBytes(Math.max(NETTY_MAX_SIZE_CLASS_DEFAULT, agent.maxSizeClassBytes()))
                    .build();
            } catch (final IllegalArgumentException chunkTooSmall) {
                return nettyCopy(agent).build(); // a chunkSizeBytes too small for the default's slabs: the agent's classes
            }
        }
        if (nettyMaxSizeClassBytes < agent.minCapacityBytes()) {
            throw new IllegalArgumentException("invalid kmem4j setting " + NETTY_MAX_SIZE_CLASS_BYTES + "="
                + nettyMaxSizeClassBytes + " (allowed: at least minCapacityBytes=" + agent.minCapacityBytes() + ")");
        }
        try {
            return nettyCopy(agent).maxSizeClassBytes(nettyMaxSizeClassBytes).build();
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid kmem4j setting " + NETTY_MAX_SIZE_CLASS_BYTES + "="
                + nettyMaxSizeClassBytes + " (allowed: a largest class whose slab, 8 objects and at most 4 MiB, fits"
                + " chunkSizeBytes=" + agent.chunkSizeBytes() + ", or a larger chunkSizeBytes)", e);
        }
    }

    private static SlabAllocatorConfig.Builder nettyCopy(final SlabAllocatorConfig agent) {
        final SlabAllocatorConfig.Builder b = SlabAllocatorConfig.builder();
        for (final Map.Entry<String, String> e : agent.asMap().entrySet()) {
            b.set(e.getKey(), e.getValue());
        }
        return b.siteFramesToSkip(agent.siteFramesToSkip()).zeroing(false);
    }

    public static Iterable<String> knownKeys() {
        final java.util.List<String> keys = new java.util.ArrayList<>(java.util.List.of(ENABLED, SUMMARY, LOG_LEVEL, CONFIG_FILE,
            OWNED_LIFECYCLE, TRIM_NATIVE_HEAP));
        keys.addAll(SlabAllocatorConfig.keys());
        keys.add(PRESETS);
        keys.add(NETTY_MAX_SIZE_CLASS_BYTES);
        keys.add(POOLS);
        keys.add(EXCLUDE_CALLERS);
        return keys;
    }

    /** @return the environment variable of every setting ({@link #envName}), in {@link #knownKeys()} order */
    public static java.util.List<String> knownEnvironmentNames() {
        final java.util.List<String> names = new java.util.ArrayList<>();
        for (final String key : knownKeys()) {
            names.add(envName(key));
        }
        return names;
    }

    /** {@code chunkSizeBytes} -> {@code KMEM4J_CHUNK_SIZE_BYTES}: an underscore before each capital that follows a lower-case letter or a digit. */
    static String envName(final String key) {
        final StringBuilder b = new StringBuilder(key.length() + 12).append("KMEM4J_");
        for (int i = 0; i < key.length(); i++) {
            final char c = key.charAt(i);
            if (i > 0 && c >= 'A' && c <= 'Z') {
                final char p = key.charAt(i - 1);
                if (p >= 'a' && p <= 'z' || p >= '0' && p <= '9') {
                    b.append('_');
                }
            }
            b.append(c);
        }
        return b.toString().toUpperCase(Locale.ROOT); // a loop, not replaceAll: a regex costs some 5 ms of start-up
    }

    static Map<String, String> parseArgs(final String agentArgs) {
        final Map<String, String> out = new LinkedHashMap<>();
        if (agentArgs == null || agentArgs.isBlank()) {
            return out;
        }
        String listKey = null;
        for (final String part : agentArgs.split(",")) {
            if (part.isBlank()) {
                continue;
            }
            final int eq = part.indexOf('=');
            if (eq < 0 && listKey != null) {
                out.put(listKey, out.get(listKey) + "," + part.trim()); // presets=a,b or (java.nio.ByteBuffer,int)
                continue;
            }
            if (eq <= 0) {
                throw new IllegalArgumentException("invalid kmem4j agent argument '" + part
                    + "' (expected key=value[,key=value...])");
            }
            final String key = part.substring(0, eq).trim();
            final String earlier = out.put(key, part.substring(eq + 1).trim());
            if (earlier != null) {
                // which one was meant cannot be known: say so instead of taking the last (trial finding)
                throw new IllegalArgumentException("kmem4j setting " + key + " is given twice in the agent arguments ("
                    + key + "=" + earlier + " and " + part.trim() + "); give it once");
            }
            listKey = LIST_KEYS.contains(key) ? key : null;
        }
        return out;
    }

    private static <T> java.util.List<T> parseList(final String key, final String value,
                                                   final java.util.function.Function<String, java.util.List<T>> parser,
                                                   final String allowed) {
        try {
            return parser.apply(value);
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid kmem4j setting " + key + "=" + value + " (" + e.getMessage()
                + "; allowed: " + allowed + ")");
        }
    }

    /** {@code com.acme.,org.foo.} -> the prefixes; each a dotted Java package prefix. */
    static java.util.List<String> packagePrefixes(final String value) {
        final java.util.List<String> out = new java.util.ArrayList<>();
        for (final String raw : value.split("[,;]")) {
            final String p = raw.trim();
            if (p.isEmpty()) {
                continue;
            }
            if (!p.matches("[\\p{L}_$][\\p{L}\\p{N}_$.]*")) {
                throw new IllegalArgumentException("'" + p + "' is not a package prefix");
            }
            out.add(p);
        }
        return out;
    }

    private static String firstOf(final String key, final Map<String, String> args, final Properties sys,
                                  final Map<String, String> env) {
        if (args.containsKey(key)) {
            return args.get(key);
        }
        final String p = sys.getProperty("kmem4j." + key);
        return p != null ? p : env.get(envName(key));
    }

    private static Map<String, String> readFile(final String file) {
        final Properties p = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(file))) {
            p.load(in);
        } catch (final IOException | RuntimeException e) {
            throw new IllegalArgumentException("invalid kmem4j setting " + CONFIG_FILE + "=" + file
                + " (allowed: a readable properties file; " + e + ")");
        }
        final Map<String, String> out = new LinkedHashMap<>();
        for (final String name : p.stringPropertyNames()) {
            final String key = name.startsWith("kmem4j.") ? name.substring("kmem4j.".length()) : name;
            if (CONFIG_FILE.equals(key)) {
                // it was ignored without a word (trial finding): files do not name further files
                throw new IllegalArgumentException("invalid kmem4j setting " + CONFIG_FILE + "=" + p.getProperty(name)
                    + " in the configuration file " + file + " (allowed: only as an agent argument, -Dkmem4j."
                    + CONFIG_FILE + " or " + envName(CONFIG_FILE) + "; a file does not name another)");
            }
            out.put(key, p.getProperty(name));
        }
        return out;
    }

    private static boolean parseBoolean(final String key, final String value) {
        if ("true".equalsIgnoreCase(value)) {
            return true;
        }
        if ("false".equalsIgnoreCase(value)) {
            return false;
        }
        throw new IllegalArgumentException("invalid kmem4j setting " + key + "=" + value + " (allowed: true, false)");
    }

    private static String parseLevel(final String key, final String value) {
        final String v = value.toLowerCase(Locale.ROOT);
        switch (v) {
            case "trace":
            case "debug":
            case "info":
            case "warn":
            case "error":
            case "off":
                return v;
            default:
                throw new IllegalArgumentException("invalid kmem4j setting " + key + "=" + value
                    + " (allowed: trace, debug, info, warn, error, off)");
        }
    }

    /** Parses {@code 4096}, {@code 64k}, {@code 4m}, {@code 1g} (binary units): {@link SlabAllocatorConfig#parseSize}. */
    static long parseSize(final String value) {
        return SlabAllocatorConfig.parseSize(value);
    }
}
