import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.List;

/**
 * HandCases are hand-picked expressions (the chronos seeds, L/W/#, names, wraps, steps, lists,
 * years, accepted quirks and rejected forms), each run from fixed starts around leap days and
 * month ends, and from exactly on, 1 ms before and 1 ms after its first fire times.
 */
final class HandCases {
    private HandCases() {}

    /** EXPRS lists expression and tags; "invalid" and some others are added from the outcome. */
    static final String[][] EXPRS = {
        // chronos seeds
        {"0 0 2 * * ?"}, {"0 30 9 ? * MON-FRI"}, {"0/10 * * * * ?"}, {"0 50 23 * * ?"},
        {"0 0 1 L * ?", "monthend"},
        // L family
        {"0 15 10 L * ?", "monthend"}, {"0 0 0 L-1 * ?", "monthend"}, {"0 0 12 L-2 * ?", "monthend"},
        {"0 0 12 L-15 * ?", "monthend"}, {"0 0 12 L-27 * ?", "monthend"}, {"0 0 12 L-28 * ?", "monthend"},
        {"0 0 12 L-29 * ?", "monthend"}, {"0 0 12 L-30 * ?", "monthend"}, {"0 0 12 L-0 * ?", "monthend"},
        {"0 0 12 LW * ?", "monthend"}, {"0 0 12 L-1W * ?", "monthend"}, {"0 0 12 L-3W * ?", "monthend"},
        {"0 0 12 L-5W * ?", "monthend"}, {"0 0 12 L-26W * ?", "monthend"}, {"0 0 12 L-27W * ?", "monthend"},
        {"0 0 23 L 2 ?", "monthend", "leap"}, {"59 59 23 L * ?", "monthend"}, {"0 0 0 L 2 ? 2096-2104", "monthend", "leap"},
        // W family
        {"0 0 12 1W * ?", "monthend"}, {"0 0 12 2W * ?"}, {"0 0 12 15W * ?"}, {"0 0 12 28W * ?", "monthend"},
        {"0 0 12 29W * ?", "monthend"}, {"0 0 12 30W * ?", "monthend"}, {"0 0 12 31W * ?", "monthend", "quirk"},
        {"0 0 12 30W 2 ?", "monthend", "quirk", "leap"}, {"0 0 12 31W 4,6,9,11 ?", "monthend", "quirk"},
        {"0 0 12 1W,15 * ?", "monthend", "quirk"}, {"0 0 9 1W 1 ?", "monthend"},
        // DOW L and #
        {"0 0 12 ? * 1L", "monthend"}, {"0 0 12 ? * 6L", "monthend"}, {"0 0 12 ? * FRIL", "monthend"},
        {"0 0 12 ? * SUNL", "monthend"}, {"0 0 12 ? * 7L", "monthend"}, {"0 0 12 ? * 2#1"},
        {"0 0 12 ? * 6#3"}, {"0 0 12 ? * 1#5", "monthend"}, {"0 0 12 ? * 5#5", "monthend"},
        {"0 0 12 ? * 3#4"}, {"0 0 12 ? * MON#2"}, {"0 0 12 ? * SAT#5", "monthend"}, {"0 0 12 ? 2 1#5", "leap"},
        // names, case, separators
        {"0 0 9 ? JAN,MAR,DEC MON-FRI"}, {"0 0 9 ? * SUN,SAT"}, {"0 0 9 1 JAN-MAR ?"},
        {"0 0 12 ? * mon-fri"}, {"0 0 12 ? jan mon"}, {"0\t0\t12\t*\t*\t?"}, {"  0  0 12 * * ?  "},
        {"0 0 9 ? * MONDAY", "quirk"}, {"0 0 9 1 JANUARY ?", "quirk"}, {"0 0 12 ? * SUNDAY#2", "quirk"},
        // wraps
        {"0 0 22-2 * * ?"}, {"0 50-10 * * * ?"}, {"50-10 * * * * ?"}, {"0 0 12 ? * FRI-MON"},
        {"0 0 12 28-3 * ?", "monthend"}, {"0 0 12 1 NOV-FEB ?"}, {"0 0 12 15 11-2 ?"}, {"0 0 12 ? * 7-1"},
        {"0 0 12 ? * 1-0", "quirk"}, {"0 0 12 30-1 * ?", "monthend"},
        // steps and lists
        {"0 0/25 * * * ?"}, {"0/25 * * * * ?"}, {"0 5/15 * * * ?"}, {"0 0 */5 * * ?"}, {"0 0 0 */10 * ?", "monthend"},
        {"0 0 0 1 */3 ?"}, {"0 0 0 ? * 2/2"}, {"0 10-50/20 * * * ?"}, {"0 0 0 5-25/7 * ?"},
        {"0 0,15,30,45 * * * ?"}, {"0 0 8,12,18 * * ?"}, {"0 0 0 1,15,31 * ?", "monthend"}, {"0 0 12 ? * 1,4,7"},
        {"0 0 12 31 * ?", "monthend"}, {"0 0 12 29 2 ?", "leap"}, {"0 0 0 30 2 ?"}, {"0 0 12 29,30,31 * ?", "monthend"},
        // years
        {"0 0 12 1 1 ? 2030"}, {"0 0 12 1 1 ? 2025-2027"}, {"0 0 12 1 1 ? 2030/5"}, {"0 0 12 1 1 ? 1969"},
        {"0 0 12 1 1 ? 2200"}, {"0 0 12 1 1 ? 2126"}, {"0 0 12 1 1 ? 2127"}, {"0 0 12 ? * MON 2024,2028"},
        // accepted quirks
        {"*/0 * * * * ?", "quirk"}, {"0 0 12 ? * MON/2", "quirk"}, {"0 0 12 ? * 0#1", "quirk"},
        {"0 0 12 ? * 8#1", "quirk"}, {"0 0 12 1-5W * ?", "quirk"}, {"0 0 12 ? * 3-5L", "quirk"},
        {"0 0 12 ? * L-2", "quirk"}, {"0 0 12 ? * L", "quirk"}, {"5X * * * * ?", "quirk"}, {"0 0 4RR * * ?", "quirk"},
        {"0 0 12 * * ? 2030 foo", "quirk"}, {"0 0 12 ?5 * MON", "quirk"}, {"0 0 12 15,? * MON", "quirk"},
        {"0 0 12 ?? * MON", "quirk"}, {"0 0 12 ? JAN-JUN/2 MON", "quirk"}, {"0 0-59/70 * * * ?", "quirk"},
        {"0 0 5-10/0 * * ?", "quirk"}, {"0 0 5/0 * * ?", "quirk"}, {"0 0 12 ? * 6#3,2", "quirk"},
        {"0 0 12 ? * MON#2,WED", "quirk"}, {"0 /20 * * * ?", "quirk"},
        {"L * * * * ?", "quirk"}, {"0 L * * * ?", "quirk"}, {"0 0 L * * ?", "quirk"}, {"0 0 12 1 L ?", "quirk"},
        {"0 0 12 1 1 ? L", "quirk"},
        {"0 0 12 0W * ?", "quirk"}, {"0 0 12 L-30W * ?", "quirk", "monthend"}, {"0 0 12 L-29W * ?", "quirk", "monthend"},
        {"0 0 12 L-28W * ?", "quirk", "monthend"},
        // rejected
        {"*/5 * * * *"}, {"0 0 12 * * *"}, {"0 0 12 ? * ?"}, {"0 0 12 * * ? 2030-2025"}, {"0 0 12 ? * MON-5"},
        {"0 0 12 1 JUN-2 ?"}, {"0 0 24 * * ?"}, {"60 * * * * ?"}, {"0 60 * * * ?"}, {"0 0 12 32 * ?"},
        {"0 0 12 0 * ?"}, {"0 0 12 1 13 ?"}, {"0 0 12 1 0 ?"}, {"0 0 12 ? * 8"}, {"0 0 12 ? * 0"},
        {"0 0 12 L,15 * ?"}, {"0 0 12 ? * 6L,2"}, {"0 0 12 ? * 1#6"}, {"0 0 12 ? * 1#0"}, {"0 0 12 ? * 1#1,2#2"},
        {"0 0 12 1#1 * ?"}, {"0 0 12 W * ?"}, {"0 0 12 32W * ?"}, {"0 0 12 L-31 * ?"}, {"0 0 12 ? * FOO"},
        {"0 0 12 ? FOO *"}, {"0 0 12 1 FOO ?"}, {"0 ABC 12 * * ?"}, {"0 0/ * * * ?"}, {"0 0/x * * * ?"},
        {"0/60 * * * * ?"}, {"0 0 0/24 * * ?"}, {"0 0 0 */32 * ?"}, {"0 0 0 ? * */8"}, {"0 0 0 1 */13 ?"},
        {"0 ? * * * ?"}, {"0 0 12 ??? * MON"}, {"0 0 12 ?x * MON"}, {"0 0\n12 * * ?"}, {"0 0 12 1W * MON"},
        {"0 0 12 15 * 5L"}, {"0 0 12 ? * 5#"}, {"0 0 12 ? * 9L"}, {"0 0 12 1-32 * ?"}, {"0 0 12 * JAN-FOO ?"},
        {""}, {"0"}, {"0 0 12 * * ? 2030 foo bar"}, {"0 0 12 ? * MON-FOO"}, {"0 0 12 1 1 ? 2030-"},
    };

    /** STARTS are local wall times used as base starts. */
    static final String[] STARTS = {
        "2024-02-28T00:00:00", "2025-02-27T12:00:00", "2028-02-28T23:59:59.999", "2100-02-27T00:00:00",
        "2000-02-28T00:00:00", "2025-12-31T23:00:00", "2026-04-29T00:00:00", "2027-06-15T08:00:00.500",
    };

    /** ZONES rotate as the second zone of each expression. */
    static final String[] ZONES = {
        "America/New_York", "Australia/Lord_Howe", "Europe/London", "Asia/Seoul",
        "Pacific/Chatham", "Europe/Berlin", "America/Sao_Paulo",
    };

    static void addTo(Corpus corpus) {
        for (int i = 0; i < EXPRS.length; i++) {
            String[] e = EXPRS[i];
            String expr = e[0];
            String[] tags = Arrays.copyOfRange(e, 1, e.length);
            boolean once = false;
            for (String zone : new String[] {"UTC", ZONES[i % ZONES.length]}) {
                for (int s = 0; s < STARTS.length && !once; s++) {
                    if (!zone.equals("UTC") && s % 2 == 1) {
                        continue; // the second zone gets half the starts
                    }
                    long start = LocalDateTime.parse(STARTS[s]).atZone(ZoneId.of(zone)).toInstant().toEpochMilli();
                    CronEval.Outcome o = add(corpus, expr, zone, start, tags);
                    if (o == null) {
                        continue;
                    }
                    if (!o.valid || "hang".equals(o.end) || "throws".equals(o.end)) {
                        once = true; // one start is enough for these
                        break;
                    }
                    if (s <= 1) {
                        // exactly on, 1 ms before and 1 ms after the first and third fire times.
                        for (int k : new int[] {0, 2}) {
                            if (o.next.size() > k) {
                                long f = o.next.get(k);
                                for (long d : new long[] {-1, 0, 1}) {
                                    add(corpus, expr, zone, f + d, tags);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    private static CronEval.Outcome add(Corpus corpus, String expr, String zone, long start, String[] tags) {
        CronCase c = new CronCase("H", expr, zone, start, "hand");
        c.tags.addAll(List.of(tags));
        return corpus.add(c);
    }
}
