package io.kmem4j.samples.echo;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

/**
 * Load client for the {@link EchoServer}: opens several connections, sends messages of random size
 * on each, one at a time, and verifies every byte of every echo.
 *
 * <p>Sizes come from a {@link SplittableRandom} seeded with the given seed and split once per
 * connection, so a run is reproducible. Each connection owns two direct buffers (send and
 * receive), large enough for the largest message and reused for all its messages.
 *
 * <p>Threads: {@link #run} uses one blocking thread per connection, {@code echo-client-N}, and
 * reports progress on the calling thread while they work.
 */
final class EchoClient {

    /** Totals of a run or of one connection. */
    record Result(long messages, long bytes, long mismatches) {
        static final Result EMPTY = new Result(0, 0, 0);

        Result plus(Result other) {
            return new Result(
                    messages + other.messages, bytes + other.bytes, mismatches + other.mismatches);
        }
    }

    private static final long PROGRESS_INTERVAL_MILLIS = 2_000;

    private final InetSocketAddress server;
    private final int connections;
    private final int messages;
    private final int minSize;
    private final int maxSize;
    private final long seed;
    private final LongAdder completed = new LongAdder();

    /**
     * @param messages total number of messages, split as evenly as possible across connections
     * @param minSize smallest payload size, inclusive
     * @param maxSize largest payload size, inclusive
     */
    EchoClient(InetSocketAddress server, int connections, int messages, int minSize, int maxSize,
            long seed) {
        this.server = server;
        this.connections = connections;
        this.messages = messages;
        this.minSize = minSize;
        this.maxSize = maxSize;
        this.seed = seed;
    }

    /**
     * Runs all connections to completion.
     *
     * @param progress called every two seconds with the number of messages echoed so far
     * @throws IOException if a connection fails
     */
    Result run(LongConsumer progress) throws IOException, InterruptedException {
        SplittableRandom seeds = new SplittableRandom(seed);
        AtomicInteger threadIds = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(connections,
                task -> new Thread(task, "echo-client-" + threadIds.getAndIncrement()));
        try {
            List<Future<Result>> results = new ArrayList<>(connections);
            for (int c = 0; c < connections; c++) {
                int connection = c;
                int count = messages / connections + (c < messages % connections ? 1 : 0);
                SplittableRandom random = seeds.split();
                results.add(pool.submit(() -> exchange(connection, count, random)));
            }
            pool.shutdown();
            while (!pool.awaitTermination(PROGRESS_INTERVAL_MILLIS, TimeUnit.MILLISECONDS)) {
                progress.accept(completed.sum());
            }
            Result total = Result.EMPTY;
            for (Future<Result> result : results) {
                total = total.plus(resultOf(result));
            }
            return total;
        } finally {
            pool.shutdownNow();
        }
    }

    private Result exchange(int connection, int count, SplittableRandom random) throws IOException {
        ByteBuffer out = ByteBuffer.allocateDirect(EchoProtocol.HEADER_BYTES + maxSize);
        ByteBuffer in = ByteBuffer.allocateDirect(EchoProtocol.HEADER_BYTES + maxSize);
        long bytes = 0;
        long mismatches = 0;
        try (SocketChannel channel = SocketChannel.open(server)) {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            for (int message = 0; message < count; message++) {
                int length = random.nextInt(minSize, maxSize + 1);
                out.clear();
                EchoProtocol.putHeader(out, length);
                EchoProtocol.putPayload(out, connection, message, length);
                out.flip();
                while (out.hasRemaining()) {
                    channel.write(out);
                }
                in.clear().limit(EchoProtocol.HEADER_BYTES + length);
                while (in.hasRemaining()) {
                    if (channel.read(in) < 0) {
                        throw new EOFException("server closed connection " + connection);
                    }
                }
                in.flip();
                mismatches += EchoProtocol.countMismatches(in, connection, message, length);
                bytes += length;
                completed.increment();
            }
        }
        return new Result(count, bytes, mismatches);
    }

    private static Result resultOf(Future<Result> future) throws IOException, InterruptedException {
        try {
            return future.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IOException(cause);
        }
    }
}
