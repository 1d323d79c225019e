import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;

/**
 * DstCases covers every offset transition of the corpus zones in 2024–2027 (and São Paulo's 2018
 * midnight gap and its overlap): starts shortly before each gap and overlap and inside the first
 * pass of each overlap, with sub-hourly, hourly, daily, weekly and monthly expressions whose
 * slots sit in, just before and just after the affected wall-clock span.
 */
final class DstCases {
    private DstCases() {}

    /** ZONES are the zones of the corpus; UTC and Asia/Seoul have no transitions in range. */
    static final String[] ZONES = {
        "UTC", "Asia/Seoul", "America/New_York", "Europe/London", "Australia/Lord_Howe",
        "America/Sao_Paulo", "Pacific/Chatham", "Europe/Berlin",
    };

    static final String[] SUBDAILY = {
        "0 */15 * * * ?", "0 */10 * * * ?", "0 * * * * ?", "*/20 * * * * ?", "0 7,37 * * * ?",
        "0 0 * * * ?", "0 30 * * * ?", "0 45 * * * ?",
    };

    static void addTo(Corpus corpus) {
        for (String z : ZONES) {
            ZoneId zone = ZoneId.of(z);
            for (ZoneOffsetTransition tr : transitions(zone.getRules(), 2024, 2028)) {
                addTransition(corpus, zone, tr);
            }
            if (z.equals("America/Sao_Paulo")) {
                for (ZoneOffsetTransition tr : transitions(zone.getRules(), 2018, 2019)) {
                    addTransition(corpus, zone, tr);
                }
            }
        }
    }

    /** transitions returns the transitions from fromYear-01-01 (UTC) up to toYear-01-01. */
    static List<ZoneOffsetTransition> transitions(ZoneRules rules, int fromYear, int toYear) {
        List<ZoneOffsetTransition> l = new ArrayList<>();
        Instant t = LocalDate.of(fromYear, 1, 1).atStartOfDay(ZoneId.of("UTC")).toInstant();
        Instant end = LocalDate.of(toYear, 1, 1).atStartOfDay(ZoneId.of("UTC")).toInstant();
        for (ZoneOffsetTransition tr = rules.nextTransition(t); tr != null && tr.getInstant().isBefore(end);
                tr = rules.nextTransition(tr.getInstant())) {
            l.add(tr);
        }
        return l;
    }

    private static void addTransition(Corpus corpus, ZoneId zone, ZoneOffsetTransition tr) {
        long t = tr.getInstant().toEpochMilli();
        long d = Math.abs(tr.getDuration().toMillis());
        boolean gap = tr.isGap();
        // The affected wall-clock span is [lo, hi): missing for a gap, repeated for an overlap.
        LocalDateTime lo = gap ? tr.getDateTimeBefore() : tr.getDateTimeAfter();
        LocalDateTime hi = gap ? tr.getDateTimeAfter() : tr.getDateTimeBefore();
        String kind = gap ? "gap" : "overlap";

        List<Long> near = new ArrayList<>(List.of(t - 7_200_000L, t - 600_000L, t - 1, t));
        if (!gap) {
            // Inside the first pass of the repeated hour: its start, middle and last second.
            near.addAll(List.of(t - d, t - d / 2, t - d / 2 + 123, t - 1000));
        }
        for (String expr : SUBDAILY) {
            for (long s : near) {
                add(corpus, expr, zone, s, kind);
            }
        }

        LocalDateTime mid = lo.plusSeconds(d / 2000);
        List<String> daily = new ArrayList<>();
        for (LocalDateTime w : List.of(lo.minusMinutes(1), lo, mid, hi.minusSeconds(1), hi)) {
            daily.add(String.format("%d %d %d * * ?", w.getSecond(), w.getMinute(), w.getHour()));
        }
        LocalDate day = mid.toLocalDate();
        int qdow = day.getDayOfWeek().getValue() % 7 + 1; // Quartz: 1 = SUN ... 7 = SAT
        String hms = String.format("%d %d %d", mid.getSecond(), mid.getMinute(), mid.getHour());
        List<String> longer = new ArrayList<>(List.of(
                hms + " ? * " + qdow,
                hms + " ? * " + qdow + "#" + ((day.getDayOfMonth() - 1) / 7 + 1),
                hms + " " + day.getDayOfMonth() + " * ?",
                hms + " " + day.getDayOfMonth() + " " + day.getMonthValue() + " ?"));
        if (day.plusDays(7).getMonthValue() != day.getMonthValue()) {
            longer.add(hms + " ? * " + qdow + "L");
        }
        if (day.getDayOfWeek() != DayOfWeek.SATURDAY && day.getDayOfWeek() != DayOfWeek.SUNDAY) {
            longer.add(hms + " " + day.getDayOfMonth() + "W * ?");
        }
        List<Long> far = new ArrayList<>(List.of(t - 86_400_000L, t - 7_200_000L, t - 1));
        if (!gap) {
            far.add(t - d / 2);
        }
        for (String expr : daily) {
            for (long s : far) {
                add(corpus, expr, zone, s, kind);
            }
        }
        for (String expr : longer) {
            for (long s : far) {
                add(corpus, expr, zone, s, kind);
            }
        }
    }

    private static void add(Corpus corpus, String expr, ZoneId zone, long start, String kind) {
        corpus.add(new CronCase("D", expr, zone.getId(), start, "dst", kind));
    }
}
