package io.kmem4j.core;

import org.agrona.UnsafeApi;

/**
 * Zeroing of objects, the one memory write every allocation pays (on release by default).
 *
 * <p>On JDK 17 to 22, {@code Unsafe.setMemory} is not a JIT intrinsic: every call leaves compiled
 * code for the VM (a thread-state transition) before its {@code memset}, which costs more than
 * zeroing a small object. A JFR profile of the 256-byte ring on JDK 17 put a quarter of the tracked
 * path's samples in {@code setMemory}; {@code ZeroingBenchmark} (benchmarks module, one hot object,
 * busy 2-core VM) measured {@code setMemory} against a loop of 8-byte stores at 35 vs 8 ns for 256 B,
 * 54 vs 11 ns for 1 KiB and 127 vs 56 ns for 4 KiB on JDK 17, and 10 vs 8 ns (256 B) and 99 vs 19 ns
 * (4 KiB) on JDK 25, where {@code setMemory} is an intrinsic (JDK-8329331). Objects up to
 * {@value #STORE_LOOP_MAX_BYTES} bytes are therefore zeroed with plain stores the JIT compiles
 * inline; larger ones with {@code setMemory}.
 *
 * <p>The store loop writes {@code bytes} rounded up to a multiple of 8. Callers pass a capacity
 * inside an object of its size class (every class is a multiple of 64 bytes), so the rounding never
 * leaves the object. Threads: any; the caller owns the memory.
 */
final class Zeroing {
    /** Largest object zeroed with the store loop, bytes. */
    static final int STORE_LOOP_MAX_BYTES = 4096;

    private Zeroing() {
    }

    /**
     * Zeroes {@code [address, address + bytes)}, possibly up to the next multiple of 8.
     *
     * @param address start, 8-byte aligned
     * @param bytes   length, bytes, within an object whose size is a multiple of 8
     */
    static void zero(final long address, final int bytes) {
        if (bytes > STORE_LOOP_MAX_BYTES) {
            UnsafeApi.setMemory(address, bytes, (byte) 0);
            return;
        }
        final long end = address + ((bytes + 7) & ~7);
        for (long a = address; a < end; a += 8) {
            UnsafeApi.putLong(a, 0L);
        }
    }
}
