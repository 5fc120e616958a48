package io.kmem4j.benchmarks.programs;

/**
 * What the measured run of a load generator of {@code benchmarks/run --netty} reported ({@link Wrk} for
 * HTTP, {@link GrpcLoad} for gRPC).
 *
 * @param requests   completed requests (gRPC: calls answered OK)
 * @param seconds    the run's length as the generator measured it
 * @param rps        requests per second
 * @param p50Micros  median latency, µs
 * @param p99Micros  99th percentile latency, µs (NaN when not reported)
 * @param errors     wrk: connect + read + write + timeout errors; gRPC: calls closed with a status other than OK
 * @param badAnswers wrk: responses other than 2xx or 3xx; gRPC: answers of a size the method never gives
 */
record LoadResult(long requests, double seconds, double rps, double p50Micros, double p99Micros, long errors,
                  long badAnswers) {
    boolean clean() {
        return requests > 0 && errors == 0 && badAnswers == 0;
    }
}
