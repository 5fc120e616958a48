package io.kmem4j.agent.bridge;

import java.lang.reflect.Field;

/** Tests of other packages: a {@link BridgeField} over a test's own static field, as the bridge's. */
public final class BridgeFields {
    private BridgeFields() {
    }

    /** @return a bridge field over {@code field} (static, non-final, of a reference type) */
    public static BridgeField of(final Field field) {
        return new BridgeField(field);
    }
}
