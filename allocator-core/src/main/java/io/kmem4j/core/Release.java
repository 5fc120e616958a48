package io.kmem4j.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The release hook of a tracked buffer: the thunk of its JDK cleaner. It runs on
 * {@code Unsafe.invokeCleaner}, {@code cleaner().clean()}, or when GC finds the buffer and all its
 * views unreachable (then on the JDK's cleaner thread). It never throws: a throwing thunk makes the
 * JDK end the VM.
 *
 * <p>Exactly once: a cleaner in the JDK's list runs its thunk once (the list's {@code remove()}
 * says who was first). A cleaner outside the list (the owned lifecycle, {@link OwnedLifecycle}) has
 * no such guard, so the hook claims itself with one CAS on its own field (uncontended: the hook is
 * one buffer's) before it clears the slab slot that kept the cleaner reachable and frees the block;
 * a second, racing or stale release (of a buffer whose block was reused since) loses the claim and
 * changes nothing.
 *
 * <p>The hook keeps its slab (owned lifecycle), so a release, on the JDK's cleaner thread above all,
 * finds the block's chunk without a lookup (the address to chunk map was the cleaner thread's
 * largest cost in a GC-only run: 27 of 43 samples).
 */
class Release implements Runnable {
    private static final VarHandle CLAIMED;

    static {
        try {
            CLAIMED = MethodHandles.lookup().findVarHandle(Release.class, "claimed", boolean.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SlabAllocator allocator;
    private final long address;
    private final int capacity;
    /** The block's slab and this buffer's cleaner slot in it (owned lifecycle), or {@code null} and -1. */
    private final Slab slab;
    private final int slot;
    @SuppressWarnings("unused") // CLAIMED
    private volatile boolean claimed;

    Release(final SlabAllocator allocator, final long address, final int capacity, final Slab slab,
            final int slot) {
        this.allocator = allocator;
        this.address = address;
        this.capacity = capacity;
        this.slab = slab;
        this.slot = slot;
    }

    @Override
    public void run() {
        final Slab s = slab;
        if (s != null) {
            if (!CLAIMED.compareAndSet(this, false, true)) {
                return; // released already: this is a second, racing or stale release
            }
            s.cleaners[slot] = null; // the cleaner ran: nothing needs to keep it reachable any more
        }
        released();
        allocator.release(address, capacity, s == null ? null : s.chunk);
    }

    /** What a subclass does once, before the block goes back. */
    void released() {
    }

    /** The buffer this hook was made for could not be built: undo what making the hook counted. */
    void cancel() {
    }

    /** The hook of a buffer picked by allocation-site sampling: also gives its site's share back. */
    static final class Sampled extends Release {
        private final SiteSampler.Site site;
        private final int capacity;

        Sampled(final SlabAllocator allocator, final long address, final int capacity, final Slab slab,
                final int slot, final SiteSampler.Site site) {
            super(allocator, address, capacity, slab, slot);
            this.site = site;
            this.capacity = capacity;
        }

        @Override
        void released() {
            try {
                site.released(capacity);
            } catch (final Throwable ignored) {
                // statistics only; the release must still happen and nothing may be thrown
            }
        }

        @Override
        void cancel() {
            site.cancelled(capacity);
        }
    }
}
