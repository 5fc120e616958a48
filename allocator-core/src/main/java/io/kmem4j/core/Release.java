package io.kmem4j.core;

/**
 * The release hook of a tracked buffer whose JDK cleaner is in the JDK's cleaner list (the owned
 * lifecycle off or unavailable: {@link OwnedLifecycle}): the thunk of that cleaner. It runs on
 * {@code Unsafe.invokeCleaner}, {@code cleaner().clean()}, or when GC finds the buffer and all its
 * views unreachable (then on the JDK's cleaner thread). The list's {@code remove()} says which
 * release was first, so it runs once. It never throws: a throwing thunk makes the JDK end the VM.
 * In the owned lifecycle the thunk is the slot's {@link SlotRelease} instead.
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
        released();
        OutOfLine.release(allocator, address, capacity, null);
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

        Sampled(final SlabAllocator allocator, final long address, final int capacity, final SiteSampler.Site site) {
            super(allocator, address, capacity);
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
