package io.kmem4j.agent.jmx;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;

import io.kmem4j.core.AllocatorStats;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code kmem4j} BufferPoolMXBean: its mapping of the Allocator's figures and its registration. */
class Kmem4jBufferPoolTest {
    private final StatsSnapshots snapshots = new StatsSnapshots(TestStats::sample);
    private final Kmem4jBufferPool pool = new Kmem4jBufferPool(snapshots);

    @Test
    void countCapacityAndMemoryAreLiveBuffersBytesInUseAndBytesReserved() {
        final AllocatorStats s = TestStats.sample();
        assertThat(s.liveBuffers()).isPositive();
        assertThat(s.bytesReserved()).isNotEqualTo(s.bytesInUse());
        assertThat(pool.getName()).isEqualTo("kmem4j");
        assertThat(pool.getCount()).isEqualTo(s.liveBuffers());
        assertThat(pool.getTotalCapacity()).isEqualTo(s.bytesInUse());
        assertThat(pool.getMemoryUsed()).isEqualTo(s.bytesReserved());
        assertThat(pool.getObjectName()).hasToString("java.nio:type=BufferPool,name=kmem4j");
    }

    @Test
    void itReadsTheSnapshotTheAllocatorBeanReads() {
        final AllocatorView view = new AllocatorView(snapshots, TestStats::sample, () -> 0, java.util.Map.of(), () -> 0);
        final long sequence = snapshots.get().sequence();
        assertThat(pool.getCount()).isEqualTo(view.getLiveBuffers());
        assertThat(pool.getMemoryUsed()).isEqualTo(view.getBytesReserved());
        assertThat(pool.getTotalCapacity()).isEqualTo(view.getBytesInUse());
        assertThat(snapshots.get().sequence()).as("one snapshot for both").isEqualTo(sequence);
    }

    @Test
    void registersAsTheJdkRegistersItsPoolsOnceAndWithTheJdksAttributes() throws Exception {
        final MBeanServer server = MBeanServerFactory.newMBeanServer();
        assertThat(Kmem4jBufferPool.register(server, pool)).isNull();
        assertThat(Kmem4jBufferPool.register(server, pool)).as("already there: fine").isNull();
        final ObjectName name = Kmem4jBufferPool.objectName();
        final ObjectName direct = new ObjectName("java.nio:type=BufferPool,name=direct");
        // the same attributes, of the same types, as the JDK's own pool on the platform server
        final MBeanServer platform = ManagementFactory.getPlatformMBeanServer();
        for (final var info : platform.getMBeanInfo(direct).getAttributes()) {
            assertThat(server.getMBeanInfo(name).getAttributes()).as(info.getName())
                .anySatisfy(a -> {
                    assertThat(a.getName()).isEqualTo(info.getName());
                    assertThat(a.getType()).isEqualTo(info.getType());
                });
        }
        assertThat(server.getAttribute(name, "Name")).isEqualTo("kmem4j");
        assertThat(server.getAttribute(name, "Count")).isEqualTo(TestStats.sample().liveBuffers());
        assertThat(server.getAttribute(name, "MemoryUsed")).isEqualTo(TestStats.sample().bytesReserved());
        assertThat(server.getAttribute(name, "TotalCapacity")).isEqualTo(TestStats.sample().bytesInUse());
        assertThat(ManagementFactory.newPlatformMXBeanProxy(server, name.toString(), BufferPoolMXBean.class).getCount())
            .isEqualTo(TestStats.sample().liveBuffers());
    }

    /** As {@code ManagementFactory.addMXBean} registers the platform's pools: a DynamicMBean as it is. */
    @Test
    void aPlatformServerRegistersItAsItIsAndClientsGetTypedProxies() throws Exception {
        final MBeanServer server = MBeanServerFactory.newMBeanServer();
        assertThat(pool).isInstanceOf(javax.management.DynamicMBean.class);
        server.registerMBean(pool, pool.getObjectName());
        assertThat(server.isInstanceOf(pool.getObjectName(), BufferPoolMXBean.class.getName())).isTrue();
        assertThat(Kmem4jBufferPool.register(server, pool)).isNull();
        final java.util.List<BufferPoolMXBean> proxies = ManagementFactory.getPlatformMXBeans(server, BufferPoolMXBean.class);
        assertThat(proxies).singleElement().satisfies(p -> {
            assertThat(p.getName()).isEqualTo("kmem4j");
            assertThat(p.getMemoryUsed()).isEqualTo(TestStats.sample().bytesReserved());
        });
    }

    @Test
    void outsideThePlatformListItSaysSo() {
        // this test JVM has no agent: the pool is not in the platform list
        final String problem = Kmem4jBufferPool.registerOnPlatform(new Kmem4jBufferPool(snapshots));
        try {
            assertThat(problem).contains("not in ManagementFactory.getPlatformMXBeans");
        } finally {
            try {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(Kmem4jBufferPool.objectName());
            } catch (final Exception ignored) {
                // not registered
            }
        }
    }
}
