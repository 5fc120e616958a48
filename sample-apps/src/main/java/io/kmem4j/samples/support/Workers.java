package io.kmem4j.samples.support;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs a fixed set of tasks, one platform thread each, while the calling thread reports progress.
 *
 * <p>The first task to fail stops the run: the others are interrupted (a task blocked on a queue
 * sees an {@link InterruptedException}) and the failure is rethrown on the calling thread.
 *
 * <p>Threads: each task runs on its own thread named by {@link Task#threadName}; {@link #run}
 * blocks the calling thread until all tasks are done.
 */
public final class Workers {

    /** How often {@link #run} calls its progress callback. */
    public static final long PROGRESS_INTERVAL_MILLIS = 2_000;

    private Workers() {}

    /** A task and the name of the thread that runs it. */
    public record Task<R>(String threadName, Callable<R> body) {}

    /**
     * Runs all tasks to completion and returns their results in task order.
     *
     * @param progress called on the calling thread every {@value #PROGRESS_INTERVAL_MILLIS} ms
     * @throws Exception the first failure of a task (its own exception, unwrapped)
     */
    public static <R> List<R> run(List<Task<R>> tasks, Runnable progress) throws Exception {
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, tasks.size()),
                body -> new Thread(body, tasks.get(next.getAndIncrement()).threadName()));
        try {
            CompletionService<R> completion = new ExecutorCompletionService<>(pool);
            Map<Future<R>, Integer> order = new IdentityHashMap<>();
            for (int i = 0; i < tasks.size(); i++) {
                order.put(completion.submit(tasks.get(i).body()), i);
            }
            List<R> results = new ArrayList<>(tasks.size());
            for (int i = 0; i < tasks.size(); i++) {
                results.add(null);
            }
            for (int done = 0; done < tasks.size(); ) {
                Future<R> future = completion.poll(PROGRESS_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
                if (future == null) {
                    progress.run();
                    continue;
                }
                results.set(order.get(future), resultOf(future));
                done++;
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    private static <R> R resultOf(Future<R> future) throws Exception {
        try {
            return future.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception exception) {
                throw exception;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }
}
