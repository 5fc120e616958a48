package io.kmem4j.agent.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SlabtopTest {
    private static final Slabtop.Cache SMALL = new Slabtop.Cache("kmem4j-64", 1024, 4, 64, 1, 1024, 65536, 9000);
    private static final Slabtop.Cache MID = new Slabtop.Cache("kmem4j-4096", 48, 40, 4096, 3, 16, 3 * 65536, 1000);
    private static final Slabtop.Cache BIG = new Slabtop.Cache("kmem4j-65536", 16, 12, 65536, 2, 8, 2 * 8 * 65536, 20);
    private static final Slabtop.Cache EMPTY = new Slabtop.Cache("kmem4j-128", 0, 0, 128, 0, 512, 0, 0);
    private static final Slabtop.Frame FRAME = new Slabtop.Frame(10_020, 9_964, 56, 900_000, 4_202_496, 0.96875, 3,
        List.of(SMALL, MID, BIG, EMPTY));

    @Test
    void screenLooksLikeProcpsSlabtop() {
        final String screen = Slabtop.format(FRAME, 1, Slabtop.Sort.ACTIVE, "kmem4j slabtop - pid 42");
        assertThat(screen).isEqualTo(String.join("\n",
            " kmem4j slabtop - pid 42",
            " Active / Total Objects (% used)    : 56 / 1088 (5.1%)",
            " Total / Partial Slabs              : 6 / 1",
            " Active / Total Caches (% used)     : 3 / 4 (75.0%)",
            " Active / Total Size (% used)       : 928.25K / 1280.00K (72.5%)",
            " Bytes In Use / Reserved (% used)   : 878.91K / 4104.00K (21.4%)",
            " Magazine Hit Rate                  : 96.9% (allocations 10020, frees 9964, live 56, fallbacks 3)",
            "",
            "  OBJS ACTIVE  USE OBJ SIZE  SLABS OBJ/SLAB CACHE SIZE NAME",
            "    48     40  83%    4.00K      3       16       192K kmem4j-4096",
            "    16     12  75%   64.00K      2        8      1024K kmem4j-65536",
            "  1024      4   0%    0.06K      1     1024        64K kmem4j-64",
            "     0      0   0%    0.13K      0      512         0K kmem4j-128",
            ""));
    }

    @Test
    void columnsLineUpUnderTheHeader() {
        final String header = Slabtop.COLUMNS;
        final String row = Slabtop.row(MID);
        // right-aligned numeric columns end where their header word ends
        for (final String column : List.of("OBJS", "ACTIVE", "USE", "SIZE", "SLABS", "OBJ/SLAB", "SIZE NAME")) {
            final int end = header.indexOf(column.equals("SIZE NAME") ? "SIZE NAME" : column, column.equals("SIZE") ? 12 : 0)
                + (column.equals("SIZE NAME") ? 4 : column.length());
            assertThat(row.charAt(end - 1)).as("column %s in\n%s\n%s", column, header, row).isNotEqualTo(' ');
            assertThat(row.charAt(end)).as("column %s in\n%s\n%s", column, header, row).isEqualTo(' ');
        }
        assertThat(row.indexOf("kmem4j-4096")).isEqualTo(header.indexOf("NAME"));
    }

    @Test
    void sortOrders() {
        assertThat(names(Slabtop.Sort.ACTIVE)).containsExactly("kmem4j-4096", "kmem4j-65536", "kmem4j-64", "kmem4j-128");
        assertThat(names(Slabtop.Sort.SIZE)).containsExactly("kmem4j-65536", "kmem4j-4096", "kmem4j-64", "kmem4j-128");
        assertThat(names(Slabtop.Sort.ALLOCS)).containsExactly("kmem4j-64", "kmem4j-4096", "kmem4j-65536", "kmem4j-128");
    }

    /** Sorted by allocations, each row shows that figure; other orders keep procps' columns only. */
    @Test
    void rowsSortedByAllocationsShowThem() {
        final java.util.List<String> rows = Slabtop.format(FRAME, 1, Slabtop.Sort.ALLOCS, null).lines()
            .filter(l -> l.contains(" kmem4j-")).collect(java.util.stream.Collectors.toList());
        assertThat(rows).hasSize(FRAME.caches().size());
        for (final Slabtop.Cache c : FRAME.caches()) {
            assertThat(rows).as(c.name()).anyMatch(l -> l.endsWith(" " + c.name() + " (allocations " + c.allocations() + ")"));
        }
        assertThat(Slabtop.format(FRAME, 1, Slabtop.Sort.ACTIVE, null).lines().filter(l -> l.contains(" kmem4j-")))
            .noneMatch(l -> l.contains("(allocations"));
    }

    @Test
    void tiesGoToTheSmallerObjectSize() {
        final Slabtop.Cache a = new Slabtop.Cache("kmem4j-256", 0, 0, 256, 0, 256, 0, 0);
        final Slabtop.Cache b = new Slabtop.Cache("kmem4j-192", 0, 0, 192, 0, 341, 0, 0);
        for (final Slabtop.Sort sort : Slabtop.Sort.values()) {
            assertThat(Slabtop.sorted(List.of(a, b), sort)).as("%s", sort).containsExactly(b, a);
        }
    }

    @Test
    void emptyFrameHasNoDivisionByZero() {
        final String screen = Slabtop.format(new Slabtop.Frame(0, 0, 0, 0, 0, 0, 0, List.of()), 0,
            Slabtop.Sort.ACTIVE, null);
        assertThat(screen).contains("Active / Total Objects (% used)    : 0 / 0 (0.0%)")
            .doesNotContain("NaN").doesNotContain("Infinity").endsWith(Slabtop.COLUMNS + "\n");
    }

    @Test
    void formatIgnoresTheDefaultLocale() {
        final Locale saved = Locale.getDefault();
        try {
            Locale.setDefault(Locale.GERMANY);
            final String german = Slabtop.format(FRAME, 1, Slabtop.Sort.ACTIVE, null);
            Locale.setDefault(Locale.ROOT);
            assertThat(german).isEqualTo(Slabtop.format(FRAME, 1, Slabtop.Sort.ACTIVE, null)).contains("96.9%");
        } finally {
            Locale.setDefault(saved);
        }
    }

    @ParameterizedTest
    @CsvSource({"1s,1000", "500ms,500", "2.5s,2500", "1m,60000", "3,3000", "PT2S,2000", "100ms,100", " 2 s ,2000"})
    void intervals(final String text, final long millis) {
        assertThat(SlabtopCommand.parseInterval(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "fast", "99ms", "0", "-1s", "1h"})
    void badIntervals(final String text) {
        assertThatIllegalArgumentException().isThrownBy(() -> SlabtopCommand.parseInterval(text));
    }

    @Test
    void humanIntervals() {
        assertThat(SlabtopCommand.human(Duration.ofSeconds(1))).isEqualTo("1s");
        assertThat(SlabtopCommand.human(Duration.ofMillis(500))).isEqualTo("500ms");
        assertThat(SlabtopCommand.human(Duration.ofMillis(2500))).isEqualTo("2.5s");
    }

    @Test
    void sortNames() {
        assertThat(Slabtop.Sort.parse("active")).isEqualTo(Slabtop.Sort.ACTIVE);
        assertThat(Slabtop.Sort.parse("SIZE")).isEqualTo(Slabtop.Sort.SIZE);
        assertThat(Slabtop.Sort.parse("allocs")).isEqualTo(Slabtop.Sort.ALLOCS);
        assertThatIllegalArgumentException().isThrownBy(() -> Slabtop.Sort.parse("name"))
            .withMessageContaining("active, size or allocs");
    }

    @Test
    void commandLineDefaultsAndUsageErrors() {
        final SlabtopCommand command = new SlabtopCommand();
        new CommandLine(command).parseArgs("123");
        assertThat(command.pid).isEqualTo(123);
        assertThat(command.interval).isEqualTo(Duration.ofSeconds(1));
        assertThat(command.sort).isEqualTo(Slabtop.Sort.ACTIVE);
        assertThat(command.once).isFalse();

        final SlabtopCommand other = new SlabtopCommand();
        new CommandLine(other).parseArgs("7", "--interval", "250ms", "--sort", "allocs", "--once");
        assertThat(other.interval).isEqualTo(Duration.ofMillis(250));
        assertThat(other.sort).isEqualTo(Slabtop.Sort.ALLOCS);
        assertThat(other.once).isTrue();

        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final CommandLine cli = new CommandLine(new Kmem4jCli());
        cli.setErr(new PrintWriter(new PrintStream(err, true, StandardCharsets.UTF_8), true));
        assertThat(cli.execute("slabtop", "1", "--sort", "bogus")).isEqualTo(2);
        assertThat(cli.execute("slabtop", "1", "--interval", "1ms")).isEqualTo(2);
        assertThat(cli.execute("slabtop")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("'bogus' is not a sort order")
            .contains("at least 100ms").contains("Missing required parameter");
    }

    private static List<String> names(final Slabtop.Sort sort) {
        return Slabtop.sorted(FRAME.caches(), sort).stream().map(Slabtop.Cache::name).toList();
    }
}
