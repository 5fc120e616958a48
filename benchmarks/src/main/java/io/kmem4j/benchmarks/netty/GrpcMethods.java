package io.kmem4j.benchmarks.netty;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The unary methods of {@link GrpcUnaryServer}, as its load client ({@link GrpcLoadClient}) calls them: no
 * protobuf, a {@code byte[]} marshaller. {@code Small} answers {@value ServerSupport#SMALL} bytes,
 * {@code Mixed} the next size of {@link ServerSupport#MIXED}, {@code Upload} (the burst's) takes any
 * message and answers {@code ok}.
 */
public final class GrpcMethods {
    static final String SERVICE = "kmem4j.bench.Unary";
    /** The {@code :path} of {@link #UPLOAD}, for the harness's burst (a compile-time constant: no gRPC class is loaded there). */
    public static final String UPLOAD_PATH = "/" + SERVICE + "/Upload";
    /** What {@link #UPLOAD} answers. */
    public static final String UPLOAD_ANSWER = "ok";

    /**
     * A {@code ByteArrayInputStream} of the value: gRPC's framer takes its length from {@code available()}
     * and copies the message into one buffer of that size plus its 5-byte prefix.
     */
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(final byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(final InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    static final MethodDescriptor<byte[], byte[]> SMALL = unary("Small");
    static final MethodDescriptor<byte[], byte[]> MIXED = unary("Mixed");
    static final MethodDescriptor<byte[], byte[]> UPLOAD = unary("Upload");

    private GrpcMethods() {
    }

    /** @return the method of a {@code --sizes} value: {@code small} or {@code mixed} */
    static MethodDescriptor<byte[], byte[]> forSize(final String size) {
        return switch (size) {
            case "small" -> SMALL;
            case "mixed" -> MIXED;
            default -> throw new IllegalArgumentException("unknown size " + size + "; known: small, mixed");
        };
    }

    private static MethodDescriptor<byte[], byte[]> unary(final String name) {
        return MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();
    }
}
