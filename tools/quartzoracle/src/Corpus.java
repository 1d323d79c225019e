import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Corpus collects evaluated cron cases in insertion order, drops repeated inputs, and adds the
 * tags that follow from the outcome (invalid, leap, monthend, quirk for the W millisecond bug).
 */
final class Corpus {
    private final CronEval eval;
    private final NowClient helper;
    private final long clockMillis;
    private final Set<String> seen = new HashSet<>();
    private final Map<String, Integer> counters = new HashMap<>();
    final List<CronCase> cases = new ArrayList<>();
    final List<CronEval.Outcome> outcomes = new ArrayList<>();
    /** wMillis counts cases whose answer depends on the host clock's millisecond (brief §3.2). */
    int wMillis;

    /**
     * clockMillis is where the clock is frozen while cases run. Its millisecond part is 999 so
     * that the W branches, which compare a candidate carrying the clock's millisecond with an
     * untruncated start + 1 s, always accept the candidate (the behaviour chronos adopts).
     * W cases with a sub-second start are rerun in the helper with the clock at .000; when the
     * answers differ the case is tagged quirk and w_millis.
     */
    Corpus(CronEval eval, NowClient helper, long clockMillis) {
        this.eval = eval;
        this.helper = helper;
        this.clockMillis = clockMillis;
    }

    /** add evaluates c and keeps it, or returns null when the same input is already present. */
    CronEval.Outcome add(CronCase c) {
        if (!seen.add(c.key())) {
            return null;
        }
        if (c.id.length() == 1) {
            int n = counters.merge(c.id, 1, Integer::sum);
            c.id = String.format("%s%04d", c.id, n);
        }
        CronEval.Outcome o = eval.run(c);
        if (!o.valid) {
            c.tags.add("invalid");
        } else {
            String[] f = c.expr.trim().toUpperCase().split("[ \t]+");
            if (f.length >= 6 && (f[3].contains("L") || f[3].contains("W") || f[5].matches(".*[0-9A-Z]L.*"))) {
                c.tags.add("monthend");
            }
            for (long t : o.next) {
                LocalDate d = Instant.ofEpochMilli(t).atZone(c.zone).toLocalDate();
                if (d.getMonthValue() == 2 && d.getDayOfMonth() == 29) {
                    c.tags.add("leap");
                }
            }
            if (c.start % 1000 != 0 && c.expr.toUpperCase().contains("W")) {
                // Same chain with the clock at .000 instead of .999 (in the helper JVM).
                CronEval.Outcome other = helper.cron(c, clockMillis - clockMillis % 1000);
                if (!other.next.equals(o.next) || !String.valueOf(other.end).equals(o.end)) {
                    c.tags.add("quirk");
                    c.tags.add("w_millis");
                    wMillis++;
                }
            }
        }
        cases.add(c);
        outcomes.add(o);
        return o;
    }

    /** lines renders every case as one JSON line. */
    List<String> lines() {
        List<String> l = new ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            Map<String, Object> m = CronEval.toJson(cases.get(i), outcomes.get(i));
            l.add(Json.write(m));
        }
        return l;
    }
}
