package io.kmem4j.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;

import io.kmem4j.agent.jmx.AllocatorView;
import io.kmem4j.agent.jmx.Kmem4jMBeans;
import io.kmem4j.agent.jmx.StatsSnapshots;
import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import org.junit.jupiter.api.Test;

/** Which beans {@code slabtop} reads: the agent's own allocator by default, a named one with {@code --allocator}. */
class SlabtopBeansTest {
    private final MBeanServer server = MBeanServerFactory.newMBeanServer();

    @Test
    void theDefaultIsTheAgentsOwnAllocatorAndANamedOneShowsOnlyItsCaches() throws Exception {
        try (SlabAllocator own = new SlabAllocator(SlabAllocatorConfig.defaults());
             SlabAllocator netty = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            // the named one first: the default must not pick it although it is there before the agent's own
            Kmem4jMBeans.register(server, view(netty), "netty");
            Kmem4jMBeans.register(server, view(own), null);

            final ObjectName mine = SlabtopCommand.findAllocator(server, null, 0);
            final ObjectName named = SlabtopCommand.findAllocator(server, "netty", 0);
            assertThat(mine).isEqualTo(new ObjectName("kmem4j:type=Allocator"));
            assertThat(named).isEqualTo(new ObjectName("kmem4j:type=Allocator,name=netty"));
            assertThat(SlabtopCommand.findAllocator(server, "grizzly", 0)).isNull();

            final int classes = own.stats().caches().size();
            assertThat(SlabtopCommand.cacheNames(server, mine)).hasSize(classes)
                .allSatisfy(n -> assertThat(n.getKeyProperty("allocator")).isNull());
            assertThat(SlabtopCommand.cacheNames(server, named)).hasSize(classes)
                .allSatisfy(n -> assertThat(n.getKeyProperty("allocator")).isEqualTo("netty"));
        }
    }

    @Test
    void withOnlyANamedAllocatorTheDefaultFindsNone() throws Exception {
        try (SlabAllocator netty = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            Kmem4jMBeans.register(server, view(netty), "netty");
            assertThat(SlabtopCommand.findAllocator(server, null, 0)).isNull();
        }
    }

    private static AllocatorView view(final SlabAllocator allocator) {
        return new AllocatorView(new StatsSnapshots(allocator::stats), allocator, new LinkedHashMap<>(Map.of()),
            () -> 0);
    }
}
