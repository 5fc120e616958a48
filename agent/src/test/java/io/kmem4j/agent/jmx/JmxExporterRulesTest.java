package io.kmem4j.agent.jmx;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import io.prometheus.jmx.JmxCollector;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/prometheus-jmx-exporter.yml} through the Prometheus JMX exporter's own rule engine
 * ({@code io.prometheus.jmx:collector} 1.0.1, the collector inside {@code jmx_prometheus_javaagent}
 * 1.0.1): kmem4j's real beans (Allocator, SlabCache, and a Pools bean) on the platform MBean server,
 * scraped and written in the Prometheus text format as the exporter serves it; every documented name,
 * and only those, with its type and the bean's value. {@link PrometheusRulesTest} checks the same
 * file with a model of the exporter's matching; {@link GrafanaDashboardTest} checks the dashboard
 * against the names scraped here.
 */
class JmxExporterRulesTest {
    static final File RULES = new File(System.getProperty("basedir", "."), "../docs/prometheus-jmx-exporter.yml");
    /** The Pools bean's attributes and their metrics (the test's Pools bean answers {@link #poolsValue}). */
    static final Map<String, String> POOLS_METRICS = Map.ofEntries(
        Map.entry("PoolAllocations", "kmem4j_pool_allocations_total"),
        Map.entry("PoolAllocationsPassed", "kmem4j_pool_allocations_passed_total"),
        Map.entry("PoolReleases", "kmem4j_pool_releases_total"),
        Map.entry("PoolReleasesPassed", "kmem4j_pool_releases_passed_total"),
        Map.entry("PoolResizes", "kmem4j_pool_resizes_total"),
        Map.entry("PoolResizesPassed", "kmem4j_pool_resizes_passed_total"),
        Map.entry("RewrittenMethods", "kmem4j_pool_rewritten_methods_total"),
        Map.entry("PoolsLeftAlone", "kmem4j_pools_left_alone_total"),
        Map.entry("ExcludedClasses", "kmem4j_excluded_classes_total"),
        Map.entry("Failures", "kmem4j_pool_failures_total"));
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (\\S+)$");
    private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) (\\S+)$");

    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();
    private static final List<ObjectName> REGISTERED = new ArrayList<>();
    private static Kmem4jMBeans.Registration registration;

    /** One scraped sample. */
    record Sample(String name, String labels, double value) {
    }

    /** A Pools bean answering {@code 10 + its attribute's position}. */
    public static final class TestPools implements PoolsMXBean {
        @Override public long getPoolAllocations() { return poolsValue("PoolAllocations"); }
        @Override public long getPoolAllocationsPassed() { return poolsValue("PoolAllocationsPassed"); }
        @Override public long getPoolReleases() { return poolsValue("PoolReleases"); }
        @Override public long getPoolReleasesPassed() { return poolsValue("PoolReleasesPassed"); }
        @Override public long getPoolResizes() { return poolsValue("PoolResizes"); }
        @Override public long getPoolResizesPassed() { return poolsValue("PoolResizesPassed"); }
        @Override public long getRewrittenMethods() { return poolsValue("RewrittenMethods"); }
        @Override public long getPoolsLeftAlone() { return poolsValue("PoolsLeftAlone"); }
        @Override public long getExcludedClasses() { return poolsValue("ExcludedClasses"); }
        @Override public long getFailures() { return poolsValue("Failures"); }
        @Override public String getPools() { return "com.acme.Pool#take(int)/com.acme.Pool#give(java.nio.ByteBuffer)"; }
    }

    static long poolsValue(final String attribute) {
        return 10 + new ArrayList<>(new TreeMap<>(POOLS_METRICS).keySet()).indexOf(attribute);
    }

    @BeforeAll
    static void register() throws Exception {
        final StatsSnapshots snapshots = new StatsSnapshots(TestStats::sample);
        registration = Kmem4jMBeans.register(SERVER, new AllocatorView(snapshots, TestStats::sample, () -> 0,
            new LinkedHashMap<>(Map.of("magazineRounds", "32")), () -> 0));
        assertThat(registration.problems()).isEmpty();
        assertThat(registration.allocator()).hasToString("kmem4j:type=Allocator");
        REGISTERED.add(registration.allocator());
        REGISTERED.addAll(registration.caches());
        final ObjectName pools = new ObjectName("kmem4j:type=Pools");
        SERVER.registerMBean(new TestPools(), pools);
        REGISTERED.add(pools);
    }

    @AfterAll
    static void unregister() throws Exception {
        for (final ObjectName n : REGISTERED) {
            SERVER.unregisterMBean(n);
        }
        REGISTERED.clear();
    }

    /** The exporter's scrape in the Prometheus text format, as {@code /metrics} serves it. */
    static List<String> scrape() throws Exception {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final PrometheusRegistry registry = new PrometheusRegistry();
        new JmxCollector(RULES).register(registry); // as jmx_prometheus_javaagent does
        new PrometheusTextFormatWriter(false).write(out, registry.scrape());
        return List.of(out.toString(StandardCharsets.UTF_8).split("\n"));
    }

    /** kmem4j's samples of a scrape. */
    static List<Sample> kmem4jSamples(final List<String> lines) {
        final List<Sample> samples = new ArrayList<>();
        for (final String line : lines) {
            final Matcher m = SAMPLE.matcher(line);
            if (m.matches() && m.group(1).startsWith("kmem4j_")) {
                samples.add(new Sample(m.group(1), m.group(2) == null ? "" : m.group(2), Double.parseDouble(m.group(3))));
            }
        }
        return samples;
    }

    private static double value(final List<Sample> samples, final String name, final String labels) {
        return samples.stream().filter(s -> s.name().equals(name) && s.labels().equals(labels)).findFirst()
            .orElseThrow(() -> new AssertionError(name + labels + " not scraped: " + samples)).value();
    }

    @Test
    void theExporterMakesExactlyTheDocumentedNamesOfEveryBean() throws Exception {
        final List<String> lines = scrape();
        final List<Sample> samples = kmem4jSamples(lines);
        final List<String> documented = new ArrayList<>(PrometheusRulesTest.ALLOCATOR_METRICS.values());
        documented.addAll(PrometheusRulesTest.CACHE_METRICS.values());
        documented.addAll(POOLS_METRICS.values());
        assertThat(samples.stream().map(Sample::name).distinct().toList())
            .containsExactlyInAnyOrderElementsOf(documented);
        for (final String line : lines) {
            final Matcher t = TYPE.matcher(line);
            if (t.matches() && t.group(1).startsWith("kmem4j_")) {
                assertThat(t.group(2)).as(line).isEqualTo(t.group(1).endsWith("_total") ? "counter" : "gauge");
            }
        }
        assertThat(samples.stream().filter(s -> s.name().startsWith("kmem4j_cache_")).map(Sample::labels).distinct())
            .hasSize(registration.caches().size()).allSatisfy(l -> assertThat(l).matches("\\{cache=\"kmem4j-\\d+\"\\}"));
    }

    @Test
    void valuesAreTheBeans() throws Exception {
        final List<Sample> samples = kmem4jSamples(scrape());
        final ObjectName allocator = registration.allocator();
        for (final String attribute : List.of("BytesInUse", "BytesReserved", "LiveBuffers", "Allocations", "Fallbacks")) {
            assertThat(value(samples, PrometheusRulesTest.ALLOCATOR_METRICS.get(attribute), "")).as(attribute)
                .isEqualTo(((Number) SERVER.getAttribute(allocator, attribute)).doubleValue());
        }
        assertThat(value(samples, "kmem4j_enabled", "")).isEqualTo(1.0);
        assertThat(value(samples, "kmem4j_configuration", "{configuration=\"magazineRounds=32\"}")).isEqualTo(1.0);
        assertThat(value(samples, "kmem4j_cache_active_objects", "{cache=\"kmem4j-4096\"}")).isEqualTo(40.0);
        POOLS_METRICS.forEach((attribute, metric) ->
            assertThat(value(samples, metric, "")).as(attribute).isEqualTo(poolsValue(attribute)));
    }
}
