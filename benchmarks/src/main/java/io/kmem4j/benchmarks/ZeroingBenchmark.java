package io.kmem4j.benchmarks;

import java.util.concurrent.TimeUnit;

import org.agrona.UnsafeApi;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * How to zero an object: {@code Unsafe.setMemory} against a loop of 8-byte stores, on one hot
 * object of {@code size} bytes (zeroing on release happens while the object is in the releasing
 * core's cache). The choice behind {@code io.kmem4j.core.Zeroing}: on JDK 17 to 22
 * {@code setMemory} is a call into the VM, not an intrinsic (it became one in JDK 23, JDK-8329331).
 * Not part of {@code benchmarks/run}'s profiles; run it with JMH directly. ns/op.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {Jvm.ADD_EXPORTS, Jvm.XMS, Jvm.XMX, Jvm.PRE_TOUCH})
public class ZeroingBenchmark {
    /** Object size, bytes. */
    @Param({"64", "256", "1024", "4096"})
    public int size;

    private long address;

    @Setup(Level.Trial)
    public void setUp() {
        address = (UnsafeApi.allocateMemory(size + 64) + 63) & ~63L;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        // the trial's only block; the fork ends right after
    }

    /** {@code Unsafe.setMemory(address, size, 0)}. */
    @Benchmark
    public void setMemory() {
        UnsafeApi.setMemory(address, size, (byte) 0);
    }

    /** {@code size / 8} plain {@code putLong(address + i, 0)} stores. */
    @Benchmark
    public void storeLoop() {
        final long end = address + ((size + 7) & ~7);
        for (long a = address; a < end; a += 8) {
            UnsafeApi.putLong(a, 0L);
        }
    }
}
