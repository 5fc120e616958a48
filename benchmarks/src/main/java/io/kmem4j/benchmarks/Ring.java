package io.kmem4j.benchmarks;

import static io.kmem4j.benchmarks.Unsafes.allocateMemory;
import static io.kmem4j.benchmarks.Unsafes.freeMemory;
import static io.kmem4j.benchmarks.Unsafes.setMemory;

/**
 * One thread's slots of live buffers, the shape every workload is built from: the ring (release a
 * slot, allocate into it), the size mix (grow and drain a live set), the chain (a list through the
 * slots' memory) and the GC-only ring (drop instead of release).
 *
 * <p>Not thread-safe: a ring is filled, used and emptied by one thread (JMH's per-thread state).
 */
abstract class Ring {
    /** @return the number of slots. */
    abstract int slots();

    /** @return true when {@code slot} holds a buffer. */
    abstract boolean occupied(int slot);

    /** Allocates a buffer of {@code size} bytes into the empty {@code slot}. */
    abstract void allocate(int slot, int size);

    /** Releases what {@code slot} holds (explicitly, the flavour's way); the slot is empty afterwards. */
    abstract void release(int slot);

    /**
     * Forgets what {@code slot} holds without releasing it: only GC can give its memory back.
     *
     * @throws UnsupportedOperationException for flavours whose buffers GC never reclaims
     */
    void drop(final int slot) {
        throw new UnsupportedOperationException("this allocator's buffers are never reclaimed by GC");
    }

    /** @return the native address of the buffer in {@code slot}. */
    abstract long address(int slot);

    /** Releases the buffer in {@code slot}, if any, and allocates a new one of {@code size} bytes there. */
    final void replace(final int slot, final int size) {
        if (occupied(slot)) {
            release(slot);
        }
        allocate(slot, size);
    }

    /** Allocates a buffer of {@code size} bytes into every slot. */
    final void fill(final int size) {
        for (int i = 0; i < slots(); i++) {
            replace(i, size);
        }
    }

    /** Releases every buffer held; the ring is empty afterwards. */
    final void releaseAll() {
        for (int i = 0; i < slots(); i++) {
            if (occupied(i)) {
                release(i);
            }
        }
    }

    /** A ring of buffer objects, for every flavour with an object API. */
    static final class Objects extends Ring {
        private final Flavour flavour;
        private final Object[] slots;

        Objects(final Flavour flavour, final int slots) {
            this.flavour = flavour;
            this.slots = new Object[slots];
        }

        @Override
        int slots() {
            return slots.length;
        }

        @Override
        boolean occupied(final int slot) {
            return slots[slot] != null;
        }

        @Override
        void allocate(final int slot, final int size) {
            slots[slot] = flavour.allocate(size);
        }

        @Override
        void release(final int slot) {
            final Object b = slots[slot];
            slots[slot] = null;
            flavour.release(b);
        }

        @Override
        void drop(final int slot) {
            if (!flavour.reclaimedByGc()) {
                throw new UnsupportedOperationException("allocator=" + flavour.name + ": dropped buffers are never"
                    + " reclaimed by GC");
            }
            slots[slot] = null;
        }

        @Override
        long address(final int slot) {
            return flavour.address(slots[slot]);
        }
    }

    /** A ring of raw {@code Unsafe.allocateMemory} addresses (malloc, zeroed with {@code setMemory}). */
    static final class Addresses extends Ring {
        private final long[] slots;

        Addresses(final int slots) {
            this.slots = new long[slots];
        }

        @Override
        int slots() {
            return slots.length;
        }

        @Override
        boolean occupied(final int slot) {
            return slots[slot] != 0;
        }

        @Override
        void allocate(final int slot, final int size) {
            final long a = allocateMemory(size);
            setMemory(a, size, (byte) 0);
            slots[slot] = a;
        }

        @Override
        void release(final int slot) {
            freeMemory(slots[slot]);
            slots[slot] = 0;
        }

        @Override
        long address(final int slot) {
            return slots[slot];
        }
    }
}
