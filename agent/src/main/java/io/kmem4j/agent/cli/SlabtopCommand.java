package io.kmem4j.agent.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.Charset;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.Attribute;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import com.sun.tools.attach.VirtualMachine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code slabtop <pid> [--interval 1s] [--sort active|size|allocs] [--once]}: shows the kmem4j
 * caches of a running JVM like Linux {@code slabtop}, read from its {@code kmem4j:type=Allocator}
 * and {@code kmem4j:type=SlabCache} MXBeans over the target's local JMX connector (Attach API,
 * {@code startLocalManagementAgent()}; the target needs no JMX flags). Refreshes until Ctrl-C, end
 * of stdin or a line {@code q}; {@code --once} prints one snapshot without escape codes.
 * Exit status 0, 1 when the pid cannot be attached, has no kmem4j agent or one whose interception is
 * off ({@code Enabled=false}: its {@code DisabledReason} is printed), 2 for a usage error.
 */
@Command(name = "slabtop", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Show the kmem4j slab caches of a running JVM, like Linux slabtop (read over JMX via the Attach API).",
        "Refreshes until Ctrl-C, end of stdin, or a line 'q'; --once prints one snapshot for scripts."})
final class SlabtopCommand implements Callable<Integer> {
    /** Clear the screen and home the cursor (ANSI). */
    static final String CLEAR = "\033[H\033[2J";
    private static final Duration MIN_INTERVAL = Duration.ofMillis(100);
    private static final int CONSISTENT_READ_ATTEMPTS = 10;
    /** A target up for longer than this has registered its kmem4j beans already, if it has any. */
    private static final long JUST_STARTED_MILLIS = 15_000;
    private static final String[] ALLOCATOR_ATTRIBUTES = {"SnapshotSequence", "Allocations", "Frees", "LiveBuffers",
        "BytesInUse", "BytesReserved", "MagazineHitRate", "Fallbacks"};
    private static final String[] CACHE_ATTRIBUTES = {"SnapshotSequence", "Name", "TotalObjects", "ActiveObjects",
        "ObjectSize", "Slabs", "PartialSlabs", "ObjectsPerSlab", "PagesPerSlab", "SlabBytes", "Allocations"};

    @Parameters(index = "0", description = "process id of the target JVM")
    long pid;

    @Option(names = "--interval", defaultValue = "1s", converter = IntervalConverter.class,
        description = "time between refreshes: 500ms, 1s, 2.5s, 1m (default ${DEFAULT-VALUE}, at least 100ms)")
    Duration interval;

    @Option(names = "--sort", defaultValue = "active", converter = SortConverter.class,
        description = "row order: active (active objects), size (cache size), allocs (allocations since start);"
            + " default ${DEFAULT-VALUE}")
    Slabtop.Sort sort;

    @Option(names = "--once", description = "print one snapshot and exit (no screen control codes)")
    boolean once;

    @Option(names = "--wait", defaultValue = "2",
        description = "seconds to wait for kmem4j:type=Allocator to appear in a JVM that started less than 15 s ago"
            + " (default ${DEFAULT-VALUE})")
    int waitSeconds;

    @Option(names = "--allocator", paramLabel = "NAME",
        description = "a second allocator of the agent, by name: netty (the buffers of presets=netty-allocator);"
            + " default: the allocator behind ByteBuffer.allocateDirect")
    String allocatorName;

    private final PrintStream out;
    private final PrintStream err;

    SlabtopCommand() {
        this(System.out, System.err);
    }

    SlabtopCommand(final PrintStream out, final PrintStream err) {
        this.out = out;
        this.err = err;
    }

    @Override
    public Integer call() throws Exception {
        // bound every JMX call (RMI waits forever otherwise); must be set before RMI's classes load
        if (System.getProperty("sun.rmi.transport.tcp.responseTimeout") == null) {
            System.setProperty("sun.rmi.transport.tcp.responseTimeout", "30000");
        }
        if (allocatorName != null && !allocatorName.matches("[A-Za-z0-9_.-]+")) {
            err.println("kmem4j: --allocator='" + allocatorName + "' is not an allocator name (letters, digits, '_', '.',"
                + " '-'; e.g. netty)");
            return 2;
        }
        final String address;
        try {
            final VirtualMachine vm = AttachTarget.attach(pid);
            try {
                // enabled=false registers no bean: say so rather than "no kmem4j agent, attach it"
                final String disabled = Off.startedDisabled(vm.getSystemProperties(), pid);
                if (disabled != null) {
                    err.println(disabled + "; no slabs to show (restart it without enabled=false)");
                    return 1;
                }
                address = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
        } catch (final AttachTarget.Refused refused) {
            err.println("kmem4j: cannot attach to pid " + pid + ": " + refused.getMessage());
            return 1;
        } catch (final Exception e) {
            err.println("kmem4j: cannot attach to pid " + pid + ": " + e.getMessage()
                + " (is it a running JVM of the same user?)");
            return 1;
        }
        try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
            final MBeanServerConnection server = connector.getMBeanServerConnection();
            final ObjectName allocator = findAllocator(server, allocatorName, waitSeconds);
            if (allocator == null && allocatorName != null) {
                err.println("kmem4j: pid " + pid + " has no kmem4j allocator named '" + allocatorName
                    + "' (no kmem4j:type=Allocator,name=" + allocatorName + " MBean; netty needs presets=netty-allocator)");
                return 1;
            }
            if (allocator == null) {
                err.println("kmem4j: pid " + pid + " has no kmem4j agent (no kmem4j:type=Allocator MBean);"
                    + " start it with -javaagent:kmem4j-agent.jar or load it with: java -jar kmem4j-agent.jar attach " + pid);
                return 1;
            }
            final String off = Off.reason(server, allocator);
            if (off != null) {
                err.println("kmem4j: pid " + pid + " has the kmem4j agent but interception is off, it runs on the JDK's"
                    + " allocator: " + off);
                return 1;
            }
            final List<ObjectName> caches = cacheNames(server, allocator);
            if (once) {
                out.print(screen(read(server, allocator, caches), allocator));
                out.flush();
                return 0;
            }
            return refresh(server, allocator, caches);
        } catch (final IOException e) {
            err.println("kmem4j: lost the JMX connection to pid " + pid + ": " + e.getMessage());
            return 1;
        }
    }

    private int refresh(final MBeanServerConnection server, final ObjectName allocator, final List<ObjectName> caches)
        throws IOException, JMException, InterruptedException {
        final CountDownLatch stop = new CountDownLatch(1);
        final Thread input = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, Charset.defaultCharset()))) {
                String line;
                while ((line = in.readLine()) != null && !line.trim().equalsIgnoreCase("q")) {
                    // any other line: keep going
                }
            } catch (final IOException ignored) {
                // stdin unusable: treat like end of input
            }
            stop.countDown();
        }, "kmem4j-slabtop-stdin");
        input.setDaemon(true);
        input.start();
        do {
            final String screen = screen(read(server, allocator, caches), allocator);
            out.print(CLEAR + screen);
            out.flush();
        } while (!stop.await(interval.toMillis(), TimeUnit.MILLISECONDS));
        return 0;
    }

    private String screen(final Read read, final ObjectName allocator) {
        final String instance = allocator.getKeyProperty("instance");
        final String name = allocator.getKeyProperty("name");
        final String title = String.format(Locale.ROOT, "kmem4j slabtop - pid %d%s%s - sorted by %s%s", pid,
            name == null ? "" : " - allocator " + name, instance == null ? "" : " (instance " + instance + ")",
            sort.description,
            once ? "" : " - every " + human(interval) + " (q + Enter or Ctrl-C quits)");
        return Slabtop.format(read.frame(), read.partialSlabs(), sort, title);
    }

    /** One frame and the sum of PartialSlabs. */
    record Read(Slabtop.Frame frame, long partialSlabs) {
    }

    /**
     * Reads the Allocator bean and every cache bean, retrying a few times until all values carry the
     * same {@code SnapshotSequence} (i.e. come from one snapshot); after that it shows what it has.
     */
    static Read read(final MBeanServerConnection server, final ObjectName allocator, final List<ObjectName> caches)
        throws IOException, JMException {
        Read last = null;
        for (int attempt = 0; attempt < CONSISTENT_READ_ATTEMPTS; attempt++) {
            final Map<String, Object> a = attributes(server, allocator, ALLOCATOR_ATTRIBUTES);
            final Set<Object> sequences = new HashSet<>();
            sequences.add(a.get("SnapshotSequence"));
            final List<Slabtop.Cache> rows = new ArrayList<>(caches.size());
            long partial = 0;
            for (final ObjectName name : caches) {
                final Map<String, Object> c = attributes(server, name, CACHE_ATTRIBUTES);
                sequences.add(c.get("SnapshotSequence"));
                final String cacheName = c.get("Name") instanceof String s ? s : name.getKeyProperty("name");
                final int objSize = (int) number(c, "ObjectSize");
                rows.add(new Slabtop.Cache(cacheName, number(c, "TotalObjects"), number(c, "ActiveObjects"), objSize,
                    number(c, "Slabs"), (int) number(c, "ObjectsPerSlab"), number(c, "SlabBytes"),
                    number(c, "Allocations")));
                partial += number(c, "PartialSlabs");
            }
            sequences.add(attributes(server, allocator, "SnapshotSequence").get("SnapshotSequence"));
            final Object rate = a.get("MagazineHitRate");
            last = new Read(new Slabtop.Frame(number(a, "Allocations"), number(a, "Frees"), number(a, "LiveBuffers"),
                number(a, "BytesInUse"), number(a, "BytesReserved"),
                rate instanceof Number n ? n.doubleValue() : 0.0, number(a, "Fallbacks"), rows), partial);
            if (sequences.size() == 1) {
                break;
            }
        }
        return last;
    }

    private static Map<String, Object> attributes(final MBeanServerConnection server, final ObjectName name,
                                                  final String... attributes) throws IOException, JMException {
        final Map<String, Object> values = new HashMap<>();
        for (final Attribute attribute : server.getAttributes(name, attributes).asList()) {
            values.put(attribute.getName(), attribute.getValue());
        }
        return values;
    }

    private static long number(final Map<String, Object> values, final String attribute) {
        return values.get(attribute) instanceof Number n ? n.longValue() : 0L;
    }

    /**
     * @return {@code kmem4j:type=Allocator}, or else the lowest {@code kmem4j:type=Allocator,instance=N},
     *         waiting up to {@code waitSeconds} for one to appear; null if there is none
     */
    static ObjectName findAllocator(final MBeanServerConnection server, final String name, final int waitSeconds)
        throws IOException, JMException, InterruptedException {
        final String named = name == null ? "" : ",name=" + name;
        final ObjectName plain = new ObjectName("kmem4j:type=Allocator" + named);
        final ObjectName any = new ObjectName("kmem4j:type=Allocator" + named + ",*");
        // only a JVM that is just starting may still be about to register the bean
        long waitMillis = TimeUnit.SECONDS.toMillis(Math.max(0, waitSeconds));
        try {
            final Object uptime = server.getAttribute(new ObjectName("java.lang:type=Runtime"), "Uptime");
            if (uptime instanceof Long millis && millis > JUST_STARTED_MILLIS) {
                waitMillis = 0;
            }
        } catch (final JMException e) {
            // no Runtime bean: just wait
        }
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        while (true) {
            if (server.isRegistered(plain)) {
                return plain;
            }
            final ObjectName lowest = server.queryNames(any, null).stream()
                .filter(n -> java.util.Objects.equals(name, n.getKeyProperty("name")))
                .min(Comparator.comparingLong(SlabtopCommand::instanceNumber)).orElse(null);
            if (lowest != null) {
                return lowest;
            }
            if (System.nanoTime() - deadline >= 0) {
                return null;
            }
            Thread.sleep(100);
        }
    }

    /**
     * @return the SlabCache beans that belong to {@code allocator} (same {@code instance} key, and an
     *         {@code allocator} key equal to its {@code name}), by object size
     */
    static List<ObjectName> cacheNames(final MBeanServerConnection server, final ObjectName allocator)
        throws IOException, JMException {
        final String instance = allocator.getKeyProperty("instance");
        final List<ObjectName> names = new ArrayList<>();
        for (final ObjectName n : server.queryNames(new ObjectName("kmem4j:type=SlabCache,*"), null)) {
            if (Objects.equals(instance, n.getKeyProperty("instance"))
                && Objects.equals(allocator.getKeyProperty("name"), n.getKeyProperty("allocator"))) {
                names.add(n);
            }
        }
        names.sort(Comparator.comparing(ObjectName::getCanonicalName));
        return names;
    }

    private static long instanceNumber(final ObjectName name) {
        try {
            return Long.parseLong(name.getKeyProperty("instance"));
        } catch (final NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    private static final Pattern INTERVAL = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|)");

    /**
     * @param text {@code 500ms}, {@code 1s}, {@code 2.5s}, {@code 1m}, a plain number of seconds, or ISO-8601 ({@code PT1S})
     * @return the interval
     * @throws IllegalArgumentException if it is not one of those or shorter than 100 ms
     */
    static Duration parseInterval(final String text) {
        final String t = text.trim().toLowerCase(Locale.ROOT);
        Duration d;
        final Matcher m = INTERVAL.matcher(t);
        if (m.matches()) {
            final double value = Double.parseDouble(m.group(1));
            final double millis = switch (m.group(2)) {
                case "ms" -> value;
                case "m" -> value * 60_000;
                default -> value * 1000;
            };
            d = Duration.ofNanos(Math.round(millis * 1_000_000));
        } else {
            try {
                d = Duration.parse(text.trim().toUpperCase(Locale.ROOT));
            } catch (final DateTimeParseException e) {
                throw new IllegalArgumentException("'" + text + "' is not an interval; use e.g. 500ms, 1s, 2.5s or 1m");
            }
        }
        if (d.compareTo(MIN_INTERVAL) < 0) {
            throw new IllegalArgumentException("interval " + text + " is too short; at least 100ms");
        }
        return d;
    }

    /** @return {@code 1s}, {@code 500ms}, {@code 2.5s} */
    static String human(final Duration d) {
        final long ms = d.toMillis();
        if (ms % 1000 != 0) {
            return ms < 1000 ? ms + "ms" : String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        return ms / 1000 + "s";
    }

    /** picocli converter for {@code --interval}. */
    static final class IntervalConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(final String value) {
            try {
                return parseInterval(value);
            } catch (final IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** picocli converter for {@code --sort}. */
    static final class SortConverter implements ITypeConverter<Slabtop.Sort> {
        @Override
        public Slabtop.Sort convert(final String value) {
            try {
                return Slabtop.Sort.parse(value);
            } catch (final IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
