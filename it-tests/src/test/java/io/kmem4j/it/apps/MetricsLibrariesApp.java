package io.kmem4j.it.apps;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.instrumentation.runtimetelemetry.RuntimeTelemetry;
import io.opentelemetry.instrumentation.runtimetelemetry.RuntimeTelemetryBuilder;
import io.opentelemetry.instrumentation.runtimetelemetry.internal.Experimental;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MBeanServer;

/**
 * The three metrics libraries an operator's service already runs, each bound the way its
 * documentation says and none told about kmem4j: Micrometer's {@code JvmMemoryMetrics} on a
 * {@code SimpleMeterRegistry}, Prometheus client_java's {@code JvmBufferPoolMetrics} scraped as text,
 * and OpenTelemetry's runtime telemetry read through an {@code InMemoryMetricReader} (its buffer-pool
 * metrics are experimental: switched on with its {@code Experimental} hook, as the OpenTelemetry agent
 * does for {@code otel.instrumentation.runtime-telemetry.emit-experimental-telemetry=true}).
 *
 * <p>It holds {@value #SMALL} buffers of 1000 bytes and {@value #LARGE} of 30000 bytes, waits (at most
 * 30 s) until an agent registered {@code kmem4j:type=Allocator}, binds the libraries, and then, with
 * nothing allocating, prints one line per source, each {@code <source>: count=N capacity=N used=N}
 * for the {@code kmem4j} pool ({@code allocator:} is that bean's {@code LiveBuffers},
 * {@code BytesInUse}, {@code BytesReserved}), {@code direct:} for the JDK's pool, the raw Prometheus
 * and OpenTelemetry lines it parsed ({@code prometheus-text:}, {@code otel-point:}), and the platform
 * list's names ({@code pools: [..]}). The allocator is read before and after the libraries; the
 * round is repeated (at most 20 times) until both reads agree, so every line comes from one state.
 * Exit 1 when the bean never appears or the state never held still.
 */
public final class MetricsLibrariesApp {

    private static final int SMALL = 100;
    private static final int LARGE = 20;
    private static final AttributeKey<String> OTEL_POOL = AttributeKey.stringKey("jvm.buffer.pool.name");

    private MetricsLibrariesApp() {
    }

    public static void main(String[] args) throws Exception {
        List<ByteBuffer> held = new ArrayList<>();
        for (int i = 0; i < SMALL; i++) {
            held.add(ByteBuffer.allocateDirect(1000));
        }
        for (int i = 0; i < LARGE; i++) {
            held.add(ByteBuffer.allocateDirect(30000));
        }
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        if (!BeanReads.awaitAllocator(30_000)) {
            System.out.println("no kmem4j:type=Allocator after 30 s");
            System.exit(1);
        }
        List<String> names = new ArrayList<>();
        ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).forEach(p -> names.add(p.getName()));
        System.out.println("pools: " + names);
        List<String> remote = new ArrayList<>();
        ManagementFactory.getPlatformMXBeans(server, BufferPoolMXBean.class).forEach(p -> remote.add(p.getName()));
        System.out.println("pools over the MBean server: " + remote);

        SimpleMeterRegistry micrometer = new SimpleMeterRegistry();
        new JvmMemoryMetrics().bindTo(micrometer);
        PrometheusRegistry prometheus = new PrometheusRegistry();
        JvmBufferPoolMetrics.builder().register(prometheus);
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build();
        RuntimeTelemetryBuilder builder = RuntimeTelemetry.builder(otel);
        Experimental.setEmitExperimentalMetrics(builder, true);
        try (RuntimeTelemetry unused = builder.build()) {
            for (int round = 1; round <= 20; round++) {
                String before = allocator();
                List<String> lines = new ArrayList<>();
                lines.add("micrometer: count=" + (long) gauge(micrometer, "jvm.buffer.count")
                        + " capacity=" + (long) gauge(micrometer, "jvm.buffer.total.capacity")
                        + " used=" + (long) gauge(micrometer, "jvm.buffer.memory.used"));
                Map<String, String> scraped = new TreeMap<>();
                ByteArrayOutputStream text = new ByteArrayOutputStream();
                PrometheusTextFormatWriter.create().write(text, prometheus.scrape());
                for (String line : text.toString(StandardCharsets.UTF_8).split("\n")) {
                    if (line.contains("pool=\"kmem4j\"")) {
                        lines.add("prometheus-text: " + line);
                        scraped.put(line.substring(0, line.indexOf('{')), line.substring(line.lastIndexOf(' ') + 1));
                    }
                }
                lines.add("prometheus: count=" + number(scraped.get("jvm_buffer_pool_used_buffers"))
                        + " capacity=" + number(scraped.get("jvm_buffer_pool_capacity_bytes"))
                        + " used=" + number(scraped.get("jvm_buffer_pool_used_bytes")));
                Map<String, Long> points = new TreeMap<>();
                for (MetricData m : reader.collectAllMetrics()) {
                    if (m.getName().startsWith("jvm.buffer.")) {
                        for (var p : m.getData().getPoints()) {
                            if ("kmem4j".equals(p.getAttributes().get(OTEL_POOL))) {
                                long v = ((LongPointData) p).getValue();
                                points.put(m.getName(), v);
                                lines.add("otel-point: " + m.getName() + " " + p.getAttributes() + " " + v + " " + m.getUnit());
                            }
                        }
                    }
                }
                lines.add("otel: count=" + points.get("jvm.buffer.count") + " capacity="
                        + points.get("jvm.buffer.memory.limit") + " used=" + points.get("jvm.buffer.memory.used"));
                String after = allocator();
                if (before.equals(after)) {
                    lines.add(0, "allocator: " + after);
                    for (BufferPoolMXBean p : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
                        if (p.getName().equals("direct")) {
                            lines.add("direct: count=" + p.getCount() + " capacity=" + p.getTotalCapacity()
                                    + " used=" + p.getMemoryUsed());
                        }
                    }
                    lines.add("held: " + held.size());
                    lines.forEach(System.out::println);
                    System.out.flush();
                    System.exit(0);
                }
                System.out.println("round " + round + ": the allocator moved (" + before + " -> " + after + "), again");
                Thread.sleep(300);
            }
        }
        System.out.println("the allocator never held still");
        System.exit(1);
    }

    private static String allocator() throws Exception {
        Map<String, Long> a = BeanReads.freshAllocator("LiveBuffers", "BytesInUse", "BytesReserved");
        return "count=" + a.get("LiveBuffers") + " capacity=" + a.get("BytesInUse") + " used=" + a.get("BytesReserved");
    }

    private static double gauge(SimpleMeterRegistry registry, String name) {
        Gauge g = registry.find(name).tag("id", "kmem4j").gauge();
        return g == null ? -1 : g.value();
    }

    private static String number(String prometheusValue) {
        return prometheusValue == null ? "null" : String.valueOf((long) Double.parseDouble(prometheusValue));
    }
}
