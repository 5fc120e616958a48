package io.kmem4j.benchmarks.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

class ServerSupportTest {

    @Test
    void theMixedSequenceHoldsTheSizesInTheirShares() {
        final Map<Integer, Long> counts = Arrays.stream(ServerSupport.MIXED).boxed()
            .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
        assertThat(counts).containsExactlyInAnyOrderEntriesOf(Map.of(256, 40L, 2048, 25L, 8192, 15L, 24_576, 10L,
            61_440, 8L, 204_800, 2L));
        assertThat(ServerSupport.MIXED).as("shuffled, not sorted").isNotEqualTo(Arrays.stream(ServerSupport.MIXED)
            .sorted().toArray());
    }
}
