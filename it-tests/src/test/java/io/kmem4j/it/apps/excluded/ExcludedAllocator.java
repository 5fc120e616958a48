package io.kmem4j.it.apps.excluded;

import io.kmem4j.it.apps.IncludedAllocator;
import java.nio.ByteBuffer;

/** Calls {@code ByteBuffer.allocateDirect} from the package ExclusionApp runs with in {@code excludeCallers}. */
public final class ExcludedAllocator {
    private ExcludedAllocator() {
    }

    public static ByteBuffer allocate(int capacity) {
        return ByteBuffer.allocateDirect(capacity);
    }

    /** An indirect call: the direct caller of allocateDirect is {@link IncludedAllocator}, not excluded. */
    public static ByteBuffer viaHelper(int capacity) {
        return IncludedAllocator.allocate(capacity);
    }
}
