import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;

/**
 * SweepCases walks the day rules systematically: every nW, L-n, L-nW, dL and d#k through the
 * months of 2024–2029 (leap and non-leap Februaries, every weekday position of month ends), and
 * monthly and yearly L/# schedules that land on the DST-change Sundays of the corpus zones at
 * wall times inside the gap or overlap.
 */
final class SweepCases {
    private SweepCases() {}

    /** STARTS are local month starts; a chain of ten monthly fires from each covers 2024–2029. */
    static final String[] STARTS = {
        "2024-01-01T00:00:00", "2024-11-01T00:00:00", "2025-09-01T00:00:00",
        "2026-07-01T00:00:00", "2027-05-01T00:00:00", "2028-01-01T00:00:00",
    };

    /** DST_DAYS are schedules on the change Sundays of each zone, in and around the affected span. */
    static final String[][] DST_DAYS = {
        {"America/New_York", "0 30 2 ? * 1#2", "0 30 2 ? 3 1#2", "0 0 2 ? 3 1#2", "0 30 1 ? * 1#1",
            "0 30 1 ? 11 1#1", "0 59 1 ? 11 1#1", "0 30 2 8-14W 3 ?", "0 30 1 1-7 11 ?"},
        {"Europe/London", "0 30 1 ? * 1L", "0 30 1 ? 3 1L", "0 30 1 ? 10 1L", "0 0 1 ? 10 1L", "0 59 0 ? 3 1L",
            "0 30 1 L-6 3,10 ?", "0 30 1 25-31 3 ?"},
        {"Europe/Berlin", "0 30 2 ? * 1L", "0 30 2 ? 3 1L", "0 30 2 ? 10 1L", "0 0 3 ? 10 1L", "0 30 2 LW 3 ?"},
        {"Australia/Lord_Howe", "0 15 2 ? * 1#1", "0 15 2 ? 10 1#1", "0 45 1 ? 4 1#1", "0 50 1 ? 4 1#1",
            "0 0 2 ? 10 1#1", "0 30 1 ? 4 1#1", "0 15 2 1W 10 ?"},
        {"Pacific/Chatham", "0 0 3 ? 9 1L", "0 15 3 ? 9 1L", "0 0 3 ? 4 1#1", "0 45 2 ? 4 1#1", "0 30 3 ? * 1L"},
        {"America/Sao_Paulo", "0 0 0 ? 11 1#1", "0 30 0 ? * 1#1", "0 30 23 ? 2 7#3", "0 0 0 ? 2 1#3"},
    };

    static void addTo(Corpus corpus) {
        List<String> rules = new ArrayList<>();
        for (int n = 1; n <= 31; n++) {
            rules.add(n + "W");
        }
        rules.add("LW");
        for (int n = 0; n <= 30; n++) {
            rules.add("L-" + n);
        }
        for (int n = 1; n <= 27; n++) {
            rules.add("L-" + n + "W");
        }
        for (String rule : rules) {
            sweep(corpus, "0 0 12 " + rule + " * ?", "UTC");
        }
        for (int d = 1; d <= 7; d++) {
            sweep(corpus, "0 0 12 ? * " + d + "L", "UTC");
            for (int k = 1; k <= 5; k++) {
                sweep(corpus, "0 0 12 ? * " + d + "#" + k, "UTC");
            }
        }
        for (String[] z : DST_DAYS) {
            for (int i = 1; i < z.length; i++) {
                for (String s : new String[] {"2018-01-01T00:00:00", "2024-01-01T00:00:00", "2025-06-01T00:00:00"}) {
                    if (s.startsWith("2018") && !z[0].equals("America/Sao_Paulo")) {
                        continue;
                    }
                    add(corpus, z[i], z[0], local(s, z[0]), "dst");
                }
            }
        }
    }

    /** sweep runs expr from every month start, and from 1 ms before its first fire. */
    private static void sweep(Corpus corpus, String expr, String zone) {
        for (String s : STARTS) {
            CronEval.Outcome o = add(corpus, expr, zone, local(s, zone));
            if (o == null || !o.valid || "hang".equals(o.end)) {
                return;
            }
            if (s.equals(STARTS[0]) && !o.next.isEmpty()) {
                add(corpus, expr, zone, o.next.get(0) - 1);
            }
        }
    }

    private static long local(String s, String zone) {
        return LocalDateTime.parse(s).atZone(ZoneId.of(zone)).toInstant().toEpochMilli();
    }

    private static CronEval.Outcome add(Corpus corpus, String expr, String zone, long start, String... tags) {
        CronCase c = new CronCase("W", expr, zone, start, "hand", "sweep");
        c.tags.addAll(List.of(tags));
        return corpus.add(c);
    }
}
