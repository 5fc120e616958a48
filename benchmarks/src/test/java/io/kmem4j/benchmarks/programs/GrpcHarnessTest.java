package io.kmem4j.benchmarks.programs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.kmem4j.benchmarks.netty.GrpcLoadClient;
import io.kmem4j.benchmarks.netty.GrpcMethods;
import io.kmem4j.benchmarks.netty.GrpcUnaryServer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The gRPC half of the server benchmark: the load client's result line, the burst's HTTP/2, the arms and options. */
class GrpcHarnessTest {

    @Test
    void theLoadClientsResultLineIsParsedBackToItsFigures() {
        final String line = GrpcLoadClient.result(123_456, 10.0004, 812, 2_345, 2, 1);
        assertThat(line).startsWith("grpc-load: result requests=123456 seconds=10.000 rps=12345.1 p50_us=812 p99_us=2345");
        final LoadResult r = GrpcLoad.parse(line);
        assertThat(r.requests()).isEqualTo(123_456);
        assertThat(r.seconds()).isCloseTo(10.0, offset(1e-9));
        assertThat(r.rps()).isCloseTo(12_345.1, offset(1e-9));
        assertThat(r.p50Micros()).isEqualTo(812);
        assertThat(r.p99Micros()).isEqualTo(2_345);
        assertThat(r.errors()).isEqualTo(2);
        assertThat(r.badAnswers()).isEqualTo(1);
        assertThat(r.clean()).isFalse();
        assertThat(GrpcLoad.parse(GrpcLoadClient.result(10, 1, 1, 2, 0, 0)).clean()).isTrue();
        assertThat(GrpcLoad.parse(GrpcLoadClient.result(0, 1, 0, 0, 0, 0)).clean()).as("no call answered").isFalse();
        assertThatThrownBy(() -> GrpcLoad.parse("grpc-load: result requests=1 seconds=1 rps=1 p50_us=1 errors=0 bad=0"))
            .hasMessageContaining("without p99_us");
        assertThatThrownBy(() -> GrpcLoad.parse("grpc-load: warmed")).hasMessageContaining("not a grpc-load result line");
    }

    @Test
    void theLoadClientIsForkedPinnedWithFixedFlags() {
        assertThat(GrpcLoad.CLIENT_CLASS).isEqualTo(GrpcLoadClient.class.getName());
        final List<String> c = GrpcLoad.command(Path.of("/jdk/bin/java"), "cp", 1, 4242, "mixed", 4, 64, 1, 5, 10);
        assertThat(c).containsExactly("taskset", "-c", "1", "/jdk/bin/java", "-Xms256m", "-Xmx256m", "-cp", "cp",
            GrpcLoad.CLIENT_CLASS, "--port", "4242", "--method", "mixed", "--channels", "4", "--calls", "64", "--threads",
            "1", "--warmup", "5", "--duration", "10");
        assertThat(GrpcLoad.command(Path.of("java"), "cp", -1, 1, "small", 4, 64, 1, 5, 10)).first().isEqualTo("java");
    }

    @Test
    void framesHaveTheirNineByteHeaderAndDataIsSplitAtTheInitialMaximumFrameSize() throws IOException {
        assertThat(Http2.settings(0)).containsExactly(0, 0, 0, 4, 0, 0, 0, 0, 0);
        assertThat(Http2.settings(Http2.ACK)).containsExactly(0, 0, 0, 4, 1, 0, 0, 0, 0);
        final byte[] body = new byte[40_000];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) i;
        }
        final ByteArrayInputStream in = new ByteArrayInputStream(Http2.data(3, body, 100, 39_000, true));
        final List<Http2.Frame> frames = new ArrayList<>();
        while (in.available() > 0) {
            frames.add(Http2.read(in));
        }
        assertThat(frames).extracting(f -> f.payload().length).containsExactly(16_384, 16_384, 6_232);
        assertThat(frames).allSatisfy(f -> {
            assertThat(f.type()).isEqualTo(Http2.DATA);
            assertThat(f.stream()).isEqualTo(3);
        });
        assertThat(frames).extracting(f -> f.has(Http2.END_STREAM)).containsExactly(false, false, true);
        assertThat(frames.get(1).payload()[0]).isEqualTo(body[100 + 16_384]);
        assertThat(Http2.data(1, body, 0, 10, false)).hasSize(19).satisfies(f -> assertThat(f[4]).as("no END_STREAM").isZero());
        assertThatThrownBy(() -> Http2.frame(Http2.DATA, 0, 1, body, 0, 16_385)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Http2.read(new ByteArrayInputStream(new byte[] {0, 0, 5, 0, 0, 0, 0, 0, 1, 'a'})))
            .hasMessageContaining("inside a frame of 5 bytes");
    }

    @Test
    void headerFieldsAreHpackLiteralsWithoutIndexingAndLongIntegersContinue() {
        assertThat(Http2.literal(":path", "/a")).containsExactly(0x00, 5, ':', 'p', 'a', 't', 'h', 2, '/', 'a');
        // RFC 7541 C.1.2: 1337 with a 5-bit prefix is 31, 154, 10
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        Http2.integer(out, 0, 5, 1337);
        assertThat(out.toByteArray()).containsExactly(31, 154, 10);
        out.reset();
        Http2.integer(out, 0, 7, 127);
        assertThat(out.toByteArray()).containsExactly(127, 0);
        final byte[] longValue = Http2.literal("x", "y".repeat(200));
        assertThat(longValue).startsWith(0x00, 1, 'x', 127, 73).hasSize(5 + 200);
        final byte[] headers = Http2.headers(1, Http2.END_STREAM, "te", "trailers");
        assertThat(headers).startsWith(0, 0, 13, Http2.HEADERS, Http2.END_STREAM | Http2.END_HEADERS, 0, 0, 0, 1);
        // as Netty's encoder writes a new field: literal with incremental indexing (0x40), raw name and value
        final byte[] trailers = {0x40, 11, 'g', 'r', 'p', 'c', '-', 's', 't', 'a', 't', 'u', 's', 1, '0'};
        assertThat(Http2.literalValue(trailers, "grpc-status")).isEqualTo("0");
        assertThat(Http2.literalValue(trailers, "grpc-message")).isNull();
        trailers[14] = '1';
        assertThat(Http2.literalValue(trailers, "grpc-status")).isEqualTo("1");
    }

    @Test
    void theUploadsRequestIsAGrpcCallOfTheUploadMethodInsideTheInitialWindows() throws IOException {
        assertThat(GrpcMethods.UPLOAD_PATH).isEqualTo("/kmem4j.bench.Unary/Upload");
        final byte[] start = GrpcUpload.afterSettings("127.0.0.1:4242");
        final ByteArrayInputStream in = new ByteArrayInputStream(start);
        final Http2.Frame ack = Http2.read(in);
        assertThat(ack.type()).isEqualTo(Http2.SETTINGS);
        assertThat(ack.has(Http2.ACK)).isTrue();
        final Http2.Frame headers = Http2.read(in);
        assertThat(headers.type()).isEqualTo(Http2.HEADERS);
        assertThat(headers.stream()).isEqualTo(GrpcUpload.STREAM);
        assertThat(headers.has(Http2.END_HEADERS)).isTrue();
        assertThat(headers.has(Http2.END_STREAM)).isFalse();
        for (final String[] f : new String[][] {{":method", "POST"}, {":scheme", "http"}, {":path", GrpcMethods.UPLOAD_PATH},
            {":authority", "127.0.0.1:4242"}, {"content-type", "application/grpc"}, {"te", "trailers"}}) {
            assertThat(Http2.literalValue(headers.payload(), f[0])).as(f[0]).isEqualTo(f[1]);
        }
        final ByteArrayOutputStream data = new ByteArrayOutputStream();
        while (in.available() > 0) {
            final Http2.Frame d = Http2.read(in);
            assertThat(d.type()).isEqualTo(Http2.DATA);
            assertThat(d.has(Http2.END_STREAM)).isFalse();
            assertThat(d.payload().length).isLessThanOrEqualTo(Http2.MAX_FRAME);
            data.writeBytes(d.payload());
        }
        final byte[] sent = data.toByteArray();
        assertThat(sent).hasSize(5 + BurstClient.BODY / 2);
        assertThat(sent).startsWith(0, 0, 0, (byte) 0x80, 0); // not compressed, 32,768 bytes
        assertThat(GrpcUpload.message("ok".getBytes(StandardCharsets.US_ASCII))).containsExactly(0, 0, 0, 0, 2, 'o', 'k');
        assertThat(5 + BurstClient.BODY).as("the whole message fits HTTP/2's initial windows").isLessThan(65_535);
    }

    @Test
    void anUploadIsAnsweredOnlyByTheOkMessageAndTrailersWithStatusZero() throws IOException {
        final byte[] ok = GrpcUpload.message("ok".getBytes(StandardCharsets.US_ASCII));
        final byte[] ping = Http2.frame(6, 0, 0, new byte[8], 0, 8);
        final byte[] head = Http2.headers(1, 0, ":status", "200", "content-type", "application/grpc");
        final byte[] data = Http2.data(1, ok, 0, ok.length, false);
        assertThat(answered(Http2.settings(Http2.ACK), ping, head, data, Http2.headers(1, Http2.END_STREAM, "grpc-status", "0")))
            .isTrue();
        assertThat(answered(head, data, Http2.headers(1, Http2.END_STREAM, "grpc-status", "13"))).as("an error status").isFalse();
        assertThat(answered(head, Http2.headers(1, Http2.END_STREAM, "grpc-status", "0"))).as("no message").isFalse();
        assertThat(answered(head, Http2.data(1, ok, 0, 3, false), Http2.headers(1, Http2.END_STREAM))).as("a part of it")
            .isFalse();
        assertThat(answered(Http2.headers(1, 0, ":status", "415"), Http2.data(1, ok, 0, ok.length, true)))
            .as("HTTP's answer to a wrong content-type: no trailers").isFalse();
        assertThat(answered(Http2.frame(Http2.RST_STREAM, 0, 1, new byte[4], 0, 4))).isFalse();
        assertThatThrownBy(() -> answered(head, data)).as("the connection ends before the trailers")
            .isInstanceOf(java.io.EOFException.class);
    }

    private static boolean answered(final byte[]... frames) throws IOException {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (final byte[] f : frames) {
            out.writeBytes(f);
        }
        return new GrpcUpload().answered(new ByteArrayInputStream(out.toByteArray()));
    }

    @Test
    void aRealGrpcServerHoldsTheHalfSentUploadsAndAnswersEachOnceComplete() throws Exception {
        final Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
            InsecureServerCredentials.create()).directExecutor().addService(GrpcUnaryServer.service()).build().start();
        try (BurstClient burst = new BurstClient(new GrpcUpload())) {
            assertThat(burst.open(new InetSocketAddress("127.0.0.1", server.getPort()), 3)).isEqualTo(3);
            assertThat(burst.firstFailure()).isNull();
            assertThat(burst.complete()).as("answered ok with grpc-status 0").isEqualTo(3);
            assertThat(burst.firstFailure()).isNull();
        } finally {
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void grpcArmsSelectTheirAllocatorByTheRelocatedPropertiesAndAWrongOneStopsTheBenchmark() {
        final NettyCommand cmd = new NettyCommand();
        new CommandLine(cmd).parseArgs();
        final List<String> common = cmd.commonFlags();
        assertThat(cmd.armFlags(Protocol.GRPC, "pooled")).as("gRPC's default: its own pooled allocator").isEqualTo(common);
        assertThat(cmd.armFlags(Protocol.GRPC, "adaptive")).containsSequence(common).endsWith(
            "-Dio.grpc.netty.shaded.io.grpc.netty.useCustomAllocator=false",
            "-Dio.grpc.netty.shaded.io.netty.allocator.type=adaptive");
        assertThat(cmd.armFlags(Protocol.GRPC, "kmem4j")).hasSize(common.size() + 1).last().asString()
            .endsWith("kmem4j-agent.jar=presets=netty-allocator");
        assertThat(cmd.lines(Protocol.GRPC)).containsExactly("grpc");
        assertThat(cmd.classPath("grpc")).endsWith("benchmarks/target/grpc/*");
        assertThat(cmd.classPath("4.2")).endsWith("benchmarks/target/netty-4.2/*");

        NettyCommand.requireAllocator(Protocol.GRPC, "adaptive", result("AdaptiveByteBufAllocator"));
        NettyCommand.requireAllocator(Protocol.GRPC, "kmem4j", result("PooledByteBufAllocator"));
        NettyCommand.requireAllocator(Protocol.GRPC, "pooled", result("?")); // did not start: a failed run, not a wrong arm
        NettyCommand.requireAllocator(Protocol.HTTP, "pooled", result("AdaptiveByteBufAllocator")); // not checked
        assertThatThrownBy(() -> NettyCommand.requireAllocator(Protocol.GRPC, "adaptive", result("PooledByteBufAllocator")))
            .hasMessageContaining("gRPC unary arm adaptive").hasMessageContaining("PooledByteBufAllocator, not"
                + " AdaptiveByteBufAllocator");
    }

    @Test
    void theGrpcServersFirstLineGivesBothVersionsAndRunsCsvItsProtocol() {
        final Matcher m = Pattern.compile("^server: netty=(\\S+) allocator=(\\S+)(.*)").matcher(
            "server: netty=4.2.17.Final allocator=PooledByteBufAllocator grpc=1.85.1 nettyDefault=false threads=1");
        assertThat(m.find()).isTrue();
        assertThat(ServerRun.version(m)).isEqualTo("4.2.17.Final, grpc-netty-shaded 1.85.1");
        final Matcher http = Pattern.compile("^server: netty=(\\S+) allocator=(\\S+)(.*)").matcher(
            "server: netty=4.2.18.Final allocator=AdaptiveByteBufAllocator noCleaner=false threads=1");
        assertThat(http.find()).isTrue();
        assertThat(ServerRun.version(http)).isEqualTo("4.2.18.Final");
        final String csv = NettyCommand.csvLine("17", Protocol.GRPC, "4.2.17.Final, grpc-netty-shaded 1.85.1", "small", 1,
            0, "kmem4j", result("PooledByteBufAllocator"));
        assertThat(csv).startsWith("17,grpc,4.2.17.Final; grpc-netty-shaded 1.85.1,small,1,1,kmem4j,true,100.0,");
        assertThat(csv.split(",")).hasSize(32);
    }

    @Test
    void optionsAreValidatedBeforeAnythingRuns() {
        assertThat(usageError("--protocol=h3")).contains("--protocol: unknown 'h3'; known: http, grpc");
        assertThat(usageError("--protocol=grpc", "--connections=2", "--grpc-channels=4"))
            .contains("--connections (the gRPC client's outstanding calls, 2) must be at least --grpc-channels (4)");
        assertThat(usageError("--protocol=grpc", "--grpc-channels=0")).contains("--grpc-channels: 0 is not allowed; at least 1");
        assertThat(usageError("--protocol=grpc", "--warmup=-1")).contains("--warmup: -1 is not allowed; at least 0 (seconds)");
        assertThat(usageError("--protocol=grpc", "--rounds=0")).contains("--rounds: 0 is not allowed; at least 1");
        assertThat(usageError("--protocol=grpc", "--threads=1,0")).contains("--threads: 0 is not allowed; at least 1");
        assertThat(usageError("--protocol=grpc", "--heap=abc"))
            .contains("--heap: 'abc' is not a JVM memory size; digits with an optional k, m, g or t, e.g. 128m");
        assertThat(usageError("--protocol=grpc", "--max-direct=1.5g")).contains("--max-direct: '1.5g' is not a JVM memory size");
        assertThat(NettyCommand.isJvmSize("128m")).isTrue();
        assertThat(NettyCommand.isJvmSize("1G")).isTrue();
        assertThat(NettyCommand.isJvmSize("1073741824")).isTrue();
        assertThat(NettyCommand.isJvmSize("-1m")).isFalse();
        assertThat(usageError("--protocol=grpc", "--target=/nonexistent")).contains("/nonexistent/classes/io/kmem4j/"
            + "benchmarks/netty/GrpcUnaryServer.class missing");
        final String help = new CommandLine(new NettyCommand()).setUsageHelpWidth(1000).getUsageMessage();
        assertThat(help).contains("--protocol", "--grpc-channels", "useCustomAllocator=false", "gRPC load client");
    }

    /** @return what picocli printed for the arguments' usage error (NettyCommand's checks report on System.err) */
    private static String usageError(final String... args) {
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final PrintStream systemErr = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            assertThat(new CommandLine(new NettyCommand()).execute(args)).as("exit code of %s", List.of(args)).isEqualTo(2);
        } finally {
            System.setErr(systemErr);
        }
        return err.toString(StandardCharsets.UTF_8);
    }

    private static ServerRun.Result result(final String allocator) {
        return new ServerRun.Result(null, "4.2.17.Final", allocator, new LoadResult(1000, 10, 100, 500, 900, 0, 0), 100,
            new long[] {1}, 1, 2, new long[] {1, 1, 1}, 1, 1, Map.of(), Path.of("x.log"));
    }
}
