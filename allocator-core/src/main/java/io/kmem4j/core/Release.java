package io.kmem4j.core;

/**
 * The release hook of a tracked buffer, installed as the JDK cleaner's thunk through the
 * mapped-buffer constructor. The JDK runs it exactly once: on {@code Unsafe.invokeCleaner},
 * {@code cleaner().clean()}, or when GC finds the buffer and all its views unreachable (then on
 * the "Reference Handler" thread). It never throws: a throwing thunk makes the JDK call
 * {@code System.exit(1)}.
 */
class Release implements Runnable {
    private final SlabAllocator allocator;
    private final long address;
    private final int capacity;

    Release(final SlabAllocator allocator, final long address, final int capacity) {
        this.allocator = allocator;
        this.address = address;
        this.capacity = capacity;
    }

    @Override
    public void run() {
        allocator.release(address, capacity, null);
    }

    /** The buffer this hook was made for could not be built: undo what making the hook counted. */
    void cancel() {
    }

    /** The hook of a buffer picked by allocation-site sampling: also gives its site's share back. */
    static final class Sampled extends Release {
        private final SiteSampler.Site site;
        private final int capacity;

        Sampled(final SlabAllocator allocator, final long address, final int capacity, final SiteSampler.Site site) {
            super(allocator, address, capacity);
            this.site = site;
            this.capacity = capacity;
        }

        @Override
        public void run() {
            try {
                site.released(capacity);
            } catch (final Throwable ignored) {
                // statistics only; the release below must still happen and nothing may be thrown
            }
            super.run();
        }

        @Override
        void cancel() {
            site.cancelled(capacity);
        }
    }
}
