package io.kmem4j.samples;

/**
 * A hello-world program: prints one line and exits. The A/B harness
 * ({@code benchmarks/run --programs}) runs it with and without the agent to measure what the agent
 * adds to a JVM's start-up (wall time, CPU time, resident memory). Run it with
 * {@code java -cp kmem4j-samples.jar io.kmem4j.samples.Hello}; it loads nothing else of the samples.
 */
public final class Hello {
    private Hello() {
    }

    /**
     * @param args ignored
     */
    public static void main(final String[] args) {
        System.out.println("hello: done");
    }
}
