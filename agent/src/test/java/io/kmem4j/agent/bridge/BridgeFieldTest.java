package io.kmem4j.agent.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.function.IntFunction;

import org.junit.jupiter.api.Test;

/** The bridge's fields through Unsafe read and write what reflection reads and writes, and refuse what reflection refuses. */
class BridgeFieldTest {
    @Test
    void readsAndWritesTheFieldReflectionSees() throws Exception {
        final BootstrapBridge.Members bridge = BootstrapBridge.members();
        final Object before = bridge.cleanerMark.get();
        try {
            final Object mark = new Object();
            bridge.cleanerMark.set(mark);
            assertThat(bridge.cleanerMark.field().get(null)).as("as reflection reads it").isSameAs(mark);
            bridge.cleanerMark.field().set(null, "written by reflection");
            assertThat(bridge.cleanerMark.get()).isEqualTo("written by reflection");
        } finally {
            bridge.cleanerMark.set(before);
        }
    }

    @Test
    void aValueOfAnotherTypeIsRefusedAndTheFieldKeepsItsValue() throws Exception {
        final BootstrapBridge.Members bridge = BootstrapBridge.members();
        final Object before = bridge.allocator.get();
        assertThatIllegalArgumentException().isThrownBy(() -> bridge.allocator.set("not an IntFunction"))
            .withMessageContaining("allocator").withMessageContaining("java.lang.String");
        assertThat(bridge.allocator.get()).isSameAs(before);
        assertThat(bridge.allocator.field().getType()).isEqualTo(IntFunction.class);
    }

    @Test
    void onlyStaticNonFinalReferenceFieldsAreTaken() throws Exception {
        assertThatIllegalArgumentException().isThrownBy(() -> new BridgeField(Integer.class.getField("MAX_VALUE")))
            .withMessageContaining("not a static, non-final reference field");
    }
}
