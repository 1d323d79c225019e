import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Date;

/**
 * Times formats and parses the instants in the vectors: RFC 3339 with exactly three fractional
 * digits and the numeric offset that the instant has in the case's zone (never "Z"), so Go can
 * read every value with time.RFC3339Nano and compare the offset too.
 */
final class Times {
    private Times() {}

    private static final DateTimeFormatter FMT =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSxxx");

    /** fmt formats the instant ms (Unix milliseconds) in zone. */
    static String fmt(long ms, ZoneId zone) {
        return FMT.format(Instant.ofEpochMilli(ms).atZone(zone));
    }

    /** fmt formats d in zone, or returns null for a null date. */
    static String fmt(Date d, ZoneId zone) {
        return d == null ? null : fmt(d.getTime(), zone);
    }

    /** ms parses an ISO-8601 instant with an offset, for example 2025-01-01T00:00:00Z. */
    static long ms(String iso) {
        return OffsetDateTime.parse(iso).toInstant().toEpochMilli();
    }
}
