package io.kmem4j.it.apps;

import java.nio.ByteBuffer;

/** Calls {@code ByteBuffer.allocateDirect} from a package ExclusionApp's exclusion does not name. */
public final class IncludedAllocator {
    private IncludedAllocator() {
    }

    public static ByteBuffer allocate(int capacity) {
        return ByteBuffer.allocateDirect(capacity);
    }
}
