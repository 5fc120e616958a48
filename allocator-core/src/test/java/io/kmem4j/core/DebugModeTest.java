package io.kmem4j.core;

import static io.kmem4j.core.TestSupport.fill;
import static io.kmem4j.core.TestSupport.firstNot;
import static io.kmem4j.core.TestSupport.invokeCleaner;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What debug mode adds; runs in the build's {@code debug-mode} surefire execution. */
class DebugModeTest {
    @BeforeEach
    void onlyInDebugMode() {
        Assumptions.assumeTrue(Debug.ON, "run with -Dkmem4j.debug=true (surefire execution debug-mode)");
    }

    @Test
    void freedMemoryIsPoisonedAndRecycledMemoryIsZeroAgain() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            final ByteBuffer root = a.allocate(4096);
            fill(root, (byte) 0x11);
            final ByteBuffer staleView = root.duplicate();
            invokeCleaner(root);
            // a use-after-free through a view now reads poison, not the old data
            assertThat(firstNot(staleView, Debug.POISON)).isEqualTo(-1);
            final ByteBuffer again = a.allocate(4096);
            assertThat(firstNot(again, (byte) 0)).isEqualTo(-1);
            invokeCleaner(again);
            a.checkInvariants();
        }
    }
}
