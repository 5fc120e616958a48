package io.kmem4j.it.apps;

import java.nio.ByteBuffer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An application with its own SLF4J + Logback and its own {@code logback.xml} on the class path
 * (pattern {@code APP %level %logger{0} - %msg%n} to stdout). Logs {@value #LINES} lines while
 * allocating direct buffers, and prints which logger factory SLF4J bound to.
 */
public final class OwnLoggingApp {

    static final int LINES = 5;

    private OwnLoggingApp() {
    }

    public static void main(String[] args) {
        Logger log = LoggerFactory.getLogger(OwnLoggingApp.class);
        System.out.println("own-logging: factory=" + LoggerFactory.getILoggerFactory().getClass().getName());
        long checksum = 0;
        for (int line = 1; line <= LINES; line++) {
            int count = 0;
            for (int i = 0; i < 200; i++) {
                int size = 1 + (line * 7_919 + i * 613) % 40_000;
                ByteBuffer b = ByteBuffer.allocateDirect(size);
                if (b.capacity() != size || b.get(size - 1) != 0) {
                    log.error("unexpected buffer {} for capacity {}", b, size);
                    System.exit(1);
                }
                b.put(size - 1, (byte) line);
                checksum += b.get(size - 1);
                count++;
            }
            log.info("line {} of {}: allocated {} direct buffers, checksum {}", line, LINES, count, checksum);
        }
        System.out.println("own-logging: ok lines=" + LINES);
    }
}
