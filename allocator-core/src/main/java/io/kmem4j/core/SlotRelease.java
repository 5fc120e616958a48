package io.kmem4j.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;

/**
 * The release hook of one object slot of a slab, shared by every tracked buffer built over that
 * slot in the owned lifecycle ({@link OwnedLifecycle}): the thunk of their JDK cleaners. The agent's
 * rewritten {@code clean()} passes the cleaner being run ({@link #accept}), so the hook tells the
 * buffer over the slot now from a buffer that was over it before: exactly once is one CAS of the
 * slot in {@link Slab#cleaners} from that cleaner to {@code null}. A second, racing or stale release
 * (a cleaner whose slot was released and handed out again since) loses the CAS and changes nothing.
 *
 * <p>Why per slot and not per buffer: a buffer that GC frees drags its cleaner and the cleaner's
 * thunk through one young collection (the cleaner must stay reachable until it ran, so GC copies it
 * and, with a small young generation, promotes it). A thunk per buffer was a third object per
 * allocation and half of what every collection copied; the JDK's own buffers carry a 32-byte
 * {@code Deallocator} each. The slot's hook (24 bytes, immutable) is made once, on the slot's first
 * tracked buffer, and lives as long as the slab. The cleaner and the buffer's capacity stay in the
 * slab's dense arrays ({@link Slab#cleaners}, {@link Slab#capacities}): a young cleaner stored into
 * an old object marks a card for the next young collection to scan, and 128 slots share a card there
 * (measured: G1's refinement threads took ten times the CPU when the cleaner was a field of the hook).
 *
 * <p>The slot holds the cleaner strongly while its buffer is handed out (the JDK's list does that
 * for the JDK's cleaners): an unreachable cleaner would never run.
 *
 * <p>Threads: {@link Slab#arm} by the thread handing the object out, before the buffer is published;
 * {@link #accept} by any thread ({@code Unsafe.invokeCleaner}, {@code cleaner().clean()}, the JDK's
 * cleaner thread after GC). It never throws: a throwing thunk makes the JDK end the VM.
 */
final class SlotRelease implements Runnable, Consumer<Object> {
    /** Elements of {@link Slab#cleaners}. */
    static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Object[].class);

    private final SlabAllocator allocator;
    private final Slab slab;
    private final int index;

    SlotRelease(final SlabAllocator allocator, final Slab slab, final int index) {
        this.allocator = allocator;
        this.slab = slab;
        this.index = index;
    }

    /** @return the cleaner of the buffer over the slot now, or {@code null} */
    Object cleaner() {
        return SLOTS.getAcquire(slab.cleaners, index);
    }

    /**
     * Claims the release for cleaner {@code c}.
     *
     * @return true once per armed cleaner: for the one call that must release the block
     */
    boolean claim(final Object c) {
        return c != null && SLOTS.compareAndSet(slab.cleaners, index, c, null);
    }

    /** Gives the block back (after a successful {@link #claim}). */
    void free() {
        OutOfLine.release(allocator, slab.base + (long) index * slab.objectSize, slab.capacities[index], slab.chunk);
    }

    /** Runs cleaner {@code c}'s release: once for the cleaner armed last, nothing for any other. */
    @Override
    public void accept(final Object c) {
        if (claim(c)) {
            free();
        }
    }

    /**
     * The JDK's own {@code clean()} body (17-25, without the agent's rewrite: unit tests, a copy of
     * kmem4j without an agent) calls this once per cleaner, right after its list's {@code remove()}
     * marked that cleaner removed ({@code next == itself}); without the rewrite the slot is released
     * only through its own cleaner, so the cleaner the slot keeps is the one running, and it carries
     * that mark. Any other call, one that cannot say which cleaner runs (a prologue of an older kmem4j
     * calling {@code run()} on every {@code clean()}, the JDK's body run again for a cleaner
     * {@link #accept} already released), finds the slot's cleaner unmarked, or the slot empty, and
     * does nothing: a block kept is safe, a block freed under a live buffer is not.
     */
    @Override
    public void run() {
        final Object c = cleaner();
        if (JdkCleaners.removedByTheJdk(c)) {
            accept(c);
        }
    }

    /**
     * The thunk of a tracked buffer picked by allocation-site sampling: releases through its slot's
     * hook and gives its site's share back, once.
     */
    static final class Sampled implements Runnable, Consumer<Object> {
        private final SlotRelease slot;
        private final SiteSampler.Site site;
        private final int capacity;

        Sampled(final SlotRelease slot, final SiteSampler.Site site, final int capacity) {
            this.slot = slot;
            this.site = site;
            this.capacity = capacity;
        }

        @Override
        public void accept(final Object c) {
            if (slot.claim(c)) {
                try {
                    site.released(capacity);
                } catch (final Throwable ignored) {
                    // statistics only; the release must still happen and nothing may be thrown
                }
                slot.free();
            }
        }

        /** As {@link SlotRelease#run()}. */
        @Override
        public void run() {
            final Object c = slot.cleaner();
            if (JdkCleaners.removedByTheJdk(c)) {
                accept(c);
            }
        }
    }
}
