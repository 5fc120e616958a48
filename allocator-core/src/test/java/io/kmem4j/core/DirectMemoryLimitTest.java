package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The limit read from {@code VM}'s static field is what {@code VM.maxDirectMemory()} answers. */
class DirectMemoryLimitTest {
    @Test
    void theFieldReadsAsTheJdksMethodAnswers() {
        final long viaMethod = DirectMemoryLimit.viaMethod();
        assertThat(viaMethod).as("VM.maxDirectMemory() (jdk.internal.misc is exported to the tests)").isPositive();
        assertThat(DirectMemoryLimit.bytes()).isEqualTo(viaMethod);
    }
}
