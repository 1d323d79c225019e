import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * FakeClock sets the wall clock of the NowHelper JVM through libfaketime, which NowClient
 * preloads with FAKETIME_TIMESTAMP_FILE pointing at a file and FAKETIME_NO_CACHE=1, so every
 * clock read re-reads the file; an absolute timestamp without '@' freezes the clock there.
 * Quartz reads the clock inside CronTriggerImpl/SimpleTriggerImpl.updateAfterMisfire
 * (new Date()), inside the W branches of CronExpression.getTimeAfter, and once for
 * CronExpression.MAX_YEAR.
 *
 * libfaketime parses the fraction as a floating-point number, so ".161" can come out as
 * 160.999… ms and read as 160; the file therefore carries half a millisecond more
 * (".161500"), which Java's millisecond clock truncates away. set verifies that the clock
 * really reads the requested millisecond, so a broken preload fails the run instead of
 * producing wrong vectors.
 */
final class FakeClock {
    private static final DateTimeFormatter FMT =
            DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSS'500'").withZone(ZoneOffset.UTC);

    private final Path file;

    private FakeClock(Path file) {
        this.file = file;
    }

    /** fromEnv returns the clock named by FAKETIME_TIMESTAMP_FILE, or fails if it is unset. */
    static FakeClock fromEnv() {
        String f = System.getenv("FAKETIME_TIMESTAMP_FILE");
        String preload = System.getenv("LD_PRELOAD");
        if (f == null || preload == null || !preload.contains("faketime")) {
            throw new IllegalStateException(
                    "quartzoracle must run under libfaketime (use run.sh): FAKETIME_TIMESTAMP_FILE and LD_PRELOAD are required");
        }
        return new FakeClock(Path.of(f));
    }

    /** set freezes the clock at ms (Unix milliseconds) and checks that the JVM sees it. */
    void set(long ms) {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(tmp, FMT.format(Instant.ofEpochMilli(ms)) + "\n", StandardCharsets.US_ASCII);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IllegalStateException("fakeclock: write " + file + ": " + e, e);
        }
        check(ms);
    }

    /** check fails unless the JVM clock reads exactly ms. */
    static void check(long ms) {
        long got = System.currentTimeMillis();
        if (got != ms) {
            throw new IllegalStateException("fakeclock: clock reads " + Instant.ofEpochMilli(got)
                    + ", want " + Instant.ofEpochMilli(ms) + " (is libfaketime preloaded with FAKETIME_NO_CACHE=1?)");
        }
    }
}
