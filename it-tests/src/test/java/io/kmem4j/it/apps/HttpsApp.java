package io.kmem4j.it.apps;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A caller of {@code ByteBuffer.allocateDirect} in the <em>platform</em> class loader: the JDK's
 * {@code java.net.http} client ({@code jdk.internal.net.http.HttpClientImpl$SSLDirectBufferSupplier})
 * reads TLS records into direct buffers of 16 KiB that it keeps for reuse. This application makes
 * HTTPS requests to a local {@code HttpsServer} (a self-signed key made with the JDK's keytool) and
 * prints:
 * <pre>
 * https: client-loader=platform
 * https: ok requests=20 bytes=1310720
 * </pre>
 * then, with {@code --hold}, {@code https: holding} until stdin ends (the client, and its buffers, stay alive).
 */
public final class HttpsApp {
    private static final char[] PASSWORD = "changeit".toCharArray();
    private static final int BODY = 64 * 1024;
    /** Kept reachable while holding: its SSL buffer supplier holds the direct buffers. */
    static HttpClient client;

    private HttpsApp() {
    }

    public static void main(String[] args) throws Exception {
        System.out.println("https: client-loader="
                + (HttpClient.class.getClassLoader() == ClassLoader.getPlatformClassLoader() ? "platform"
                : String.valueOf(HttpClient.class.getClassLoader())));
        SSLContext tls = selfSigned(Files.createTempDirectory("kmem4j-https"));
        byte[] body = new byte[BODY];
        Arrays.fill(body, (byte) 'k');
        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        server.createContext("/", exchange -> {
            try (InputStream in = exchange.getRequestBody(); OutputStream out = exchange.getResponseBody()) {
                in.readAllBytes();
                exchange.sendResponseHeaders(200, body.length);
                out.write(body);
            }
        });
        server.start();
        long bytes = 0;
        try {
            client = HttpClient.newBuilder().sslContext(tls).version(HttpClient.Version.HTTP_1_1).build();
            URI uri = URI.create("https://127.0.0.1:" + server.getAddress().getPort() + "/");
            for (int i = 0; i < 20; i++) {
                HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(uri).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() != 200 || !Arrays.equals(r.body(), body)) {
                    throw new IllegalStateException("request " + i + ": status " + r.statusCode());
                }
                bytes += r.body().length;
            }
        } finally {
            server.stop(0);
        }
        System.out.println("https: ok requests=20 bytes=" + bytes);
        if (List.of(args).contains("--hold")) {
            System.out.println("https: holding");
            while (System.in.read() >= 0) {
                // until EOF
            }
        }
    }

    /** A PKCS12 key store with one self-signed key for 127.0.0.1, as key and trust material. */
    private static SSLContext selfSigned(Path dir) throws Exception {
        Path store = dir.resolve("local.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "local", "-keyalg", "EC", "-keystore", store.toString(), "-storetype",
                "PKCS12", "-storepass", "changeit", "-keypass", "changeit", "-dname", "CN=localhost", "-ext",
                "SAN=ip:127.0.0.1", "-validity", "2").redirectErrorStream(true).start();
        String output = new String(keytool.getInputStream().readAllBytes());
        if (keytool.waitFor() != 0) {
            throw new IllegalStateException("keytool failed: " + output);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, PASSWORD);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASSWORD);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return tls;
    }
}
