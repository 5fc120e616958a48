package io.kmem4j.agent.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

class AgentConfigTest {
    private static final String ALL_KNOWN = "enabled, summary, logLevel, configFile, ownedLifecycle, trimNativeHeap, chunkSizeBytes, "
        + "maxSizeClassBytes, minCapacityBytes, magazineRounds, depotMagazines, retainedEmptyChunks, "
        + "reapIntervalMillis, collectAboveBytes, zeroOnFree, explicitLeakDetection, siteSampleRate";

    @TempDir
    Path tmp;

    private static Properties props(final String... kv) {
        final Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    private Path file(final String content) throws IOException {
        final Path f = Files.createTempFile(tmp, "kmem4j", ".properties");
        Files.writeString(f, content, StandardCharsets.ISO_8859_1);
        return f;
    }

    // ---------------------------------------------------------------- summaryRequested

    @Test
    void summaryRequestedIsReadFromEverySourceWhileAnotherSettingIsInvalid() throws IOException {
        final String invalid = "chunkSizeBytes=5,magazineRounds=abc";
        assertThatIllegalArgumentException().isThrownBy(() -> AgentConfig.load("summary=true," + invalid, props(), Map.of()));
        assertThat(AgentConfig.summaryRequested("summary=true," + invalid, props(), Map.of())).isTrue();
        assertThat(AgentConfig.summaryRequested(invalid, props("kmem4j.summary", " TRUE "), Map.of())).isTrue();
        assertThat(AgentConfig.summaryRequested(invalid, props(), Map.of("KMEM4J_SUMMARY", "true"))).isTrue();
        assertThat(AgentConfig.summaryRequested("configFile=" + file("summary=true\n"), props(), Map.of())).isTrue();
        assertThat(AgentConfig.summaryRequested("summary=false," + invalid, props("kmem4j.summary", "true"), Map.of()))
            .as("the arguments win, as in load").isFalse();
        assertThat(AgentConfig.summaryRequested(invalid, props(), Map.of())).isFalse();
        assertThat(AgentConfig.summaryRequested("summary=yes", props(), Map.of())).as("not a boolean: no").isFalse();
        assertThat(AgentConfig.summaryRequested("configFile=/no/such/file,summary=true", props(), Map.of()))
            .as("unreadable configuration file: the arguments alone").isTrue();
        assertThat(AgentConfig.summaryRequested("configFile=/no/such/file", props(), Map.of())).isFalse();
        assertThat(AgentConfig.summaryRequested("summary=true,magazineRounds=8,magazineRounds=16", props(), Map.of()))
            .as("another key given twice (trial finding: the line was lost)").isTrue();
        assertThat(AgentConfig.summaryRequested("summary=true,summary=false", props(), Map.of()))
            .as("summary itself given twice, differently: not asked for").isFalse();
        assertThat(AgentConfig.summaryRequested("summary=true,summary=true", props(), Map.of())).isTrue();
    }

    // ---------------------------------------------------------------- parseArgs

    @Test
    void parseArgsKeepsOrderAndTrims() {
        assertThat(AgentConfig.parseArgs("a=1,b=2")).containsExactly(entry("a", "1"), entry("b", "2"));
        assertThat(AgentConfig.parseArgs(" a = 1 , b=2 ,,")).containsExactly(entry("a", "1"), entry("b", "2"));
        assertThat(AgentConfig.parseArgs("a=x=y")).containsExactly(entry("a", "x=y"));
        assertThat(AgentConfig.parseArgs("a=")).containsExactly(entry("a", ""));
        assertThatIllegalArgumentException().as("a key given twice: which one was meant is not known")
            .isThrownBy(() -> AgentConfig.parseArgs("a=1,a=2")).withMessageContaining("a is given twice");
    }

    @Test
    void parseArgsOfNothing() {
        assertThat(AgentConfig.parseArgs(null)).isEmpty();
        assertThat(AgentConfig.parseArgs("")).isEmpty();
        assertThat(AgentConfig.parseArgs("   ")).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "=1"})
    void parseArgsRejectsMalformedParts(final String part) {
        assertThatIllegalArgumentException().isThrownBy(() -> AgentConfig.parseArgs("a=1," + part))
            .withMessageContaining("'" + part + "'")
            .withMessageContaining("key=value");
    }

    // ---------------------------------------------------------------- envName / parseSize

    @Test
    void envNames() {
        assertThat(AgentConfig.envName("chunkSizeBytes")).isEqualTo("KMEM4J_CHUNK_SIZE_BYTES");
        assertThat(AgentConfig.envName("enabled")).isEqualTo("KMEM4J_ENABLED");
        assertThat(AgentConfig.envName("logLevel")).isEqualTo("KMEM4J_LOG_LEVEL");
        assertThat(AgentConfig.envName("configFile")).isEqualTo("KMEM4J_CONFIG_FILE");
        assertThat(AgentConfig.envName("reapIntervalMillis")).isEqualTo("KMEM4J_REAP_INTERVAL_MILLIS");
    }

    /** The loop names every key as the regular expression it replaced did, and also keys with digits and runs of capitals. */
    @Test
    void envNamesAsTheRegularExpressionDid() {
        final java.util.List<String> keys = new java.util.ArrayList<>();
        AgentConfig.knownKeys().forEach(keys::add);
        keys.addAll(java.util.List.of("a", "aB", "aBC", "ABc", "x9Y", "zeroOnFree", "siteSampleRate", "magazineSize2X"));
        for (final String key : keys) {
            assertThat(AgentConfig.envName(key)).as(key)
                .isEqualTo("KMEM4J_" + key.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase(java.util.Locale.ROOT));
        }
    }

    @Test
    void parseSizeUnits() {
        assertThat(AgentConfig.parseSize("4096")).isEqualTo(4096L);
        assertThat(AgentConfig.parseSize("64k")).isEqualTo(65536L);
        assertThat(AgentConfig.parseSize("64K")).isEqualTo(65536L);
        assertThat(AgentConfig.parseSize("4m")).isEqualTo(4L << 20);
        assertThat(AgentConfig.parseSize("4M")).isEqualTo(4L << 20);
        assertThat(AgentConfig.parseSize("1g")).isEqualTo(1L << 30);
        assertThat(AgentConfig.parseSize("0")).isZero();
        assertThat(AgentConfig.parseSize("0k")).isZero();
        assertThat(AgentConfig.parseSize("8589934591g")).isEqualTo(8589934591L << 30);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "k", "m", "abc", "4x", "4 k", "1.5m", "4kb", "-1k", "8589934592g",
        "99999999999999999999"})
    void parseSizeRejectsBadInput(final String value) {
        assertThatThrownBy(() -> AgentConfig.parseSize(value)).isInstanceOf(NumberFormatException.class);
    }

    // ---------------------------------------------------------------- load

    @Test
    void loadWithNothingGivesDefaults() {
        final AgentConfig c = AgentConfig.load(null, new Properties(), Map.of());
        assertThat(c.enabled).isTrue();
        assertThat(c.summary).isFalse();
        assertThat(c.logLevel).isEqualTo("info");
        assertThat(c.effective).containsExactly(
            entry("enabled", "true"),
            entry("summary", "false"),
            entry("logLevel", "info"),
            entry("ownedLifecycle", "true"),
            entry("trimNativeHeap", "true"),
            entry("chunkSizeBytes", "4194304"),
            entry("maxSizeClassBytes", "65536"),
            entry("minCapacityBytes", "1"),
            entry("magazineRounds", "32"),
            entry("depotMagazines", "16"),
            entry("retainedEmptyChunks", "1"),
            entry("reapIntervalMillis", "1000"),
            entry("collectAboveBytes", "67108864"),
            entry("zeroOnFree", "true"),
            entry("explicitLeakDetection", "false"),
            entry("siteSampleRate", "0"));
        assertThatThrownBy(() -> c.effective.put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void precedenceArgsOverSysPropsOverEnvOverFile() throws IOException {
        final Path f = file("magazineRounds=1\ndepotMagazines=2\nretainedEmptyChunks=3\nreapIntervalMillis=40\n");
        final Properties sys = props(
            "kmem4j.configFile", f.toString(),
            "kmem4j.magazineRounds", "10",
            "kmem4j.depotMagazines", "20",
            "unrelated.property", "ignored");
        final Map<String, String> env = Map.of(
            "KMEM4J_MAGAZINE_ROUNDS", "100",
            "KMEM4J_DEPOT_MAGAZINES", "200",
            "KMEM4J_RETAINED_EMPTY_CHUNKS", "300",
            "PATH", "/bin");
        final AgentConfig c = AgentConfig.load("magazineRounds=1000", sys, env);

        assertThat(c.allocator.magazineRounds()).isEqualTo(1000);     // args
        assertThat(c.allocator.depotMagazines()).isEqualTo(20);       // system property
        assertThat(c.allocator.retainedEmptyChunks()).isEqualTo(300); // environment
        assertThat(c.allocator.reapIntervalMillis()).isEqualTo(40L);  // file
        assertThat(c.allocator.chunkSizeBytes()).isEqualTo(4 << 20);  // default
        assertThat(c.effective)
            .containsEntry("magazineRounds", "1000")
            .containsEntry("depotMagazines", "20")
            .containsEntry("retainedEmptyChunks", "300")
            .containsEntry("reapIntervalMillis", "40")
            .doesNotContainKey("configFile");
    }

    /** An invalid setting from the environment, a system property or the file names where it came from; an argument does not need to. */
    @Test
    void anInvalidSettingSaysWhichSourceSetIt() throws IOException {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load(null, props(), Map.of("KMEM4J_MAGAZINE_ROUNDS", "0")))
            .withMessage("invalid kmem4j setting magazineRounds=0 (allowed: [1, 1024]); set by the environment variable"
                + " KMEM4J_MAGAZINE_ROUNDS");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load(null, props("kmem4j.magazineRounds", "0"), Map.of()))
            .withMessageEndingWith("; set by -Dkmem4j.magazineRounds");
        final Path f = tmp.resolve("bad.properties");
        Files.writeString(f, "reapIntervalMillis=1\n", StandardCharsets.UTF_8);
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("configFile=" + f, props(), Map.of()))
            .withMessageEndingWith("; set by the configuration file " + f);
        assertThatIllegalArgumentException().as("the argument wins over the variable, and is named as it is")
            .isThrownBy(() -> AgentConfig.load("magazineRounds=0", props(), Map.of("KMEM4J_MAGAZINE_ROUNDS", "8")))
            .withMessage("invalid kmem4j setting magazineRounds=0 (allowed: [1, 1024])");
        assertThatIllegalArgumentException().as("a contradiction found at build names its source too")
            .isThrownBy(() -> AgentConfig.load(null, props(), Map.of("KMEM4J_CHUNK_SIZE_BYTES", "256k")))
            .withMessageEndingWith("; set by the environment variable KMEM4J_CHUNK_SIZE_BYTES");
    }

    @Test
    void aConfigurationFileDoesNotNameAnother() throws IOException {
        final Path f = tmp.resolve("outer.properties");
        Files.writeString(f, "configFile=/elsewhere.properties\nsummary=true\n", StandardCharsets.UTF_8);
        assertThatIllegalArgumentException().isThrownBy(() -> AgentConfig.load("configFile=" + f, props(), Map.of()))
            .withMessageStartingWith("invalid kmem4j setting configFile=/elsewhere.properties in the configuration file " + f);
    }

    @Test
    void aKeyGivenTwiceInTheArgumentsIsRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> AgentConfig.load("summary=true,summary=false", props(), Map.of()))
            .withMessage("kmem4j setting summary is given twice in the agent arguments (summary=true and summary=false);"
                + " give it once");
        assertThat(AgentConfig.load("excludeCallers=com.acme.,org.example.,summary=true", props(), Map.of()).summary)
            .as("a list's items are no repeated keys").isTrue();
    }

    @Test
    void eachSourceAloneIsRead() throws IOException {
        assertThat(AgentConfig.load("summary=true", new Properties(), Map.of()).summary).isTrue();
        assertThat(AgentConfig.load(null, props("kmem4j.summary", "true"), Map.of()).summary).isTrue();
        assertThat(AgentConfig.load(null, new Properties(), Map.of("KMEM4J_SUMMARY", "true")).summary).isTrue();
        final Path f = file("summary=true\n");
        assertThat(AgentConfig.load("configFile=" + f, new Properties(), Map.of()).summary).isTrue();
        // env names are exact: the camel-case key or a wrong prefix is not read
        assertThat(AgentConfig.load(null, new Properties(), Map.of("KMEM4J_summary", "true",
            "kmem4j.summary", "true", "SUMMARY", "true")).summary).isFalse();
    }

    @Test
    void configFileComesFromTheHighestSourceNamingIt() throws IOException {
        final Path fromArgs = file("magazineRounds=1\n");
        final Path fromSys = file("magazineRounds=2\n");
        final Path fromEnv = file("magazineRounds=3\n");
        final Properties sys = props("kmem4j.configFile", fromSys.toString());
        final Map<String, String> env = Map.of("KMEM4J_CONFIG_FILE", fromEnv.toString());

        assertThat(AgentConfig.load("configFile=" + fromArgs, sys, env).allocator.magazineRounds()).isEqualTo(1);
        assertThat(AgentConfig.load(null, sys, env).allocator.magazineRounds()).isEqualTo(2);
        assertThat(AgentConfig.load(null, new Properties(), env).allocator.magazineRounds()).isEqualTo(3);
    }

    @Test
    void fileKeysMayCarryThePrefixAndUseSizeUnits() throws IOException {
        final Path f = file("# comment\nkmem4j.chunkSizeBytes=8m\nmaxSizeClassBytes = 32k\nlogLevel=DEBUG\n");
        final AgentConfig c = AgentConfig.load("configFile=" + f, new Properties(), Map.of());
        assertThat(c.allocator.chunkSizeBytes()).isEqualTo(8 << 20);
        assertThat(c.allocator.maxSizeClassBytes()).isEqualTo(32 << 10);
        assertThat(c.logLevel).isEqualTo("debug");
        assertThat(c.effective).containsEntry("logLevel", "debug").containsEntry("chunkSizeBytes", "8388608");
    }

    @Test
    void missingConfigFileNamesKeyAndPath() {
        final String missing = tmp.resolve("nope.properties").toString();
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("configFile=" + missing, new Properties(), Map.of()))
            .withMessageContaining("configFile=" + missing)
            .withMessageContaining("allowed");
    }

    @Test
    void kmem4jDebugSystemPropertyIsNotASetting() {
        final AgentConfig c = AgentConfig.load(null, props("kmem4j.debug", "true"), Map.of());
        assertThat(c.effective).doesNotContainKey("debug");
    }

    @Test
    void unknownKeyListsKnownKeys() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("chunkSize=4m", new Properties(), Map.of()))
            .withMessageContaining("chunkSize=4m")
            .withMessageContaining("known: " + ALL_KNOWN);
    }

    @Test
    void unknownEnvironmentVariableWithThePrefixIsReportedNotFatal() {
        final AgentConfig c = AgentConfig.load(null, props(), Map.of("KMEM4J_SUMARY", "true", "KMEM4J_SUMMARY", "true",
            "KMEM4J_TEST_JDKS", "/jdk", "PATH", "/bin", "KMEM4J_A", "1"));
        assertThat(c.unknownEnvironmentVariables).as("the build's own variables are not listed")
            .containsExactly("KMEM4J_A", "KMEM4J_SUMARY");
        assertThat(c.summary).isTrue();
    }

    @Test
    void unknownSystemPropertyWithThePrefixIsReportedNotFatal() {
        // other tools share the prefix (the it-tests pass kmem4j.agent.jar): list it for a warning
        final AgentConfig c = AgentConfig.load(null,
            props("kmem4j.bogus", "1", "kmem4j.agent.jar", "/x.jar", "kmem4j.chunkSizeBytes", "8m"), Map.of());
        assertThat(c.unknownSystemProperties).containsExactlyInAnyOrder("kmem4j.bogus", "kmem4j.agent.jar");
        assertThat(c.effective).containsEntry("chunkSizeBytes", Integer.toString(8 << 20));
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load(null, props("kmem4j.chunkSizeBytes", "5"), Map.of()))
            .withMessageContaining("chunkSizeBytes=5");
    }

    @Test
    void unknownKeyInFileIsRejected() throws IOException {
        final Path f = file("bogus=1\n");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("configFile=" + f, new Properties(), Map.of()))
            .withMessageContaining("bogus=1")
            .withMessageContaining(ALL_KNOWN);
    }

    @ParameterizedTest
    @ValueSource(strings = {"enabled", "summary"})
    void invalidBooleanNamesKeyValueAndAllowed(final String key) {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load(key + "=yes", new Properties(), Map.of()))
            .withMessage("invalid kmem4j setting " + key + "=yes (allowed: true, false)");
    }

    @Test
    void booleansAreCaseInsensitiveAndTrimmed() {
        final AgentConfig c = AgentConfig.load("enabled=FALSE,summary=True", new Properties(), Map.of());
        assertThat(c.enabled).isFalse();
        assertThat(c.summary).isTrue();
        assertThat(c.effective).containsEntry("enabled", "false").containsEntry("summary", "true");
        assertThat(AgentConfig.load(null, props("kmem4j.enabled", " false "), Map.of()).enabled).isFalse();
    }

    @Test
    void invalidLevelNamesKeyValueAndAllowed() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load(null, new Properties(), Map.of("KMEM4J_LOG_LEVEL", "verbose")))
            .withMessage("invalid kmem4j setting logLevel=verbose (allowed: trace, debug, info, warn, error, off);"
                + " set by the environment variable KMEM4J_LOG_LEVEL");
    }

    @ParameterizedTest
    @ValueSource(strings = {"trace", "debug", "info", "warn", "error", "off", "WARN", "Off"})
    void validLevels(final String level) {
        final AgentConfig c = AgentConfig.load("logLevel=" + level, new Properties(), Map.of());
        assertThat(c.logLevel).isEqualTo(level.toLowerCase(java.util.Locale.ROOT));
    }

    @Test
    void invalidNumberNamesKeyValueAndAllowed() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("magazineRounds=lots", new Properties(), Map.of()))
            .withMessage("invalid kmem4j setting magazineRounds=lots (allowed: [1, 1024])");
    }

    @Test
    void nettysAllocatorHasLargerClassesByDefaultAndItsOwnKey() {
        final AgentConfig plain = AgentConfig.load("", new Properties(), Map.of());
        assertThat(plain.nettyAllocatorConfig).as("no preset, no Netty allocator").isNull();
        assertThat(plain.effective).doesNotContainKey("nettyMaxSizeClassBytes");

        final AgentConfig netty = AgentConfig.load("presets=netty-allocator,chunkSizeBytes=4m", new Properties(), Map.of());
        assertThat(netty.allocator.maxSizeClassBytes()).isEqualTo(65536);
        assertThat(netty.nettyAllocatorConfig.maxSizeClassBytes()).isEqualTo(AgentConfig.NETTY_MAX_SIZE_CLASS_DEFAULT)
            .isEqualTo(262144);
        assertThat(netty.nettyAllocatorConfig.zeroing()).isFalse();
        assertThat(netty.effective).containsEntry("nettyMaxSizeClassBytes", "262144");

        assertThat(AgentConfig.load("presets=netty-allocator,nettyMaxSizeClassBytes=64k", new Properties(), Map.of())
            .nettyAllocatorConfig.maxSizeClassBytes()).isEqualTo(65536);
        assertThat(AgentConfig.load("presets=netty-allocator,chunkSizeBytes=4m", new Properties(),
            Map.of("KMEM4J_NETTY_MAX_SIZE_CLASS_BYTES", "1m")).nettyAllocatorConfig.maxSizeClassBytes()).isEqualTo(1 << 20);
        assertThat(AgentConfig.load("presets=netty-allocator,maxSizeClassBytes=512k,chunkSizeBytes=4m", new Properties(), Map.of())
            .nettyAllocatorConfig.maxSizeClassBytes()).as("never below the agent's").isEqualTo(512 << 10);
        assertThat(AgentConfig.load("presets=netty-allocator,chunkSizeBytes=1m", new Properties(), Map.of())
            .nettyAllocatorConfig.maxSizeClassBytes()).as("a 256 KiB slab (2 MiB) does not fit: the agent's classes")
            .isEqualTo(65536);
    }

    @Test
    void nettyMaxSizeClassErrorsNameTheKey() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("presets=netty-allocator,nettyMaxSizeClassBytes=2m", new Properties(), Map.of()))
            .withMessage("invalid kmem4j setting nettyMaxSizeClassBytes=2m (allowed: a size in [64, 1048576], e.g. 262144 or 256k)");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("nettyMaxSizeClassBytes=lots", new Properties(), Map.of()))
            .withMessageStartingWith("invalid kmem4j setting nettyMaxSizeClassBytes=lots (allowed: a size in [64, 1048576]");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("presets=netty-allocator,nettyMaxSizeClassBytes=1m,chunkSizeBytes=1m",
                new Properties(), Map.of()))
            .withMessage("invalid kmem4j setting nettyMaxSizeClassBytes=1m (allowed: a largest class whose slab, 8 objects"
                + " and at most 4 MiB, fits chunkSizeBytes=1048576, or a larger chunkSizeBytes)");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("presets=netty-allocator,minCapacityBytes=4k,nettyMaxSizeClassBytes=1k",
                new Properties(), Map.of()))
            .withMessage("invalid kmem4j setting nettyMaxSizeClassBytes=1k (allowed: at least minCapacityBytes=4096)");
        final AgentConfig ignored = AgentConfig.load("nettyMaxSizeClassBytes=128k", new Properties(), Map.of());
        assertThat(ignored.nettyMaxSizeClassIgnored).as("set without the preset: a warning at start").isTrue();
        assertThat(ignored.nettyAllocatorConfig).isNull();
        assertThat(AgentConfig.load("presets=netty-allocator,nettyMaxSizeClassBytes=128k", new Properties(), Map.of())
            .nettyMaxSizeClassIgnored).isFalse();
    }

    @Test
    void allocatorRangeErrorsNameTheValueAsGiven() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("chunkSizeBytes=2g", new Properties(), Map.of()))
            .withMessageStartingWith("invalid kmem4j setting chunkSizeBytes=2g (allowed: ");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("maxSizeClassBytes=1m,chunkSizeBytes=256k", new Properties(),
                Map.of()))
            .withMessageStartingWith("invalid kmem4j setting chunkSizeBytes=256k (allowed: ")
            .withMessageContaining("maxSizeClassBytes=1048576");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("", new Properties(), Map.of("KMEM4J_CHUNK_SIZE_BYTES", " 300k ")))
            .withMessageStartingWith("invalid kmem4j setting chunkSizeBytes=300k (allowed: ")
            .withMessageEndingWith("; set by the environment variable KMEM4J_CHUNK_SIZE_BYTES");
        final Properties p = new Properties();
        p.setProperty("kmem4j.chunkSizeBytes", "1000");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> AgentConfig.load("", p, Map.of()))
            .withMessageStartingWith("invalid kmem4j setting chunkSizeBytes=1000 (allowed: ")
            .withMessageEndingWith("; set by -Dkmem4j.chunkSizeBytes");
    }

    @Test
    void effectiveMapReflectsEverySetting() {
        final AgentConfig c = AgentConfig.load(
            "enabled=false,summary=true,logLevel=warn,ownedLifecycle=false,trimNativeHeap=false,chunkSizeBytes=8m,"
                + "maxSizeClassBytes=128k,"
                + "minCapacityBytes=0,magazineRounds=64,depotMagazines=4,retainedEmptyChunks=0,reapIntervalMillis=250,"
                + "collectAboveBytes=0,zeroOnFree=true,explicitLeakDetection=true,siteSampleRate=100",
            new Properties(), Map.of());
        assertThat(c.effective).containsExactly(
            entry("enabled", "false"),
            entry("summary", "true"),
            entry("logLevel", "warn"),
            entry("ownedLifecycle", "false"),
            entry("trimNativeHeap", "false"),
            entry("chunkSizeBytes", "8388608"),
            entry("maxSizeClassBytes", "131072"),
            entry("minCapacityBytes", "0"),
            entry("magazineRounds", "64"),
            entry("depotMagazines", "4"),
            entry("retainedEmptyChunks", "0"),
            entry("reapIntervalMillis", "250"),
            entry("collectAboveBytes", "0"),
            entry("zeroOnFree", "true"),
            entry("explicitLeakDetection", "true"),
            entry("siteSampleRate", "100"));
        assertThat(c.allocator.asMap()).isEqualTo(Map.ofEntries(entry("chunkSizeBytes", "8388608"),
            entry("maxSizeClassBytes", "131072"), entry("minCapacityBytes", "0"), entry("magazineRounds", "64"),
            entry("depotMagazines", "4"), entry("retainedEmptyChunks", "0"), entry("reapIntervalMillis", "250"),
            entry("collectAboveBytes", "0"), entry("zeroOnFree", "true"), entry("explicitLeakDetection", "true"),
            entry("siteSampleRate", "100")));
    }

    /** The README's Options table is the third place keys are listed: it must list exactly the known ones. */
    @Test
    void theReadmeOptionsTableListsExactlyTheKnownKeys() throws IOException {
        final java.util.List<String> readme = new java.util.ArrayList<>();
        boolean inTable = false;
        for (final String line : Files.readAllLines(Path.of("..", "README.md"), StandardCharsets.UTF_8)) {
            if (line.startsWith("| key | default | allowed | meaning |")) {
                inTable = true;
            } else if (inTable && line.startsWith("| `")) {
                readme.add(line.substring(3, line.indexOf('`', 3)));
            } else if (inTable && !line.startsWith("|")) {
                break;
            }
        }
        final java.util.List<String> known = new java.util.ArrayList<>();
        AgentConfig.knownKeys().forEach(known::add);
        assertThat(readme).as("keys in the README's Options table").containsExactlyInAnyOrderElementsOf(known);
    }
}
