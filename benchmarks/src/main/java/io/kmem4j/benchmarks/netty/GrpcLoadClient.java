package io.kmem4j.benchmarks.netty;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * The load generator of the gRPC server benchmark ({@code benchmarks/run --netty --protocol=grpc}), run by
 * the harness in a JVM of its own (benchmarks/target/classes, target/grpc, target/grpc-client; no agent):
 * a closed loop of {@code --calls} outstanding unary calls over {@code --channels} gRPC channels (each one
 * HTTP/2 connection; call i on channel i mod K), each call followed at once by the next on its channel, as
 * wrk keeps one request outstanding per connection. The channels share {@code --threads} NIO event loops
 * and complete calls on them ({@code directExecutor()}); gRPC's default allocator.
 *
 * <p>Protocol with the harness, on stdout and stdin:
 * <pre>
 * grpc-load: ready channels=4 calls=64 method=kmem4j.bench.Unary/Small threads=1   (a first call on each channel answered)
 * grpc-load: warmed                                                                (after --warmup seconds of load)
 *   (the harness answers a line on stdin; the load goes on meanwhile)
 * grpc-load: result requests=N seconds=S rps=R p50_us=A p99_us=B errors=E bad=W      (--duration seconds later)
 * </pre>
 * Only the calls that complete in the measured {@code --duration} count: {@code requests} the calls
 * answered OK, their latencies (from the call's start to its close, µs) in an HdrHistogram; {@code errors}
 * the calls closed with another status, {@code bad} answers of a size the method never answers. Then no
 * new calls start, the outstanding ones are awaited (at most {@value #DRAIN_SECONDS} s) and the client exits 0.
 */
public final class GrpcLoadClient {
    /** The line after a first call on each channel was answered. */
    public static final String READY = "grpc-load: ready";
    /** The line after the warm-up; the client then waits for a line on stdin. */
    public static final String WARMED = "grpc-load: warmed";
    /** How the result line starts. */
    public static final String RESULT = "grpc-load: result ";
    private static final int DRAIN_SECONDS = 10;
    private static final byte[] EMPTY = new byte[0];

    private static final int WARMING = 0;
    private static final int MEASURING = 1;
    private static final int STOPPED = 2;

    private final ManagedChannel[] channels;
    private final MethodDescriptor<byte[], byte[]> method;
    /** The answer sizes the method may give, by size: true. */
    private final boolean[] sizes;
    private final Recorder latencies = new Recorder(3);
    private final LongAdder errors = new LongAdder();
    private final LongAdder bad = new LongAdder();
    private final AtomicInteger outstanding = new AtomicInteger();
    private volatile int phase = WARMING;

    private GrpcLoadClient(final ManagedChannel[] channels, final MethodDescriptor<byte[], byte[]> method) {
        this.channels = channels;
        this.method = method;
        final int[] possible = method == GrpcMethods.SMALL ? new int[] {ServerSupport.SMALL} : ServerSupport.MIXED;
        this.sizes = new boolean[Arrays.stream(possible).max().orElse(0) + 1];
        for (final int s : possible) {
            sizes[s] = true;
        }
    }

    /**
     * @param args {@code --port P [--method small|mixed] [--channels K] [--calls C] [--threads T] [--warmup S]
     *             [--duration S]}
     */
    @SuppressWarnings("deprecation") // NioEventLoopGroup: the transport the server runs too
    public static void main(final String[] args) throws Exception {
        final Map<String, String> o = options(args);
        final int port = Integer.parseInt(o.get("port"));
        final MethodDescriptor<byte[], byte[]> method = GrpcMethods.forSize(o.get("method"));
        final int k = Integer.parseInt(o.get("channels"));
        final int calls = Integer.parseInt(o.get("calls"));
        final int threads = Integer.parseInt(o.get("threads"));
        final long warmup = Long.parseLong(o.get("warmup"));
        final long duration = Long.parseLong(o.get("duration"));
        final EventLoopGroup group = new NioEventLoopGroup(threads);
        final ManagedChannel[] channels = new ManagedChannel[k];
        for (int i = 0; i < k; i++) {
            channels[i] = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().directExecutor()
                .eventLoopGroup(group).channelType(NioSocketChannel.class).build();
            ClientCalls.blockingUnaryCall(channels[i], method, CallOptions.DEFAULT, EMPTY); // connected
        }
        System.out.println(READY + " channels=" + k + " calls=" + calls + " method=" + method.getFullMethodName()
            + " threads=" + threads);
        final GrpcLoadClient client = new GrpcLoadClient(channels, method);
        for (int i = 0; i < calls; i++) {
            client.call(i % k);
        }
        TimeUnit.SECONDS.sleep(warmup);
        System.out.println(WARMED);
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine(); // the harness's go
        System.out.println(client.measure(TimeUnit.SECONDS.toNanos(duration)));
        client.drain();
        for (final ManagedChannel c : channels) {
            c.shutdownNow();
        }
        for (final ManagedChannel c : channels) {
            c.awaitTermination(5, TimeUnit.SECONDS);
        }
        group.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
    }

    /** @return the options, with the defaults for those not given */
    static Map<String, String> options(final String[] args) {
        final Map<String, String> o = new HashMap<>(Map.of("method", "small", "channels", "4", "calls", "64",
            "threads", "1", "warmup", "5", "duration", "10"));
        for (int i = 0; i < args.length; i += 2) {
            final String name = args[i].startsWith("--") ? args[i].substring(2) : "";
            if (!(o.containsKey(name) || name.equals("port")) || i + 1 >= args.length) {
                throw new IllegalArgumentException("unknown or incomplete argument " + args[i] + "; usage: --port P"
                    + " [--method small|mixed] [--channels K] [--calls C] [--threads T] [--warmup S] [--duration S]");
            }
            o.put(name, args[i + 1]);
        }
        if (!o.containsKey("port")) {
            throw new IllegalArgumentException("--port is required");
        }
        return o;
    }

    /** Starts one call on channel {@code c}; its close starts the next there, until the end of the measurement. */
    private void call(final int c) {
        outstanding.incrementAndGet();
        final long start = System.nanoTime();
        ClientCalls.asyncUnaryCall(channels[c].newCall(method, CallOptions.DEFAULT), EMPTY, new StreamObserver<>() {
            private boolean wrongSize = true; // an OK close without a message is a bad answer too

            @Override
            public void onNext(final byte[] answer) {
                wrongSize = answer.length >= sizes.length || !sizes[answer.length];
            }

            @Override
            public void onError(final Throwable t) {
                if (phase == MEASURING) {
                    errors.increment();
                }
                next();
            }

            @Override
            public void onCompleted() {
                if (phase == MEASURING) {
                    if (wrongSize) {
                        bad.increment(); // not among the requests answered
                    } else {
                        latencies.recordValue(Math.max(1, (System.nanoTime() - start) / 1000));
                    }
                }
                next();
            }

            private void next() {
                outstanding.decrementAndGet();
                if (phase != STOPPED) {
                    call(c);
                }
            }
        });
    }

    /** Measures for {@code nanos}; @return the result line */
    private String measure(final long nanos) throws InterruptedException {
        latencies.reset();
        final long t0 = System.nanoTime();
        phase = MEASURING;
        TimeUnit.NANOSECONDS.sleep(nanos);
        phase = STOPPED;
        final long t1 = System.nanoTime();
        final Histogram h = latencies.getIntervalHistogram();
        return result(h.getTotalCount(), (t1 - t0) / 1e9, h.getValueAtPercentile(50), h.getValueAtPercentile(99),
            errors.sum(), bad.sum());
    }

    /** @return the result line of a measurement (the harness's GrpcLoad parses it) */
    public static String result(final long requests, final double seconds, final double p50Micros, final double p99Micros,
                         final long errors, final long bad) {
        return String.format(Locale.ROOT, "%srequests=%d seconds=%.3f rps=%.1f p50_us=%.0f p99_us=%.0f errors=%d bad=%d",
            RESULT, requests, seconds, requests / seconds, p50Micros, p99Micros, errors, bad);
    }

    private void drain() throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS);
        while (outstanding.get() > 0 && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }
}
