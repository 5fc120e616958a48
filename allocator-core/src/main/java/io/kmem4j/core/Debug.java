package io.kmem4j.core;

/**
 * Debug mode, {@code -Dkmem4j.debug=true}, read once into a {@code static final} so the JIT folds
 * every check away when it is off (Agrona's habit for switches):
 * <ul>
 *   <li>freed memory is poisoned with {@link #POISON} (a stale view reads {@code 0xDB}, not old data);</li>
 *   <li>every slab's equation {@code objects == inuse + free_in_bitmap} is checked on the slow paths;</li>
 *   <li>a release of an address already waiting in the releasing thread's magazines is refused and
 *       counted as a double free.</li>
 * </ul>
 * Zeroing on free is off in debug mode (poison and zeros cannot both be what a free leaves).
 */
final class Debug {
    /** True when {@code -Dkmem4j.debug=true}. */
    static final boolean ON = Boolean.getBoolean("kmem4j.debug");
    /** The byte a freed object is filled with in debug mode. */
    static final byte POISON = (byte) 0xDB;

    private Debug() {
    }

    /**
     * @return true when {@code address} already waits in {@code tc}'s magazines of {@code cls} (a
     *         double free, refused); otherwise poisons the object and returns false
     */
    static boolean refuses(final ThreadCache tc, final int cls, final long address, final int capacity) {
        if (tc.kind == ThreadCache.CACHING && tc.holds(cls, address)) {
            return true;
        }
        org.agrona.UnsafeApi.setMemory(address, capacity, POISON);
        return false;
    }
}
