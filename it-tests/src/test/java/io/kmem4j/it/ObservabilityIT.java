package io.kmem4j.it;

import static io.kmem4j.it.JmxClient.ALLOCATOR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.management.Attribute;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Observability on every supported JDK: the echo sample runs with {@code -javaagent} and
 * {@code --hold}, and the test reads every attribute of {@code kmem4j:type=Allocator} and of every
 * {@code kmem4j:type=SlabCache} bean over a real JMX connector (Attach API), runs
 * {@code java -jar kmem4j-agent.jar slabtop <pid> --once} as a subprocess and compares its rows with
 * the beans, runs {@code slabtop} against a JVM without the agent (clear message, exit 1), and runs
 * {@code attach} against a JVM that already has the agent (no harm, one working set of beans).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ObservabilityIT {

    private static final int MESSAGES = 3000;
    private static final int CONNECTIONS = 4;
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration ATTACH_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration MBEAN_TIMEOUT = Duration.ofSeconds(10);

    private static final ObjectName SLAB_CACHES = objectName("kmem4j:type=SlabCache,*");
    private static final ObjectName ANY_ALLOCATOR = objectName("kmem4j:type=Allocator,*");
    private static final Set<String> OPEN_SCALAR_TYPES = Set.of("int", "long", "double", "boolean", "java.lang.String",
            "java.lang.Integer", "java.lang.Long", "java.lang.Double", "java.lang.Boolean");
    private static final Set<String> ALLOCATOR_ATTRIBUTES = Set.of("Allocations", "Frees", "ExplicitFrees", "GcFrees",
            "LiveBuffers", "BytesInUse", "BytesReserved", "PeakBytesInUse", "PeakLiveBuffers", "Fallbacks",
            "RemoteFreesSent", "RemoteFreesAbsorbed", "MagazineHits", "MagazineMisses", "MagazineHitRate", "Chunks",
            "ChunksAllocated", "ChunksReleased", "CollectionsBeforeGrowing", "ThreadCaches", "DoubleFrees", "LeaksDetected", "InterceptorFailures",
            "SlabCaches",
            "SnapshotSequence", "Configuration", "Enabled", "DisabledReason");
    private static final Set<String> CACHE_ATTRIBUTES = Set.of("Name", "CacheId", "ObjectSize", "ObjectsPerSlab",
            "PagesPerSlab", "Slabs", "PartialSlabs", "ActiveObjects", "TotalObjects", "ActiveBytes", "SlabBytes",
            "Allocations", "Frees", "MagazineHits", "MagazineMisses", "MagazineHitRate", "DepotExchanges",
            "DepotObjects", "AddressOrderScore", "DoubleFrees", "SnapshotSequence");
    private static final long PAGE_BYTES = 64 * 1024;

    /** A row of {@code slabtop}: OBJS ACTIVE USE OBJ-SIZE SLABS OBJ/SLAB CACHE-SIZE NAME. */
    private static final Pattern SLABTOP_ROW =
            Pattern.compile("^\\s*(\\d+)\\s+(\\d+)\\s+(\\d+)%\\s+(\\d+\\.\\d\\d)K\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)K\\s+(\\S+)$");
    private static final Pattern ACTIVE_TOTAL_OBJECTS =
            Pattern.compile("^ Active / Total Objects \\(% used\\)\\s+: (\\d+) / (\\d+) \\(.*%\\)$");
    private static final Pattern MAGAZINE_LINE = Pattern.compile(
            "^ Magazine Hit Rate\\s+: [\\d.]+% \\(allocations (\\d+), frees (\\d+), live (\\d+), fallbacks (\\d+)\\)$");
    private static final Pattern STACK_TRACE_LINE =
            Pattern.compile(".*(Exception|Error:).*|^\\s+at \\S+\\(.*\\)\\s*$|^Caused by: .*|^\\s+\\.\\.\\. \\d+ more$");

    // ------------------------------------------------------------------------------------ MXBeans

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void everyAttributeOfEveryBeanIsAnOpenTypeAndTheyAddUp(Jdk jdk) {
        try (ForkedJvm jvm = startEchoWithAgent(jdk, "obs-beans-");
             JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, ATTACH_TIMEOUT)) {
            jmx.awaitRegistered(ALLOCATOR, MBEAN_TIMEOUT);
            MBeanServerConnection server = jmx.connection();

            assertThat(queryNames(server, ANY_ALLOCATOR)).as("Allocator beans").containsExactly(ALLOCATOR);
            List<ObjectName> caches = cacheBeans(server);
            assertThat(caches).as("SlabCache beans").isNotEmpty()
                    .allSatisfy(n -> {
                        assertThat(n.getKeyProperty("name")).matches("kmem4j-\\d+");
                        assertThat(n.getKeyProperty("instance")).isNull();
                    });

            Map<String, Object> allocator = readAllAttributes(server, ALLOCATOR, jdk);
            assertThat(allocator.keySet()).containsExactlyInAnyOrderElementsOf(ALLOCATOR_ATTRIBUTES);
            assertThat(allocator.get("SlabCaches")).isEqualTo(caches.size());
            assertThat((Long) allocator.get("Allocations")).as("Allocations after the echo run").isPositive();
            assertThat((String) allocator.get("Configuration")).contains("magazineRounds=");
            assertThat(allocator).as("a serving agent").containsEntry("Enabled", true).containsEntry("DisabledReason", "");
            for (ObjectName cache : caches) {
                Map<String, Object> c = readAllAttributes(server, cache, jdk);
                assertThat(c.keySet()).containsExactlyInAnyOrderElementsOf(CACHE_ATTRIBUTES);
                assertThat(c.get("Name")).isEqualTo(cache.getKeyProperty("name"));
                assertThat(c.get("Name")).isEqualTo("kmem4j-" + c.get("ObjectSize"));
            }

            // All beans share one snapshot: read them all until every value carries the same
            // SnapshotSequence, then the figures must add up exactly (the echo server is idle).
            AtomicReference<Consistent> last = new AtomicReference<>();
            await("one consistent snapshot of all kmem4j beans on " + jdk)
                    .atMost(Duration.ofSeconds(20))
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(50))
                    .pollInSameThread()
                    .until(() -> {
                        Consistent read = readTogether(server, caches);
                        last.set(read);
                        return read.sequences().size() == 1;
                    });
            Consistent s = last.get();
            Map<String, Object> a = s.allocator();
            long active = 0;
            long allocations = 0;
            long frees = 0;
            long activeBytes = 0;
            long slabBytes = 0;
            for (Map.Entry<ObjectName, Map<String, Object>> e : s.caches().entrySet()) {
                Map<String, Object> c = e.getValue();
                String what = e.getKey() + " " + c;
                assertThat(asLong(c, "TotalObjects")).as(what).isEqualTo(asLong(c, "Slabs") * asLong(c, "ObjectsPerSlab"));
                assertThat(asLong(c, "ActiveBytes")).as(what).isEqualTo(asLong(c, "ActiveObjects") * asLong(c, "ObjectSize"));
                assertThat(asLong(c, "SlabBytes")).as(what)
                        .isEqualTo(asLong(c, "Slabs") * asLong(c, "PagesPerSlab") * PAGE_BYTES);
                assertThat(asLong(c, "Allocations") - asLong(c, "Frees")).as(what).isEqualTo(asLong(c, "ActiveObjects"));
                assertThat(asLong(c, "ActiveObjects")).as(what).isBetween(0L, asLong(c, "TotalObjects"));
                assertThat(asLong(c, "PartialSlabs")).as(what).isBetween(0L, asLong(c, "Slabs"));
                assertThat(((Number) c.get("MagazineHitRate")).doubleValue()).as(what).isBetween(0.0, 1.0);
                active += asLong(c, "ActiveObjects");
                allocations += asLong(c, "Allocations");
                frees += asLong(c, "Frees");
                activeBytes += asLong(c, "ActiveBytes");
                slabBytes += asLong(c, "SlabBytes");
            }
            String what = "Allocator " + a + " and the caches' sums (same snapshot)";
            assertThat(active).as("sum of ActiveObjects == LiveBuffers; " + what).isEqualTo(asLong(a, "LiveBuffers"));
            assertThat(allocations).as("sum of Allocations; " + what).isEqualTo(asLong(a, "Allocations"));
            assertThat(frees).as("sum of Frees; " + what).isEqualTo(asLong(a, "Frees"));
            assertThat(asLong(a, "Frees")).as(what).isEqualTo(asLong(a, "ExplicitFrees") + asLong(a, "GcFrees"));
            assertThat(asLong(a, "BytesInUse")).as("BytesInUse <= sum of ActiveBytes; " + what).isLessThanOrEqualTo(activeBytes);
            assertThat(slabBytes).as("sum of SlabBytes <= BytesReserved; " + what).isLessThanOrEqualTo(asLong(a, "BytesReserved"));
            assertThat(asLong(a, "PeakBytesInUse")).as(what).isGreaterThanOrEqualTo(asLong(a, "BytesInUse"));
            assertThat(asLong(a, "PeakLiveBuffers")).as(what).isGreaterThanOrEqualTo(asLong(a, "LiveBuffers"));

            // operations
            String slabinfo = (String) jmx.invoke(ALLOCATOR, "slabinfo");
            List<String> lines = slabinfo.lines().collect(Collectors.toList());
            assertThat(lines.get(0)).isEqualTo("slabinfo - version: 2.1");
            assertThat(lines.get(1)).startsWith("# name            <active_objs> <num_objs> <objsize> <objperslab>"
                    + " <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs>"
                    + " <num_slabs> <sharedavail>");
            assertThat(lines.subList(2, lines.size()).stream().map(l -> l.split("\\s+")[0]))
                    .containsExactlyInAnyOrderElementsOf(caches.stream().map(n -> n.getKeyProperty("name")).toList());
            assertThat((Long) jmx.invoke(ALLOCATOR, "trim")).isNotNegative();
            jmx.invoke(ALLOCATOR, "resetPeaks");
            Map<String, Long> afterReset = jmx.readLongs(ALLOCATOR, "PeakBytesInUse", "BytesInUse", "PeakLiveBuffers",
                    "LiveBuffers");
            assertThat(afterReset.get("PeakBytesInUse")).as("%s", afterReset).isEqualTo(afterReset.get("BytesInUse"));
            assertThat(afterReset.get("PeakLiveBuffers")).as("%s", afterReset).isEqualTo(afterReset.get("LiveBuffers"));

            System.out.println(TestJdks.LOG_PREFIX + "kmem4j beans on JDK " + jdk.version() + ": " + caches.size()
                    + " caches, allocator " + a);
            finish(jvm);
        }
    }

    // ------------------------------------------------------------------------------------ slabtop

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void slabtopOnceShowsTheBeans(Jdk jdk) {
        try (ForkedJvm jvm = startEchoWithAgent(jdk, "obs-slabtop-");
             JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, ATTACH_TIMEOUT)) {
            jmx.awaitRegistered(ALLOCATOR, MBEAN_TIMEOUT);
            MBeanServerConnection server = jmx.connection();
            List<ObjectName> caches = cacheBeans(server);
            Map<String, Map<String, Object>> before = byName(readTogether(server, caches));

            AgentCli slabtop = AgentCli.run(jdk, "slabtop", "slabtop", String.valueOf(jvm.pid()), "--once", "--sort",
                    "size");

            Map<String, Map<String, Object>> after = byName(readTogether(server, caches));
            assertThat(slabtop.exit()).as(slabtop.description()).isZero();
            assertThat(slabtop.stderr()).as(slabtop.description()).isEmpty();
            List<String> out = slabtop.stdout();
            assertThat(String.join("\n", out)).as("--once prints no screen control codes").doesNotContain("\033");
            assertThat(out.get(0)).as(slabtop.description()).startsWith(" kmem4j slabtop - pid " + jvm.pid());
            int header = out.indexOf("  OBJS ACTIVE  USE OBJ SIZE  SLABS OBJ/SLAB CACHE SIZE NAME");
            assertThat(header).as("column header in\n%s", slabtop.description()).isPositive();

            List<Row> rows = new ArrayList<>();
            for (String line : out.subList(header + 1, out.size())) {
                Matcher m = SLABTOP_ROW.matcher(line);
                assertThat(m.matches()).as("slabtop row '%s'\n%s", line, slabtop.description()).isTrue();
                rows.add(new Row(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Integer.parseInt(m.group(3)),
                        m.group(4), Long.parseLong(m.group(5)), Long.parseLong(m.group(6)), Long.parseLong(m.group(7)),
                        m.group(8)));
            }
            assertThat(rows.stream().map(Row::name)).as("one row per SlabCache bean")
                    .containsExactlyInAnyOrderElementsOf(before.keySet());
            for (int i = 1; i < rows.size(); i++) {
                assertThat(rows.get(i - 1).cacheKib()).as("--sort size: rows by CACHE SIZE, descending")
                        .isGreaterThanOrEqualTo(rows.get(i).cacheKib());
            }
            for (Row row : rows) {
                Map<String, Object> b = before.get(row.name());
                Map<String, Object> a = after.get(row.name());
                String what = row + " vs the bean before " + b + " and after " + a;
                // fixed per cache: exact
                assertThat(row.objSizeKib()).as(what)
                        .isEqualTo(String.format(Locale.ROOT, "%.2f", asLong(b, "ObjectSize") / 1024.0));
                assertThat(row.objPerSlab()).as(what).isEqualTo(asLong(b, "ObjectsPerSlab"));
                // live figures: the JVM is idle, but JMX connections (slabtop's own, ours) may take or give
                // back a few of the JDK's temporary direct buffers meanwhile
                assertWithin(row.active(), asLong(b, "ActiveObjects"), asLong(a, "ActiveObjects"), 8, "ACTIVE " + what);
                assertWithin(row.slabs(), asLong(b, "Slabs"), asLong(a, "Slabs"), 1, "SLABS " + what);
                long perSlab = asLong(b, "ObjectsPerSlab");
                assertWithin(row.objs(), asLong(b, "TotalObjects"), asLong(a, "TotalObjects"), perSlab, "OBJS " + what);
                assertThat(row.objs()).as(what).isEqualTo(row.slabs() * row.objPerSlab());
                assertThat(row.cacheKib()).as(what).isEqualTo(row.slabs() * asLong(b, "PagesPerSlab") * PAGE_BYTES / 1024);
                long expectedUse = row.objs() == 0 ? 0 : Math.round(100.0 * row.active() / row.objs());
                assertThat((long) row.usePercent()).as(what).isBetween(expectedUse - 1, expectedUse + 1);
            }
            // the header: totals of the rows, and the Allocator bean's counters from the same snapshot
            Matcher objects = match(ACTIVE_TOTAL_OBJECTS, out, slabtop);
            long sumActive = rows.stream().mapToLong(Row::active).sum();
            assertThat(Long.parseLong(objects.group(1))).isEqualTo(sumActive);
            assertThat(Long.parseLong(objects.group(2))).isEqualTo(rows.stream().mapToLong(Row::objs).sum());
            Matcher magazine = match(MAGAZINE_LINE, out, slabtop);
            long allocations = Long.parseLong(magazine.group(1));
            long frees = Long.parseLong(magazine.group(2));
            long live = Long.parseLong(magazine.group(3));
            assertThat(allocations - frees).as("allocations - frees == live\n%s", slabtop.description()).isEqualTo(live);
            assertThat(live).as("live buffers == sum of ACTIVE (one snapshot)\n%s", slabtop.description())
                    .isEqualTo(sumActive);
            finish(jvm);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void slabtopWithoutTheAgentSaysSoAndExits1(Jdk jdk) {
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, "obs-plain-" + jdk.label())
                .jar(Artifacts.samplesJar())
                .programArgs("echo", "--messages", "100", "--connections", "1", "--hold")
                .start()) {
            jvm.awaitStdoutLine("echo: holding", RUN_TIMEOUT);

            AgentCli slabtop = AgentCli.run(jdk, "slabtop-plain", "slabtop", String.valueOf(jvm.pid()), "--once");
            assertThat(slabtop.exit()).as(slabtop.description()).isEqualTo(1);
            assertThat(slabtop.stdout()).as(slabtop.description()).isEmpty();
            assertThat(slabtop.stderr()).as(slabtop.description()).singleElement().asString()
                    .contains("pid " + jvm.pid() + " has no kmem4j agent (no kmem4j:type=Allocator MBean)");
            finish(jvm);
        }
        // a pid that is no process at all
        long gone = exitedPid(jdk);
        AgentCli slabtop = AgentCli.run(jdk, "slabtop-gone", "slabtop", String.valueOf(gone), "--once");
        assertThat(slabtop.exit()).as(slabtop.description()).isEqualTo(1);
        assertThat(slabtop.stdout()).as(slabtop.description()).isEmpty();
        assertThat(slabtop.stderr()).as(slabtop.description()).singleElement().asString()
                .startsWith("kmem4j: cannot attach to pid " + gone + ": ");
    }

    // ------------------------------------------------------------------------------------ attach

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void attachToAJvmThatAlreadyRunsTheAgentChangesNothing(Jdk jdk) throws Exception {
        try (ForkedJvm jvm = startEchoWithAgent(jdk, "obs-attach-");
             JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, ATTACH_TIMEOUT)) {
            jmx.awaitRegistered(ALLOCATOR, MBEAN_TIMEOUT);
            MBeanServerConnection server = jmx.connection();
            Set<ObjectName> beansBefore = queryNames(server, objectName("kmem4j:*"));
            long allocationsBefore = jmx.readLong(ALLOCATOR, "Allocations");

            AgentCli attach = AgentCli.run(jdk, "attach-again", "attach", String.valueOf(jvm.pid()));

            assertThat(attach.exit()).as(attach.description()).isZero();
            assertThat(attach.stdout()).as("the command says the target already runs kmem4j, not 'attached'\n%s",
                    attach.description()).anySatisfy(l -> assertThat(l)
                    .startsWith("kmem4j: pid " + jvm.pid() + " already runs kmem4j ")
                    .contains(" (premain); nothing loaded; allocations="));
            assertThat(attach.stdout()).as(attach.description()).noneMatch(l -> l.startsWith("kmem4j: attached"));
            assertThat(jvm.stderrLines()).as("nothing was loaded, so the agent logged nothing about it\n%s", jvm.describe())
                    .noneMatch(l -> l.contains("changes nothing"));
            // a load by other means (the Attach API directly, jcmd JVMTI.agent_load) is refused by the agent itself
            com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(String.valueOf(jvm.pid()));
            try {
                vm.loadAgent(Artifacts.agentJar().toString(), "");
            } finally {
                vm.detach();
            }
            jvm.awaitLine(ForkedJvm.Channel.STDERR, "the agent's 'changes nothing' line",
                    l -> l.equals("[kmem4j] INFO kmem4j is already serving ByteBuffer.allocateDirect in this JVM;"
                            + " this attach changes nothing"), Duration.ofSeconds(10));
            assertThat(queryNames(server, objectName("kmem4j:*"))).as("the same kmem4j beans, no second instance")
                    .isEqualTo(beansBefore);
            assertThat(queryNames(server, ANY_ALLOCATOR)).containsExactly(ALLOCATOR);
            Map<String, Object> allocator = readAllAttributes(server, ALLOCATOR, jdk);
            assertThat(asLong(allocator, "Allocations")).isGreaterThanOrEqualTo(allocationsBefore);
            assertThat(asLong(allocator, "InterceptorFailures")).isZero();
            assertThat((String) jmx.invoke(ALLOCATOR, "slabinfo")).startsWith("slabinfo - version: 2.1\n");
            finish(jvm);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void attachToAJvmWhoseAgentIsOffChangesNothingAndSaysWhy(Jdk jdk) {
        try (ForkedJvm jvm = holdingEcho(jdk, "obs-attach-off-", "magazineRounds=abc")) {

            AgentCli attach = AgentCli.run(jdk, "attach-off", "attach", String.valueOf(jvm.pid()));

            assertThat(attach.exit()).as(attach.description()).isEqualTo(1);
            assertThat(attach.stderr()).as(attach.description()).singleElement().asString()
                    .contains("pid " + jvm.pid() + " loaded the agent but interception is off")
                    .contains("magazineRounds=abc");
            jvm.awaitLine(ForkedJvm.Channel.STDERR, "the second load's 'changes nothing' line",
                    l -> l.startsWith("[kmem4j] INFO kmem4j was already loaded into this JVM and is off (")
                            && l.contains("magazineRounds=abc") && l.endsWith("); this attach changes nothing"),
                    Duration.ofSeconds(10));
            try (JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, ATTACH_TIMEOUT)) {
                jmx.awaitRegistered(ALLOCATOR, MBEAN_TIMEOUT);
                assertThat(jmx.read(ALLOCATOR, "Enabled")).as("Enabled of %s", ALLOCATOR).isEqualTo(false);
                assertThat(jmx.readLong(ALLOCATOR, "Allocations")).as("nothing served after the attach").isZero();
            }
            assertThat(jvm.stderrLines()).as("no serving line\n%s", jvm.describe())
                    .noneMatch(l -> l.contains("serving ByteBuffer.allocateDirect"));
            finish(jvm);
        }
    }

    /** A JVM started with enabled=false has no bean to wait for: attach and slabtop say so at once; nothing is loaded. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void attachToAJvmStartedWithEnabledFalseSaysSoAndLoadsNothing(Jdk jdk) {
        try (ForkedJvm jvm = holdingEcho(jdk, "obs-attach-disabled-", "enabled=false")) {

            AgentCli attach = AgentCli.run(jdk, "attach-disabled", "attach", String.valueOf(jvm.pid()));

            assertThat(attach.exit()).as(attach.description()).isEqualTo(1);
            assertThat(attach.stdout()).as(attach.description()).isEmpty();
            assertThat(attach.stderr()).as("one line naming the setting, not a wait for a bean that never comes\n%s",
                    attach.description()).singleElement().asString()
                    .isEqualTo("kmem4j: pid " + jvm.pid() + " was started with kmem4j and enabled=false, so it runs on"
                            + " the JDK's allocator; nothing loaded (kmem4j loads once per JVM: restart it without"
                            + " enabled=false)");
            // slabtop gives the same reason, not "no kmem4j agent: attach it" (new-user trial)
            AgentCli slabtop = AgentCli.run(jdk, "slabtop-disabled", "slabtop", String.valueOf(jvm.pid()), "--once");
            assertThat(slabtop.exit()).as(slabtop.description()).isEqualTo(1);
            assertThat(slabtop.stderr()).as(slabtop.description()).singleElement().asString()
                    .isEqualTo("kmem4j: pid " + jvm.pid() + " was started with kmem4j and enabled=false, so it runs on"
                            + " the JDK's allocator; no slabs to show (restart it without enabled=false)");
            finish(jvm);
            assertThat(jvm.stderrLines()).as("nothing loaded, so no second load logged anything\n%s", jvm.describe())
                    .noneMatch(l -> l.contains("changes nothing"));
        }
    }

    // ------------------------------------------------------------------------------------ helpers

    private record Row(long objs, long active, int usePercent, String objSizeKib, long slabs, long objPerSlab,
                       long cacheKib, String name) {
    }

    /** The Allocator bean, then every cache bean, then the Allocator's SnapshotSequence again. */
    private record Consistent(Map<String, Object> allocator, Map<ObjectName, Map<String, Object>> caches,
                              Set<Object> sequences) {
    }

    private static ForkedJvm startEchoWithAgent(Jdk jdk, String name) {
        Path agent = Artifacts.agentJar();
        ForkedJvm jvm = ForkedJvm.builder(jdk, name + jdk.label())
                .jvmArgs("-javaagent:" + agent)
                .jar(Artifacts.samplesJar())
                .programArgs("echo", "--messages", String.valueOf(MESSAGES), "--connections",
                        String.valueOf(CONNECTIONS), "--hold")
                .start();
        try {
            jvm.awaitStdoutLine("echo: holding", RUN_TIMEOUT);
            return jvm;
        } catch (RuntimeException | Error e) {
            jvm.close();
            throw e;
        }
    }

    /** Lets the echo sample exit (stdin EOF) and checks it did so cleanly, without stack traces. */
    /** The echo sample under the agent with {@code options}, holding after 100 messages (stdin ends it). */
    private static ForkedJvm holdingEcho(Jdk jdk, String name, String options) {
        ForkedJvm jvm = ForkedJvm.builder(jdk, name + jdk.label())
                .jvmArgs("-javaagent:" + Artifacts.agentJar() + "=" + options)
                .jar(Artifacts.samplesJar())
                .programArgs("echo", "--messages", "100", "--connections", "1", "--hold")
                .start();
        try {
            jvm.awaitStdoutLine("echo: holding", RUN_TIMEOUT);
        } catch (RuntimeException | Error e) {
            jvm.close(); // not left running when it never got there
            throw e;
        }
        return jvm;
    }

    private static void finish(ForkedJvm jvm) {
        jvm.closeStdin();
        int exit = jvm.waitForExit(EXIT_TIMEOUT);
        assertThat(exit).as("exit code of %s after stdin was closed\n%s", jvm, jvm.describe()).isZero();
        List<String> suspicious = jvm.stderrLines().stream()
                .filter(l -> STACK_TRACE_LINE.matcher(l).matches())
                .collect(Collectors.toList());
        assertThat(suspicious).as("exception / error lines on stderr of %s\n%s", jvm, jvm.describe()).isEmpty();
    }

    /** {@code java -jar kmem4j-agent.jar <args>} on {@code jdk}, stdin closed at once. */
    /** The pid of a JVM that has exited (and, checked, is not reused yet). */
    private static long exitedPid(Jdk jdk) {
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, "obs-gone-" + jdk.label()).jvmArgs("-version")
                .mainClass(".", "ignored").start()) {
            jvm.waitForExit(EXIT_TIMEOUT);
            assertThat(ProcessHandle.of(jvm.pid())).as("pid %d is free again", jvm.pid()).isEmpty();
            return jvm.pid();
        }
    }

    private static List<ObjectName> cacheBeans(MBeanServerConnection server) {
        List<ObjectName> caches = new ArrayList<>(queryNames(server, SLAB_CACHES));
        caches.sort((x, y) -> x.getCanonicalName().compareTo(y.getCanonicalName()));
        return caches;
    }

    private static Set<ObjectName> queryNames(MBeanServerConnection server, ObjectName pattern) {
        try {
            return server.queryNames(pattern, null);
        } catch (IOException e) {
            throw new AssertionError("queryNames(" + pattern + ") failed: " + e, e);
        }
    }

    /** Every attribute the bean declares, in one getAttributes call; each must be an open scalar. */
    private static Map<String, Object> readAllAttributes(MBeanServerConnection server, ObjectName name, Jdk jdk) {
        try {
            MBeanAttributeInfo[] infos = server.getMBeanInfo(name).getAttributes();
            String[] names = new String[infos.length];
            for (int i = 0; i < infos.length; i++) {
                assertThat(infos[i].getType()).as("declared type of %s.%s on %s", name, infos[i].getName(), jdk)
                        .isIn(OPEN_SCALAR_TYPES);
                assertThat(infos[i].isWritable()).as("%s.%s is read-only", name, infos[i].getName()).isFalse();
                names[i] = infos[i].getName();
            }
            Map<String, Object> values = new TreeMap<>();
            for (Attribute a : server.getAttributes(name, names).asList()) {
                assertThat(a.getValue()).as("value of %s.%s on %s", name, a.getName(), jdk)
                        .isInstanceOfAny(Number.class, String.class, Boolean.class);
                values.put(a.getName(), a.getValue());
            }
            assertThat(values.keySet()).as("attributes returned by %s", name).containsExactlyInAnyOrder(names);
            return values;
        } catch (IOException | JMException e) {
            throw new AssertionError("reading " + name + " failed: " + e, e);
        }
    }

    private static Consistent readTogether(MBeanServerConnection server, List<ObjectName> caches) {
        try {
            Set<Object> sequences = new HashSet<>();
            Map<String, Object> allocator = attributes(server, ALLOCATOR, ALLOCATOR_ATTRIBUTES);
            sequences.add(allocator.get("SnapshotSequence"));
            Map<ObjectName, Map<String, Object>> values = new LinkedHashMap<>();
            for (ObjectName cache : caches) {
                Map<String, Object> c = attributes(server, cache, CACHE_ATTRIBUTES);
                sequences.add(c.get("SnapshotSequence"));
                values.put(cache, c);
            }
            sequences.add(attributes(server, ALLOCATOR, Set.of("SnapshotSequence")).get("SnapshotSequence"));
            return new Consistent(allocator, values, sequences);
        } catch (IOException | JMException e) {
            throw new AssertionError("reading the kmem4j beans failed: " + e, e);
        }
    }

    private static Map<String, Map<String, Object>> byName(Consistent read) {
        Map<String, Map<String, Object>> byName = new LinkedHashMap<>();
        read.caches().forEach((name, values) -> byName.put((String) values.get("Name"), values));
        return byName;
    }

    private static Map<String, Object> attributes(MBeanServerConnection server, ObjectName name, Set<String> attributes)
            throws IOException, JMException {
        Map<String, Object> values = new TreeMap<>();
        for (Attribute a : server.getAttributes(name, attributes.toArray(new String[0])).asList()) {
            values.put(a.getName(), a.getValue());
        }
        assertThat(values.keySet()).as("attributes returned by %s", name).containsExactlyInAnyOrderElementsOf(attributes);
        return values;
    }

    private static long asLong(Map<String, Object> values, String attribute) {
        Object v = values.get(attribute);
        assertThat(v).as("%s in %s", attribute, values).isInstanceOfAny(Long.class, Integer.class);
        return ((Number) v).longValue();
    }

    private static void assertWithin(long actual, long before, long after, long tolerance, String what) {
        assertThat(actual).as(what).isBetween(Math.min(before, after) - tolerance, Math.max(before, after) + tolerance);
    }

    private static Matcher match(Pattern pattern, List<String> lines, AgentCli cli) {
        for (String line : lines) {
            Matcher m = pattern.matcher(line);
            if (m.matches()) {
                return m;
            }
        }
        throw new AssertionError("no line matching " + pattern + " in\n" + cli.description());
    }

    private static ObjectName objectName(String name) {
        try {
            return new ObjectName(name);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException(name, e);
        }
    }
}
