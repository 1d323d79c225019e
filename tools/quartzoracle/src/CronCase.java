import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** CronCase is one getTimeAfter chain to compute: an expression, a zone and a start instant. */
final class CronCase {
    /** id is a one-letter prefix until Corpus numbers the case (brief ids are kept). */
    String id;
    final String expr;
    final ZoneId zone;
    final long start;
    final Set<String> tags = new LinkedHashSet<>();

    CronCase(String id, String expr, String zone, long start, String... tags) {
        this.id = id;
        this.expr = expr;
        this.zone = ZoneId.of(zone);
        this.start = start;
        this.tags.addAll(List.of(tags));
    }

    /** key identifies the inputs, so corpora can drop duplicates. */
    String key() {
        return expr + "\u0000" + zone.getId() + "\u0000" + start;
    }

    /** sortedTags returns the tags in a fixed order (alphabetical). */
    List<String> sortedTags() {
        List<String> l = new ArrayList<>(tags);
        l.sort(null);
        return l;
    }
}
