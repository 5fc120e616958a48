package io.kmem4j.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.agrona.UnsafeApi;

abstract class RemoteInboxPad1 {
    long p01, p02, p03, p04, p05, p06, p07;
}

abstract class RemoteInboxHead extends RemoteInboxPad1 {
    volatile long head;
}

abstract class RemoteInboxPad2 extends RemoteInboxHead {
    long p11, p12, p13, p14, p15, p16, p17;
}

/**
 * The inbox of deferred (remote) frees sent to one owner (the Linux 6.18 UDP receive series:
 * {@code skb_attempt_defer_free} hands a free back to the allocating CPU; mimalloc's
 * {@code thread_free} list is the same idea).
 *
 * <p>It is an intrusive lock-free stack linked through the freed objects themselves: the first 8
 * bytes of a freed object hold the address of the next one, so a free allocates nothing. A sender
 * links a whole batch privately and publishes it with one CAS ({@link #pushMt}); the owner takes
 * everything with one swap ({@link #takeAll}). Take-all means no ABA problem. {@link #close} makes
 * further pushes fail, so the sender can route the batch elsewhere when the owner has died.
 *
 * <p>Threads: {@link #pushMt} from any thread, never blocks (lock-free). {@link #takeAll} and
 * {@link #close} from any thread (atomic swap). The plain write of a link happens before the CAS
 * that publishes it (volatile semantics), so the taker sees every link.
 *
 * <p>The {@code head} field is padded on both sides: it is written by many threads.
 */
final class RemoteInbox extends RemoteInboxPad2 {
    static final long CLOSED = -1L;
    private static final VarHandle HEAD;

    static {
        try {
            HEAD = MethodHandles.lookup().findVarHandle(RemoteInboxHead.class, "head", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** @return the next object in a chain taken from an inbox, 0 at the end. */
    static long next(final long object) {
        return UnsafeApi.getLong(object);
    }

    /**
     * Takes {@code object} off a chain: returns the next object and zeroes the link word, so the
     * object is all zeros again when frees zero on release.
     */
    static long unlink(final long object) {
        final long next = UnsafeApi.getLong(object);
        UnsafeApi.putLong(object, 0L);
        return next;
    }

    /** Links {@code object} in front of {@code chain}; returns the new chain head. */
    static long link(final long object, final long chain) {
        UnsafeApi.putLong(object, chain);
        return object;
    }

    /**
     * Publishes the chain {@code first .. last} (already linked, {@code last} links to anything).
     *
     * @return false when the inbox is closed (nothing was published)
     */
    boolean pushMt(final long first, final long last) {
        for (;;) {
            final long h = head;
            if (h == CLOSED) {
                return false;
            }
            UnsafeApi.putLong(last, h);
            if (HEAD.compareAndSet(this, h, first)) {
                return true;
            }
        }
    }

    /** Publishes a chain whose end must be found by walking it (failure paths only). */
    void pushChain(final long first) {
        if (first == 0) {
            return;
        }
        long last = first;
        for (long n = next(last); n != 0; n = next(last)) {
            last = n;
        }
        if (!pushMt(first, last)) {
            throw new IllegalStateException("inbox closed");
        }
    }

    /** @return true when some frees wait (a plain volatile read). */
    boolean nonEmpty() {
        final long h = head;
        return h != 0 && h != CLOSED;
    }

    /** @return the whole chain (0 when empty or closed); the inbox stays open. */
    long takeAll() {
        for (;;) {
            final long h = head;
            if (h == 0 || h == CLOSED) {
                return 0;
            }
            if (HEAD.compareAndSet(this, h, 0L)) {
                return h;
            }
        }
    }

    /** Calls {@code action} for every waiting free without taking them (quiescent use only). */
    void forEach(final java.util.function.LongConsumer action) {
        for (long a = head; a != 0 && a != CLOSED; a = next(a)) {
            action.accept(a);
        }
    }

    /** Closes the inbox. @return the chain it held (0 when none). */
    long close() {
        final long h = (long) HEAD.getAndSet(this, CLOSED);
        return h == CLOSED ? 0 : h;
    }
}
