package io.kmem4j.agent.jmx;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/prometheus-jmx-exporter.yml} against the real MXBeans: every attribute is run through
 * the rules the way the JMX exporter does it ({@code domain<key=value, ...><>attrName: value},
 * snake-cased attribute names, first matching rule wins, patterns wrapped in {@code ^.*(?:...).*$},
 * empty labels dropped), and the resulting metric names must be the documented, stable ones.
 */
class PrometheusRulesTest {
    private static final Path RULES = Path.of(System.getProperty("basedir", "."))
        .resolve("../docs/prometheus-jmx-exporter.yml").normalize();
    private static final Pattern SNAKE = Pattern.compile("([a-z0-9])([A-Z])");
    private static final Pattern METRIC_NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");

    /** The stable names: attribute to metric. Attributes missing here must not be exported. */
    static final Map<String, String> ALLOCATOR_METRICS = Map.ofEntries(
        Map.entry("Allocations", "kmem4j_allocations_total"),
        Map.entry("Frees", "kmem4j_frees_total"),
        Map.entry("ExplicitFrees", "kmem4j_explicit_frees_total"),
        Map.entry("GcFrees", "kmem4j_gc_frees_total"),
        Map.entry("Fallbacks", "kmem4j_fallbacks_total"),
        Map.entry("RemoteFreesSent", "kmem4j_remote_frees_sent_total"),
        Map.entry("RemoteFreesAbsorbed", "kmem4j_remote_frees_absorbed_total"),
        Map.entry("MagazineHits", "kmem4j_magazine_hits_total"),
        Map.entry("MagazineMisses", "kmem4j_magazine_misses_total"),
        Map.entry("ChunksAllocated", "kmem4j_chunks_allocated_total"),
        Map.entry("ChunksReleased", "kmem4j_chunks_released_total"),
        Map.entry("CollectionsBeforeGrowing", "kmem4j_collections_before_growing_total"),
        Map.entry("DoubleFrees", "kmem4j_double_frees_total"),
        Map.entry("LeaksDetected", "kmem4j_leaks_detected_total"),
        Map.entry("InterceptorFailures", "kmem4j_interceptor_failures_total"),
        Map.entry("LiveBuffers", "kmem4j_live_buffers"),
        Map.entry("BytesInUse", "kmem4j_bytes_in_use"),
        Map.entry("BytesReserved", "kmem4j_bytes_reserved"),
        Map.entry("PeakBytesInUse", "kmem4j_peak_bytes_in_use"),
        Map.entry("PeakLiveBuffers", "kmem4j_peak_live_buffers"),
        Map.entry("Chunks", "kmem4j_chunks"),
        Map.entry("ThreadCaches", "kmem4j_thread_caches"),
        Map.entry("SlabCaches", "kmem4j_slab_caches"),
        Map.entry("MagazineHitRate", "kmem4j_magazine_hit_ratio"),
        Map.entry("Configuration", "kmem4j_configuration"),
        Map.entry("Enabled", "kmem4j_enabled"));
    static final Map<String, String> CACHE_METRICS = Map.ofEntries(
        Map.entry("Allocations", "kmem4j_cache_allocations_total"),
        Map.entry("Frees", "kmem4j_cache_frees_total"),
        Map.entry("MagazineHits", "kmem4j_cache_magazine_hits_total"),
        Map.entry("MagazineMisses", "kmem4j_cache_magazine_misses_total"),
        Map.entry("DepotExchanges", "kmem4j_cache_depot_exchanges_total"),
        Map.entry("DoubleFrees", "kmem4j_cache_double_frees_total"),
        Map.entry("ActiveObjects", "kmem4j_cache_active_objects"),
        Map.entry("TotalObjects", "kmem4j_cache_total_objects"),
        Map.entry("ActiveBytes", "kmem4j_cache_active_bytes"),
        Map.entry("SlabBytes", "kmem4j_cache_slab_bytes"),
        Map.entry("Slabs", "kmem4j_cache_slabs"),
        Map.entry("PartialSlabs", "kmem4j_cache_partial_slabs"),
        Map.entry("DepotObjects", "kmem4j_cache_depot_objects"),
        Map.entry("ObjectsPerSlab", "kmem4j_cache_objects_per_slab"),
        Map.entry("PagesPerSlab", "kmem4j_cache_pages_per_slab"),
        Map.entry("ObjectSize", "kmem4j_cache_object_size_bytes"),
        Map.entry("MagazineHitRate", "kmem4j_cache_magazine_hit_ratio"),
        Map.entry("AddressOrderScore", "kmem4j_cache_address_order_ratio"));
    private static final Set<String> NOT_EXPORTED = Set.of("SnapshotSequence", "CacheId", "Name", "DisabledReason");

    private static List<Rule> rules;
    private final MBeanServer server = MBeanServerFactory.newMBeanServer();

    /** One rule of the file. */
    record Rule(Pattern pattern, String name, String type, String value, boolean snakeCase, Map<String, String> labels) {
    }

    /** One exported sample. */
    record Sample(String name, String type, Map<String, String> labels, double value) {
    }

    @BeforeAll
    static void readRules() throws IOException {
        rules = parse(Files.readAllLines(RULES, StandardCharsets.UTF_8));
        assertThat(rules).isNotEmpty();
    }

    @Test
    void everyAttributeMapsToItsStableMetricName() throws Exception {
        final Kmem4jMBeans.Registration r = register();
        final Map<String, Sample> allocator = export(r.allocator());
        assertThat(allocator.keySet()).containsExactlyInAnyOrderElementsOf(ALLOCATOR_METRICS.keySet());
        allocator.forEach((attribute, sample) -> {
            assertThat(sample.name()).as(attribute).isEqualTo(ALLOCATOR_METRICS.get(attribute));
            assertThat(sample.labels()).as(attribute).doesNotContainKey("instance_id");
        });
        assertThat(allocator.get("Configuration").labels()).containsKey("configuration");
        assertThat(allocator.get("Configuration").value()).isEqualTo(1.0);
        assertThat(allocator.get("BytesInUse").value())
            .isEqualTo(((Number) server.getAttribute(r.allocator(), "BytesInUse")).doubleValue());

        for (final ObjectName cache : r.caches()) {
            final Map<String, Sample> samples = export(cache);
            assertThat(samples.keySet()).as("%s", cache).containsExactlyInAnyOrderElementsOf(CACHE_METRICS.keySet());
            samples.forEach((attribute, sample) -> {
                assertThat(sample.name()).as(attribute).isEqualTo(CACHE_METRICS.get(attribute));
                assertThat(sample.labels()).as(attribute).isEqualTo(Map.of("cache", cache.getKeyProperty("name")));
            });
        }
        assertThat(export(new ObjectName("kmem4j:type=SlabCache,name=kmem4j-4096")).get("ActiveObjects"))
            .isEqualTo(new Sample("kmem4j_cache_active_objects", "GAUGE", Map.of("cache", "kmem4j-4096"), 40));
    }

    @Test
    void aSecondInstanceGetsAnInstanceIdLabel() throws Exception {
        register();
        final Kmem4jMBeans.Registration second = register();
        final Map<String, Sample> allocator = export(second.allocator());
        assertThat(allocator.get("Allocations")).isEqualTo(new Sample("kmem4j_allocations_total", "COUNTER",
            Map.of("instance_id", "2"), ((Number) server.getAttribute(second.allocator(), "Allocations")).doubleValue()));
        final ObjectName cache = second.caches().get(1);
        assertThat(export(cache).get("ActiveObjects").labels())
            .isEqualTo(Map.of("cache", cache.getKeyProperty("name"), "instance_id", "2"));
    }

    @Test
    void namesAndTypesFollowPrometheusConventions() throws Exception {
        final Kmem4jMBeans.Registration r = register();
        final List<Sample> all = new ArrayList<>(export(r.allocator()).values());
        all.addAll(export(r.caches().get(0)).values());
        for (final Sample s : all) {
            assertThat(s.name()).matches(METRIC_NAME).startsWith("kmem4j_");
            // the exporter's client library (1.x) strips these suffixes from gauges
            assertThat(s.name()).doesNotEndWith("_info").doesNotEndWith("_created").doesNotEndWith("_bucket");
            assertThat(s.type()).isIn("COUNTER", "GAUGE");
            assertThat(s.name().endsWith("_total")).as("%s: counters and only counters end in _total", s)
                .isEqualTo(s.type().equals("COUNTER"));
            assertThat(s.labels().keySet()).doesNotContain("instance", "job"); // Prometheus' own target labels
        }
    }

    @Test
    void anAgentThatServesNothingExportsEnabledZeroAndZeros() throws Exception {
        final Kmem4jMBeans.Registration r = Kmem4jMBeans.registerDisabled(server, "JDK 99 does not match",
            Map.of("summary", "true"));
        final Map<String, Sample> allocator = export(r.allocator());
        assertThat(allocator.get("Enabled")).isEqualTo(new Sample("kmem4j_enabled", "GAUGE", Map.of(), 0));
        assertThat(allocator.get("Allocations")).isEqualTo(new Sample("kmem4j_allocations_total", "COUNTER",
            Map.of(), 0));
    }

    private Kmem4jMBeans.Registration register() {
        final StatsSnapshots snapshots = new StatsSnapshots(TestStats::sample);
        final Kmem4jMBeans.Registration r = Kmem4jMBeans.register(server, new AllocatorView(snapshots,
            TestStats::sample, () -> 0, new LinkedHashMap<>(Map.of("magazineRounds", "32")), () -> 0));
        assertThat(r.problems()).isEmpty();
        return r;
    }

    /** What the exporter makes of every attribute of {@code name}, by attribute (unexported ones left out). */
    private Map<String, Sample> export(final ObjectName name) throws Exception {
        final Map<String, Sample> samples = new TreeMap<>();
        for (final MBeanAttributeInfo info : server.getMBeanInfo(name).getAttributes()) {
            final Object value = server.getAttribute(name, info.getName());
            final Sample s = apply(name, info.getName(), value);
            if (NOT_EXPORTED.contains(info.getName())) {
                assertThat(s).as("%s.%s is not exported", name, info.getName()).isNull();
            } else {
                assertThat(s).as("%s.%s = %s is exported", name, info.getName(), value).isNotNull();
                samples.put(info.getName(), s);
            }
        }
        return samples;
    }

    /** The JMX exporter's rule matching (JmxCollector.Receiver.recordBean), for one attribute. */
    private static Sample apply(final ObjectName bean, final String attribute, final Object value) {
        // JmxMBeanPropertyCache: key properties in the order they were registered
        final String beanName = bean.getDomain() + "<" + bean.getKeyPropertyListString().replace(",", ", ") + "><>";
        for (final Rule rule : rules) {
            final String attr = rule.snakeCase() ? SNAKE.matcher(attribute).replaceAll("$1_$2").toLowerCase() : attribute;
            final Matcher m = rule.pattern().matcher(beanName + attr + ": " + value);
            if (!m.matches()) {
                continue;
            }
            final double number;
            if (rule.value() != null) {
                number = Double.parseDouble(m.replaceAll(rule.value()));
            } else if (value instanceof Number n) {
                number = n.doubleValue();
            } else if (value instanceof Boolean b) {
                number = b ? 1 : 0;
            } else {
                return null; // the exporter ignores it
            }
            final Map<String, String> labels = new TreeMap<>();
            rule.labels().forEach((k, v) -> {
                final String labelValue = m.replaceAll(v);
                if (!labelValue.isEmpty()) {
                    labels.put(m.replaceAll(k).toLowerCase(), labelValue);
                }
            });
            return new Sample(m.replaceAll(rule.name()).toLowerCase(), rule.type(), labels, number);
        }
        return null;
    }

    /** Just enough YAML for the rules file: "- pattern:" items with scalar keys and a labels map. */
    static List<Rule> parse(final List<String> lines) {
        final List<Rule> out = new ArrayList<>();
        Map<String, String> current = null;
        Map<String, String> labels = null;
        boolean inLabels = false;
        boolean inRules = false;
        for (final String raw : lines) {
            final String line = raw.replaceAll("\\s+#.*$", "");
            if (line.isBlank() || line.trim().startsWith("#")) {
                continue;
            }
            if (line.equals("rules:")) {
                inRules = true;
                continue;
            }
            if (!inRules) {
                continue;
            }
            if (line.startsWith("  - ")) {
                if (current != null) {
                    out.add(rule(current, labels));
                }
                current = new LinkedHashMap<>();
                labels = new LinkedHashMap<>();
                inLabels = false;
                keyValue(line.substring(4), current);
            } else if (line.startsWith("      ") && inLabels) {
                keyValue(line.trim(), labels);
            } else if (line.startsWith("    ")) {
                inLabels = line.trim().equals("labels:");
                if (!inLabels) {
                    keyValue(line.trim(), current);
                }
            } else {
                throw new AssertionError("unexpected line in " + RULES + ": " + raw);
            }
        }
        if (current != null) {
            out.add(rule(current, labels));
        }
        return out;
    }

    private static Rule rule(final Map<String, String> keys, final Map<String, String> labels) {
        assertThat(keys).containsKeys("pattern", "name", "type");
        return new Rule(Pattern.compile("^.*(?:" + keys.get("pattern") + ").*$"), keys.get("name"), keys.get("type"),
            keys.get("value"), Boolean.parseBoolean(keys.getOrDefault("attrNameSnakeCase", "false")), labels);
    }

    private static void keyValue(final String text, final Map<String, String> into) {
        final int colon = text.indexOf(": ");
        assertThat(colon).as("key: value in '%s'", text).isPositive();
        into.put(text.substring(0, colon), scalar(text.substring(colon + 2).trim()));
    }

    private static String scalar(final String s) {
        if (s.startsWith("'") && s.endsWith("'")) {
            return s.substring(1, s.length() - 1).replace("''", "'");
        }
        if (s.startsWith("\"") && s.endsWith("\"")) {
            return s.substring(1, s.length() - 1).replace("\\\"", "\"").replace("\\\\", "\\");
        }
        return s;
    }
}
