import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Random;
import org.quartz.spi.OperableTrigger;

/**
 * MisfireCases lists the misfire vectors: C1–C8 and S1–S12 of quartz-semantics.md §7.3 with
 * the brief's ids, then seeded random cases that walk every policy against repeat counts,
 * times triggered, end times (none, passed, future), lateness (under, exactly at and over the
 * threshold, and outages of days) and thresholds of 1 s, 5 s and 60 s.
 */
final class MisfireCases {
    private MisfireCases() {}

    static final long T0 = Times.ms("2025-01-01T00:00:00Z");
    private static final long S = 1000;

    static List<CronMisfire> briefCron() {
        String e = "0 0/5 * * * ?";
        String y = "0 0 0 1 1 ? 2025";
        long late = T0 + 450_250;
        return new ArrayList<>(List.of(
                new CronMisfire("C1", e, "UTC", T0, null, 0, late, 60 * S, "ignoreMisfires"),
                new CronMisfire("C2", e, "UTC", T0, null, 0, late, 60 * S, "smartPolicy"),
                new CronMisfire("C3", e, "UTC", T0, null, 0, late, 60 * S, "doNothing"),
                new CronMisfire("C4", e, "UTC", T0, null, 0, T0 + 59_999, 60 * S, "doNothing"),
                new CronMisfire("C5", e, "UTC", T0, null, 0, T0 + 60 * S, 60 * S, "doNothing"),
                new CronMisfire("C6", e, "UTC", T0, T0 + 500 * S, 0, late, 60 * S, "doNothing"),
                new CronMisfire("C7", y, "UTC", T0, null, 0, late, 60 * S, "doNothing"),
                new CronMisfire("C8", y, "UTC", T0, null, 0, late, 60 * S, "fireOnceNow")));
    }

    static List<SimpleMisfire> briefSimple() {
        long m = 60 * S;
        return new ArrayList<>(List.of(
                new SimpleMisfire("S1", T0, null, m, 0, 0, T0 + 600 * S, m, "smartPolicy"),
                new SimpleMisfire("S2", T0, null, m, 10, 2, T0 + 450 * S, m, "smartPolicy"),
                new SimpleMisfire("S3", T0, null, m, 10, 2, T0 + 450 * S, m, "rescheduleNowWithRemainingRepeatCount"),
                new SimpleMisfire("S4", T0, null, m, 10, 2, T0 + 450 * S, m, "fireNow"),
                new SimpleMisfire("S5", T0, null, m, 10, 2, T0 + 450 * S, m, "rescheduleNextWithRemainingCount"),
                new SimpleMisfire("S6", T0, null, m, 10, 2, T0 + 450 * S, m, "rescheduleNextWithExistingCount"),
                new SimpleMisfire("S7", T0, null, m, -1, 2, T0 + 450 * S, m, "smartPolicy"),
                new SimpleMisfire("S8", T0, null, m, 3, 2, T0 + 450 * S, m, "rescheduleNextWithRemainingCount"),
                new SimpleMisfire("S9", T0, T0 + 300 * S, m, 10, 2, T0 + 450 * S, m,
                        "rescheduleNowWithRemainingRepeatCount"),
                new SimpleMisfire("S10", T0, null, m, 10, 8, T0 + 570 * S, m, "rescheduleNowWithRemainingRepeatCount"),
                new SimpleMisfire("S11", T0, null, m, -1, 2, T0 + 450 * S, m, "rescheduleNowWithExistingRepeatCount"),
                new SimpleMisfire("S12", T0, null, m, 0, 0, T0 + 600 * S, m, "rescheduleNextWithExistingCount")));
    }

    static final String[] CRON_EXPRS = {
        "0 0/5 * * * ?", "* * * * * ?", "0 * * * * ?", "*/10 * * * * ?", "0 */15 * * * ?", "0 0 * * * ?",
        "0 30 2 * * ?", "0 30 1 * * ?", "0 0 12 ? * MON-FRI", "0 15 10 L * ?", "0 0 9 ? * 2#1",
        "0 0 0 1 1 ? 2025", "0 0 12 LW * ?",
    };
    static final String[] CRON_ZONES = {
        "UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Seoul", "Pacific/Chatham",
    };
    static final long[] THRESHOLDS = {1000, 5000, 60_000};
    static final long[] INTERVALS = {1000, 60_000, 300_000, 3_600_000, 86_400_000};
    static final int[] REPEATS = {0, 1, 3, 10, -1};
    static final String[] ENDS = {"none", "passed", "future"};
    static final String[] LATENESS = {"under", "exact", "over", "outage"};

    private static final long FROM = Times.ms("2024-01-01T00:00:00Z");
    private static final long SPAN = Times.ms("2027-01-01T00:00:00Z") - FROM;

    /** lateness returns how far now lies after next for the given category. */
    private static long lateness(Random r, String kind, long threshold) {
        return switch (kind) {
            case "under" -> r.nextBoolean() ? threshold - 1 : threshold - 1 - (long) (r.nextDouble() * threshold / 2);
            case "exact" -> threshold;
            case "over" -> r.nextBoolean() ? threshold + 1 : threshold + 1 + (long) (r.nextDouble() * 7_200_000);
            default -> 86_400_000L * (1 + r.nextInt(3)) + r.nextInt(86_400_000);
        };
    }

    /** endFor picks an end time for the category, or null; it never makes the pre-state unreachable. */
    private static Long endFor(Random r, String kind, long next, long now) {
        return switch (kind) {
            case "passed" -> now - next >= 2 ? Long.valueOf(next + 1 + (long) (r.nextDouble() * (now - next - 1))) : null;
            case "future" -> now + 1 + (long) (r.nextDouble() * 30 * 86_400_000L);
            default -> null;
        };
    }

    static List<CronMisfire> randomCron(long seed, int count) {
        Random r = new Random(seed);
        List<CronMisfire> l = new ArrayList<>();
        List<String> policies = new ArrayList<>(Policy.CRON.keySet());
        for (int i = 0; l.size() < count; i++) {
            String policy = policies.get(i % policies.size());
            String late = LATENESS[(i / policies.size()) % LATENESS.length];
            String endKind = ENDS[(i / (policies.size() * LATENESS.length)) % ENDS.length];
            String expr = CRON_EXPRS[r.nextInt(CRON_EXPRS.length)];
            String zone = CRON_ZONES[r.nextInt(CRON_ZONES.length)];
            long threshold = THRESHOLDS[r.nextInt(THRESHOLDS.length)];
            int tt = new int[] {0, 1, 3, 10}[r.nextInt(4)];
            long start = randomStart(r, ZoneId.of(zone));
            if ("outage".equals(late) && policy.equals("ignoreMisfires") && expr.startsWith("*") && r.nextInt(3) > 0) {
                expr = "0 * * * * ?"; // keep most floods minutely so the file stays small
            }
            CronMisfire probe = new CronMisfire("", expr, zone, start, null, tt, 0, threshold, policy);
            Date next = probe.trigger().getNextFireTime();
            if (next == null) {
                continue;
            }
            long now = next.getTime() + lateness(r, late, threshold);
            Long end = endFor(r, endKind, next.getTime(), now);
            l.add(new CronMisfire(String.format("MC%04d", l.size() + 1), expr, zone, start, end, tt, now,
                    threshold, policy));
        }
        return l;
    }

    static List<SimpleMisfire> randomSimple(long seed, int count) {
        Random r = new Random(seed);
        List<SimpleMisfire> l = new ArrayList<>();
        List<String> policies = new ArrayList<>(Policy.SIMPLE.keySet());
        for (int i = 0; l.size() < count; i++) {
            String policy = policies.get(i % policies.size());
            int rc = REPEATS[(i / policies.size()) % REPEATS.length];
            String late = LATENESS[(i / (policies.size() * REPEATS.length)) % LATENESS.length];
            String endKind = ENDS[r.nextInt(ENDS.length)];
            long interval = INTERVALS[r.nextInt(INTERVALS.length)];
            long threshold = THRESHOLDS[r.nextInt(THRESHOLDS.length)];
            int[] tts = rc < 0 ? new int[] {0, 1, 3, 10} : new int[] {0, Math.min(1, rc), Math.min(3, rc), rc};
            int tt = tts[r.nextInt(tts.length)];
            long start = FROM + (long) (r.nextDouble() * SPAN);
            if (r.nextBoolean()) {
                start -= start % 1000;
            }
            SimpleMisfire probe = new SimpleMisfire("", start, null, interval, rc, tt, 0, threshold, policy);
            OperableTrigger t = probe.trigger();
            Date next = t.getNextFireTime();
            if (next == null) {
                continue;
            }
            long now = next.getTime() + lateness(r, late, threshold);
            Long end = endFor(r, endKind, next.getTime(), now);
            l.add(new SimpleMisfire(String.format("MS%04d", l.size() + 1), start, end, interval, rc, tt, now,
                    threshold, policy));
        }
        return l;
    }

    /** randomStart picks a start in 2024–2026, a third of them hours before a DST transition. */
    private static long randomStart(Random r, ZoneId zone) {
        List<ZoneOffsetTransition> trs = DstCases.transitions(zone.getRules(), 2024, 2027);
        if (!trs.isEmpty() && r.nextInt(3) == 0) {
            long t = trs.get(r.nextInt(trs.size())).getInstant().toEpochMilli();
            return t - (long) (r.nextDouble() * 6 * 3_600_000L);
        }
        return FROM + (long) (r.nextDouble() * SPAN);
    }
}
