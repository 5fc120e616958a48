package io.kmem4j.samples.jetty;

import io.kmem4j.samples.support.GeneratedContent;
import io.kmem4j.samples.support.Payload;
import io.kmem4j.samples.support.Workers;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A load client for {@link JettyContentServer} on Jetty's own {@link HttpClient}: {@code
 * connections} caller threads each send their share of the requests one after the other (so at
 * most {@code connections} connections are in use) for random {@link GeneratedContent} resources
 * and verify every byte of every response body.
 *
 * <p>Resources come from a {@link SplittableRandom} seeded with the given seed and split once per
 * caller, so a run is reproducible.
 *
 * <p>Threads: the callers ({@code jetty-caller-N}) and the client's own pool ({@code
 * jetty-client-N}); {@link #run} blocks the calling thread, reporting progress every two seconds.
 */
final class JettyLoadClient {

    /** Totals of a run or of one caller. */
    record Result(long requests, long bytes, long mismatches) {
        static final Result EMPTY = new Result(0, 0, 0);

        Result plus(Result o) {
            return new Result(requests + o.requests, bytes + o.bytes, mismatches + o.mismatches);
        }
    }

    private static final long REQUEST_TIMEOUT_SECONDS = 30;

    private final InetSocketAddress server;
    private final int connections;
    private final int requests;
    private final long seed;
    private final LongAdder completed = new LongAdder();

    JettyLoadClient(InetSocketAddress server, int connections, int requests, long seed) {
        this.server = server;
        this.connections = connections;
        this.requests = requests;
        this.seed = seed;
    }

    /** Responses verified so far; may be called from any thread. */
    long completed() {
        return completed.sum();
    }

    /**
     * Runs all callers to completion.
     *
     * @param progress called every two seconds on the calling thread
     */
    Result run(Runnable progress) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(8, 2);
        threads.setName("jetty-client");
        HttpClient client = new HttpClient();
        client.setExecutor(threads);
        client.setMaxConnectionsPerDestination(connections);
        client.setMaxRequestsQueuedPerDestination(Math.max(1024, connections));
        client.setFollowRedirects(false);
        client.start();
        try {
            SplittableRandom seeds = new SplittableRandom(seed);
            List<Workers.Task<Result>> tasks = new ArrayList<>();
            for (int c = 0; c < connections; c++) {
                int count = requests / connections + (c < requests % connections ? 1 : 0);
                SplittableRandom random = seeds.split();
                tasks.add(new Workers.Task<>("jetty-caller-" + c, () -> call(client, count, random)));
            }
            Result total = Result.EMPTY;
            for (Result result : Workers.run(tasks, progress)) {
                total = total.plus(result);
            }
            return total;
        } finally {
            client.stop();
        }
    }

    private Result call(HttpClient client, int count, SplittableRandom random) throws Exception {
        long bytes = 0;
        long mismatches = 0;
        for (int i = 0; i < count; i++) {
            GeneratedContent.Resource resource = GeneratedContent.pick(random);
            ContentResponse response = client.newRequest(server.getHostString(), server.getPort())
                    .path(resource.path())
                    .timeout(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .send();
            if (response.getStatus() != HttpStatus.OK_200) {
                throw new IOException("GET " + resource.path() + " returned " + response.getStatus());
            }
            mismatches += mismatches(response.getContent(), resource);
            bytes += resource.size();
            completed.increment();
        }
        return new Result(count, bytes, mismatches);
    }

    /** Wrong bytes of the body, plus missing or excess bytes. */
    private static long mismatches(byte[] body, GeneratedContent.Resource resource) {
        int common = Math.min(body.length, resource.size());
        return Math.abs(body.length - (long) resource.size())
                + Payload.countMismatches(ByteBuffer.wrap(body), 0, common, resource.seed());
    }
}
