package io.kmem4j.agent.log;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Failures inside kmem4j on an application's path (an allocation or release it intercepted):
 * counted, and the first one logged as one WARN line; the caller then falls back to the JDK's or the
 * pool's own code. Never throws. Threads: any.
 */
public final class Failures {
    private final AtomicBoolean logged = new AtomicBoolean();
    private final LongAdder count = new LongAdder();

    /** @return failures so far. */
    public long count() {
        return count.sum();
    }

    /**
     * @param what    what failed, e.g. {@code "allocation of 100 bytes"}
     * @param fallback what happens instead, e.g. {@code "the JDK's allocateDirect"}
     */
    public void record(final String what, final String fallback, final Throwable t) {
        try {
            count.increment();
            if (logged.compareAndSet(false, true)) {
                AgentLog.get(Failures.class).warn("{} failed inside kmem4j; this and later failures fall back to {}",
                    what, fallback, t);
            }
        } catch (final Throwable ignored) {
            // logging must never break the application
        }
    }
}
