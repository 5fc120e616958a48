package io.kmem4j.agent.config;

import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

import io.kmem4j.agent.pool.PoolSpec;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.entry;

/** The keys {@code presets}, {@code pools} and {@code excludeCallers}: syntax, errors, agent-argument lists. */
class PoolConfigTest {
    private static AgentConfig args(final String agentArgs) {
        return AgentConfig.load(agentArgs, new Properties(), Map.of());
    }

    @Test
    void listValuesInTheAgentArgumentsMayContainCommas() {
        assertThat(AgentConfig.parseArgs("presets=netty,other,summary=true,excludeCallers=com.acme.,org.foo."))
            .containsExactly(entry("presets", "netty,other"), entry("summary", "true"),
                entry("excludeCallers", "com.acme.,org.foo."));
        assertThat(AgentConfig.parseArgs("pools=a.B#r(java.nio.ByteBuffer,int)/a.B#t(int),logLevel=debug"))
            .containsExactly(entry("pools", "a.B#r(java.nio.ByteBuffer,int)/a.B#t(int)"), entry("logLevel", "debug"));
    }

    @Test
    void theNettyPresetIsTwoPoolsOneForEachLine() {
        final AgentConfig c = args("presets=netty");
        assertThat(c.pools).extracting(p -> p.name).containsExactly("netty-4.1", "netty-4.2");
        assertThat(c.pools).allMatch(p -> p.quiet);
        assertThat(c.pools.get(1).members.stream().map(Object::toString).collect(Collectors.toList())).contains(
            "io.netty.util.internal.PlatformDependent0#allocateDirectNoCleaner(int)",
            "io.netty.util.internal.PlatformDependent0#reallocateDirectNoCleaner(java.nio.ByteBuffer,int)",
            "io.netty.util.internal.DirectCleaner$CleanableDirectBufferImpl#clean()+original");
        assertThat(c.effective).containsEntry("presets", "netty");
        assertThat(args("presets=Netty; netty").pools).as("names are case-insensitive, repeats count once")
            .hasSize(2);
    }

    @Test
    void theNettyAllocatorPresetIsNoPoolButItsOwnSwitch() {
        final AgentConfig c = args("presets=netty-allocator");
        assertThat(c.nettyAllocator).isTrue();
        assertThat(c.pools).as("no pool spec: a rewrite of its own").isEmpty();
        assertThat(c.allocator.siteFramesToSkip()).as("a site is the code asking Netty's allocator")
            .contains("io.netty.buffer.", "io.grpc.netty.shaded.io.netty.buffer.");
        final AgentConfig both = args("presets=Netty-Allocator; netty");
        assertThat(both.nettyAllocator).isTrue();
        assertThat(both.pools).extracting(p -> p.name).containsExactly("netty-4.1", "netty-4.2");
        assertThat(args("presets=netty").nettyAllocator).isFalse();
        assertThat(args("presets=netty").allocator.siteFramesToSkip()).doesNotContain("io.netty.buffer.");
    }

    @Test
    void anUnknownPresetNamesKeyValueAndAllowed() {
        assertThatIllegalArgumentException().isThrownBy(() -> args("presets=netty,grizzly"))
            .withMessageContaining("presets=netty,grizzly").withMessageContaining("unknown preset 'grizzly'")
            .withMessageContaining("allowed").withMessageContaining("from: netty, netty-allocator");
    }

    @Test
    void userPoolsParseAndPresetsComeFirst() {
        final AgentConfig c = args("pools=com.acme.Pool#take(int)/com.acme.Pool#give(java.nio.ByteBuffer);"
            + "x.Y$Z#a(long)/x.Y$Z#r(java.nio.ByteBuffer, long)/x.Y$Z#f()+original,presets=netty");
        assertThat(c.pools).extracting(p -> p.name).containsExactly("netty-4.1", "netty-4.2",
            "com.acme.Pool#take(int)/com.acme.Pool#give(java.nio.ByteBuffer)",
            "x.Y$Z#a(long)/x.Y$Z#r(java.nio.ByteBuffer,long)/x.Y$Z#f()+original");
        final PoolSpec second = c.pools.get(3);
        assertThat(second.quiet).isFalse();
        assertThat(second.members.get(1).parameterTypes).containsExactly("java.nio.ByteBuffer", "long");
        assertThat(second.members.get(2).thenOriginal).isTrue();
        assertThat(second.members.get(2).internalClassName()).isEqualTo("x/Y$Z");
    }

    @Test
    void malformedPoolsNameKeyValueAndAllowed() {
        for (final String bad : new String[] {"com.acme.Pool#take(int)", "com.acme.Pool.take(int)/a.B#c()",
            "a.B#c(/a.B#d()", "a.B#c()+later/a.B#d()"}) {
            assertThatIllegalArgumentException().as(bad).isThrownBy(() -> AgentConfig.fromMap(Map.of("pools", bad)))
                .withMessageContaining("pools=" + bad).withMessageContaining("allowed");
        }
    }

    @Test
    void excludeCallersArePackagePrefixes() {
        assertThat(args("excludeCallers=com.acme.,org.foo.").excludeCallers).containsExactly("com.acme.", "org.foo.");
        assertThat(AgentConfig.load(null, new Properties(), Map.of("KMEM4J_EXCLUDE_CALLERS", "a.b.;c."))
            .excludeCallers).containsExactly("a.b.", "c.");
        assertThatIllegalArgumentException().isThrownBy(() -> args("excludeCallers=com/acme"))
            .withMessageContaining("excludeCallers=com/acme").withMessageContaining("allowed");
    }

    @Test
    void withoutTheKeysNothingIsServedAndTheEffectiveMapIsUnchanged() {
        final AgentConfig c = args(null);
        assertThat(c.pools).isEmpty();
        assertThat(c.excludeCallers).isEmpty();
        assertThat(c.effective).doesNotContainKeys("presets", "pools", "excludeCallers");
    }
}
