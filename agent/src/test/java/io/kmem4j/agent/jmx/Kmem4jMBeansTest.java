package io.kmem4j.agent.jmx;

import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.Attribute;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanOperationInfo;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;
import javax.management.StandardMBean;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

class Kmem4jMBeansTest {
    private static final Set<String> OPEN_SCALAR_TYPES = Set.of("int", "long", "double", "boolean",
        "java.lang.String", "java.lang.Integer", "java.lang.Long", "java.lang.Double", "java.lang.Boolean");

    private final MBeanServer server = MBeanServerFactory.newMBeanServer();
    private final AtomicReference<AllocatorStats> stats = new AtomicReference<>(TestStats.sample());

    private AllocatorView view() {
        return new AllocatorView(new StatsSnapshots(stats::get), stats::get, () -> 4096,
            new LinkedHashMap<>(Map.of("magazineRounds", "32")), () -> 0);
    }

    @Test
    void registersTheAllocatorAndOneBeanPerCache() throws Exception {
        final Kmem4jMBeans.Registration r = Kmem4jMBeans.register(server, view());

        assertThat(r.problems()).isEmpty();
        assertThat(r.allocator()).isEqualTo(new ObjectName("kmem4j:type=Allocator"));
        assertThat(r.caches()).containsExactly(new ObjectName("kmem4j:type=SlabCache,name=kmem4j-64"),
            new ObjectName("kmem4j:type=SlabCache,name=kmem4j-4096"),
            new ObjectName("kmem4j:type=SlabCache,name=kmem4j-65536"));
        assertThat(server.queryNames(new ObjectName("kmem4j:*"), null)).hasSize(4);
    }

    @Test
    void everyAttributeIsAnOpenScalarAndTheFiguresAddUp() throws Exception {
        final Kmem4jMBeans.Registration r = Kmem4jMBeans.register(server, view());
        final Map<String, Object> allocator = readAll(r.allocator());
        long active = 0;
        long allocations = 0;
        long frees = 0;
        final Set<Object> sequences = new HashSet<>();
        sequences.add(allocator.get("SnapshotSequence"));
        for (final ObjectName cache : r.caches()) {
            final Map<String, Object> c = readAll(cache);
            sequences.add(c.get("SnapshotSequence"));
            assertThat(c.get("Name")).isEqualTo(cache.getKeyProperty("name"));
            assertThat((Long) c.get("TotalObjects"))
                .isEqualTo((Long) c.get("Slabs") * (Integer) c.get("ObjectsPerSlab"));
            assertThat((Long) c.get("ActiveBytes")).isEqualTo((Long) c.get("ActiveObjects") * (Integer) c.get("ObjectSize"));
            assertThat((Long) c.get("SlabBytes"))
                .isEqualTo((Long) c.get("Slabs") * (Integer) c.get("PagesPerSlab") * 65536L);
            active += (Long) c.get("ActiveObjects");
            allocations += (Long) c.get("Allocations");
            frees += (Long) c.get("Frees");
        }
        assertThat(sequences).as("one snapshot for all beans").hasSize(1);
        assertThat(active).isEqualTo(allocator.get("LiveBuffers"));
        assertThat(allocations).isEqualTo(allocator.get("Allocations"));
        assertThat(frees).isEqualTo(allocator.get("Frees"));
        assertThat(allocator.get("SlabCaches")).isEqualTo(r.caches().size());
        assertThat(allocator.get("Configuration")).isEqualTo("magazineRounds=32");
    }

    @Test
    void oneGetAttributesCallReadsOneSnapshotEvenWhenEveryReadWouldRefresh() throws Exception {
        final AtomicLong clock = new AtomicLong();
        final AtomicLong calls = new AtomicLong();
        final StatsSnapshots snapshots = new StatsSnapshots(() -> {
            final long n = calls.incrementAndGet();
            return TestStats.stats(List.of(TestStats.cache(64, 1024, 1, n, 10 * n), TestStats.cache(4096, 16, 1, 2 * n, 20 * n)));
        }, () -> clock.addAndGet(StatsSnapshots.MAX_AGE_NANOS + 1)); // every read finds the snapshot stale
        final AllocatorView view = new AllocatorView(snapshots, snapshots.get()::stats, () -> 0, Map.of(), () -> 0);
        final Kmem4jMBeans.Registration r = Kmem4jMBeans.register(server, view);

        final List<Attribute> a = server.getAttributes(r.allocator(),
            new String[] {"SnapshotSequence", "Allocations", "Frees", "LiveBuffers", "SnapshotSequence"}).asList();
        assertThat(a.get(0).getValue()).isEqualTo(a.get(4).getValue());
        assertThat((Long) a.get(1).getValue() - (Long) a.get(2).getValue()).isEqualTo(a.get(3).getValue());

        final List<Attribute> c = server.getAttributes(r.caches().get(1),
            new String[] {"SnapshotSequence", "ActiveObjects", "Allocations", "Frees", "SnapshotSequence"}).asList();
        assertThat(c.get(0).getValue()).isEqualTo(c.get(4).getValue());
        assertThat((Long) c.get(2).getValue() - (Long) c.get(3).getValue()).isEqualTo(c.get(1).getValue());
        // single reads outside getAttributes do refresh
        assertThat((Long) server.getAttribute(r.allocator(), "SnapshotSequence"))
            .isLessThan((Long) server.getAttribute(r.allocator(), "SnapshotSequence"));
    }

    @Test
    void operations() throws Exception {
        final Kmem4jMBeans.Registration r = Kmem4jMBeans.register(server, view());
        final Map<String, String> ops = new LinkedHashMap<>();
        for (final MBeanOperationInfo op : server.getMBeanInfo(r.allocator()).getOperations()) {
            ops.put(op.getName(), op.getReturnType());
        }
        assertThat(ops).containsOnly(Map.entry("trim", "long"), Map.entry("slabinfo", "java.lang.String"),
            Map.entry("resetPeaks", "void"), Map.entry("outstandingBySite", "java.lang.String"));
        assertThat((String) server.invoke(r.allocator(), "outstandingBySite", new Object[] {5}, new String[] {"int"}))
            .startsWith("allocation-site sampling is off");
        assertThat(server.invoke(r.allocator(), "trim", null, null)).isEqualTo(4096L);
        assertThat((String) server.invoke(r.allocator(), "slabinfo", null, null)).startsWith("slabinfo - version: 2.1\n");

        final long peak = (Long) server.getAttribute(r.allocator(), "PeakBytesInUse");
        assertThat(peak).isEqualTo(server.getAttribute(r.allocator(), "BytesInUse"));
        stats.set(TestStats.stats(List.of(TestStats.cache(64, 1024, 1, 1, 100))));
        server.invoke(r.allocator(), "resetPeaks", null, null);
        assertThat((Long) server.getAttribute(r.allocator(), "PeakBytesInUse")).isLessThan(peak)
            .isEqualTo(server.getAttribute(r.allocator(), "BytesInUse"));
        assertThat(server.getAttribute(r.allocator(), "PeakLiveBuffers")).isEqualTo(1L);
    }

    @Test
    void aServingAllocatorSaysEnabledWithNoReason() throws Exception {
        final Map<String, Object> a = readAll(Kmem4jMBeans.register(server, view()).allocator());
        assertThat(a).containsEntry("Enabled", true).containsEntry("DisabledReason", "");
    }

    @Test
    void anAgentThatServesNothingRegistersTheAllocatorWithItsReasonAndNoCaches() throws Exception {
        final Kmem4jMBeans.Registration r = Kmem4jMBeans.registerDisabled(server, "JDK 99 does not match",
            new LinkedHashMap<>(Map.of("summary", "true")));

        assertThat(r.problems()).isEmpty();
        assertThat(r.allocator()).isEqualTo(new ObjectName("kmem4j:type=Allocator"));
        assertThat(r.caches()).isEmpty();
        assertThat(server.queryNames(new ObjectName("kmem4j:*"), null)).containsExactly(r.allocator());
        final Map<String, Object> a = readAll(r.allocator());
        assertThat(a).containsEntry("Enabled", false).containsEntry("DisabledReason", "JDK 99 does not match")
            .containsEntry("Configuration", "summary=true").containsEntry("Allocations", 0L)
            .containsEntry("BytesReserved", 0L).containsEntry("SlabCaches", 0);
        assertThat(server.invoke(r.allocator(), "slabinfo", new Object[0], new String[0]))
            .isEqualTo("kmem4j interception is off: JDK 99 does not match\n");
        assertThat(server.invoke(r.allocator(), "trim", new Object[0], new String[0])).isEqualTo(0L);
    }

    @Test
    void aServingAgentTakesTheNameOfOneThatServedNothing() throws Exception {
        Kmem4jMBeans.registerDisabled(server, "an earlier attach failed", Map.of());
        final Kmem4jMBeans.Registration again = Kmem4jMBeans.registerDisabled(server, "so did this one", Map.of());
        assertThat(again.allocator()).as("the newest answer under the plain name")
            .isEqualTo(new ObjectName("kmem4j:type=Allocator"));
        assertThat(server.getAttribute(again.allocator(), "DisabledReason")).isEqualTo("so did this one");

        final Kmem4jMBeans.Registration serving = Kmem4jMBeans.register(server, view());

        assertThat(serving.problems()).isEmpty();
        assertThat(serving.allocator()).isEqualTo(new ObjectName("kmem4j:type=Allocator"));
        assertThat(server.getAttribute(serving.allocator(), "Enabled")).isEqualTo(true);
        assertThat(serving.caches()).contains(new ObjectName("kmem4j:type=SlabCache,name=kmem4j-64"));
        assertThat(server.queryNames(new ObjectName("kmem4j:type=Allocator,*"), null)).hasSize(1);
    }

    @Test
    void aServingAllocatorIsNeverReplaced() throws Exception {
        Kmem4jMBeans.register(server, view());
        final Kmem4jMBeans.Registration off = Kmem4jMBeans.registerDisabled(server, "a second load failed", Map.of());
        assertThat(off.allocator()).isEqualTo(new ObjectName("kmem4j:type=Allocator,instance=2"));
        assertThat(server.getAttribute(new ObjectName("kmem4j:type=Allocator"), "Enabled")).isEqualTo(true);
    }

    @Test
    void aSecondInstanceRegistersUnderItsOwnInstanceKey() throws Exception {
        final Kmem4jMBeans.Registration first = Kmem4jMBeans.register(server, view());
        final Kmem4jMBeans.Registration second = Kmem4jMBeans.register(server, view());

        assertThat(second.problems()).isEmpty();
        assertThat(second.allocator()).isEqualTo(new ObjectName("kmem4j:type=Allocator,instance=2"));
        assertThat(second.caches()).hasSameSizeAs(first.caches())
            .allSatisfy(n -> assertThat(n.getKeyProperty("instance")).isEqualTo("2"))
            .contains(new ObjectName("kmem4j:type=SlabCache,name=kmem4j-4096,instance=2"));
        assertThat(server.queryNames(new ObjectName("kmem4j:type=SlabCache,*"), null)).hasSize(6);
    }

    @Test
    void aNamedAllocatorRegistersBesideTheAgentsOwnWithItsNameOnEveryBean() throws Exception {
        final Kmem4jMBeans.Registration own = Kmem4jMBeans.register(server, view());
        final Kmem4jMBeans.Registration netty = Kmem4jMBeans.register(server, view(), "netty");

        assertThat(netty.problems()).isEmpty();
        assertThat(own.allocator()).isEqualTo(new ObjectName("kmem4j:type=Allocator"));
        assertThat(netty.allocator()).isEqualTo(new ObjectName("kmem4j:type=Allocator,name=netty"));
        assertThat(netty.caches()).hasSameSizeAs(own.caches())
            .allSatisfy(n -> assertThat(n.getKeyProperty("allocator")).isEqualTo("netty"))
            .contains(new ObjectName("kmem4j:type=SlabCache,allocator=netty,name=kmem4j-4096"));
        assertThat(server.queryNames(new ObjectName("kmem4j:type=SlabCache,*"), null)).hasSize(6);
        final Kmem4jMBeans.Registration again = Kmem4jMBeans.register(server, view(), "netty");
        assertThat(again.allocator()).as("a second agent's netty allocator")
            .isEqualTo(new ObjectName("kmem4j:type=Allocator,name=netty,instance=2"));
    }

    @Test
    void aTakenCacheNameIsSkippedNeverThrown() throws Exception {
        final ObjectName squatter = new ObjectName("kmem4j:type=SlabCache,name=kmem4j-4096");
        server.registerMBean(new StandardMBean(new Squatter(), SquatterMBean.class), squatter);

        final List<Kmem4jMBeans.Registration> results = new ArrayList<>();
        assertThatCode(() -> results.add(Kmem4jMBeans.register(server, view()))).doesNotThrowAnyException();

        final Kmem4jMBeans.Registration r = results.get(0);
        assertThat(r.allocator()).isEqualTo(new ObjectName("kmem4j:type=Allocator"));
        assertThat(r.caches()).hasSize(2).doesNotContain(squatter);
        assertThat(r.problems()).singleElement().asString().contains("kmem4j-4096").contains("already registered");
    }

    @Test
    void aFailingServerIsReportedNotThrown() {
        final MBeanServer broken = (MBeanServer) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {MBeanServer.class}, (proxy, method, args) -> {
                throw new SecurityException("no JMX for you");
            });
        final Kmem4jMBeans.Registration r = Kmem4jMBeans.register(broken, view());
        assertThat(r.allocator()).isNull();
        assertThat(r.problems()).singleElement().asString().contains("no JMX for you");
    }

    @Test
    void aRealAllocator() throws Exception {
        try (SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            final List<ByteBuffer> held = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                held.add(allocator.allocate(4000));
            }
            held.add(allocator.allocate(100));
            final Kmem4jMBeans.Registration r = Kmem4jMBeans.register(server, allocator, Map.of(), () -> 0);
            assertThat(r.problems()).isEmpty();
            assertThat(r.caches()).hasSize(allocator.stats().caches().size());
            assertThat(server.getAttribute(r.allocator(), "LiveBuffers")).isEqualTo(51L);
            assertThat(server.getAttribute(new ObjectName("kmem4j:type=SlabCache,name=kmem4j-4096"), "ActiveObjects"))
                .isEqualTo(50L);
            assertThat(server.getAttribute(new ObjectName("kmem4j:type=SlabCache,name=kmem4j-128"), "ActiveObjects"))
                .isEqualTo(1L);
            held.forEach(allocator::free);
        }
    }

    private Map<String, Object> readAll(final ObjectName name) throws Exception {
        final Map<String, Object> values = new LinkedHashMap<>();
        final MBeanAttributeInfo[] infos = server.getMBeanInfo(name).getAttributes();
        final String[] names = new String[infos.length];
        for (int i = 0; i < infos.length; i++) {
            assertThat(infos[i].getType()).as("type of %s.%s", name, infos[i].getName()).isIn(OPEN_SCALAR_TYPES);
            assertThat(infos[i].isWritable()).as("%s.%s is read-only", name, infos[i].getName()).isFalse();
            names[i] = infos[i].getName();
        }
        for (final Attribute a : server.getAttributes(name, names).asList()) {
            assertThat(a.getValue()).as("%s.%s", name, a.getName()).isInstanceOfAny(Number.class, String.class, Boolean.class);
            values.put(a.getName(), a.getValue());
        }
        assertThat(values.keySet()).as("attributes of %s", name).containsExactlyInAnyOrder(names);
        return values;
    }

    /** Something else's bean sitting at a kmem4j name. */
    public interface SquatterMBean {
        int getAnswer();
    }

    static final class Squatter implements SquatterMBean {
        @Override
        public int getAnswer() {
            return 42;
        }
    }
}
