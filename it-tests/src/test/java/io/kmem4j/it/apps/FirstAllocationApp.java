package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

/**
 * Its first direct allocations are made by four threads at once (kmem4j builds its allocator at the
 * first one): prints {@code first-allocations: buffers=5 direct=5} (one more made after the race), and, under the agent, what its reaper
 * thread inherited ({@code reaper: group=... contextClassLoader=... priority=... daemon=...}).
 */
public final class FirstAllocationApp {
    private FirstAllocationApp() {
    }

    public static void main(String[] args) throws Exception {
        final int threads = 4;
        final CyclicBarrier start = new CyclicBarrier(threads);
        final List<ByteBuffer> buffers = new ArrayList<>();
        final List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final Thread thread = new Thread(() -> {
                Thread.currentThread().setContextClassLoader(new java.net.URLClassLoader(new java.net.URL[0]));
                try {
                    start.await();
                    final ByteBuffer b = ByteBuffer.allocateDirect(100);
                    synchronized (buffers) {
                        buffers.add(b);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            thread.setPriority(Thread.MAX_PRIORITY);
            ts.add(thread);
            thread.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        // one more after the race: served by kmem4j whether or not the build ended within the racers' wait
        buffers.add(ByteBuffer.allocateDirect(100));
        System.out.println("first-allocations: buffers=" + buffers.size() + " direct="
                + buffers.stream().filter(ByteBuffer::isDirect).count());
        // kmem4j's reaper thread, started by the first allocation on one of the threads above, takes nothing of it
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("kmem4j-reaper")) {
                System.out.println("reaper: group=" + t.getThreadGroup().getName() + " contextClassLoader="
                        + t.getContextClassLoader() + " priority=" + t.getPriority() + " daemon=" + t.isDaemon());
            }
        }
    }
}
