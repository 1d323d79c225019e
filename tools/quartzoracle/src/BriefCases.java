import java.util.ArrayList;
import java.util.List;

/**
 * BriefCases are the inputs of vectors V01–V42 of quartz-semantics.md §10, with the brief's ids.
 * Their expected outputs are checked by vectors_test.go, not here, so the check reads the
 * committed file exactly as Go consumers do.
 */
final class BriefCases {
    private BriefCases() {}

    static List<CronCase> all() {
        List<CronCase> l = new ArrayList<>();
        add(l, "V01", "0 0 12 ? * MON-FRI", "UTC", "2025-01-03T12:00:00Z");
        add(l, "V02", "0 0/20 * * * ?", "UTC", "2025-01-01T12:19:59.999Z");
        add(l, "V03", "0 0/20 * * * ?", "UTC", "2025-01-01T12:20:00.001Z");
        add(l, "V04", "0 15 10 L * ?", "UTC", "2024-02-01T00:00:00Z", "leap", "monthend");
        add(l, "V05", "0 15 10 L-2 * ?", "UTC", "2025-02-01T00:00:00Z", "monthend");
        add(l, "V06", "0 0 12 LW * ?", "UTC", "2025-05-01T00:00:00Z", "monthend");
        add(l, "V07", "0 0 12 L-3W * ?", "UTC", "2025-01-01T00:00:00Z", "monthend");
        add(l, "V08", "0 0 12 1W * ?", "UTC", "2022-01-01T00:00:00Z", "monthend");
        add(l, "V09", "0 0 12 15W * ?", "UTC", "2025-06-01T00:00:00Z");
        add(l, "V10", "0 0 12 31W * ?", "UTC", "2027-04-01T00:00:00Z", "monthend", "quirk");
        add(l, "V11", "0 0 12 ? * 6#3", "UTC", "2025-01-01T00:00:00Z");
        add(l, "V12", "0 0 12 ? * 2#5", "UTC", "2025-01-01T00:00:00Z", "monthend");
        add(l, "V13", "0 0 12 ? * 6L", "UTC", "2025-01-01T00:00:00Z", "monthend");
        add(l, "V14", "0 0 12 ? * L", "UTC", "2025-01-01T00:00:00Z");
        add(l, "V15", "0 0 12 29 2 ?", "UTC", "2097-01-01T00:00:00Z", "leap", "monthend");
        add(l, "V16", "0 0 12 ? 2 1#5", "UTC", "2000-01-01T00:00:00Z", "leap", "monthend");
        add(l, "V17", "0 0 22-2 * * ?", "UTC", "2025-01-01T12:00:00Z");
        add(l, "V18", "0 0 12 ? * FRI-MON", "UTC", "2025-01-01T00:00:00Z");
        add(l, "V19", "0 0 12 28-3 * ?", "UTC", "2025-02-27T00:00:00Z", "monthend");
        add(l, "V20", "*/0 * * * * ?", "UTC", "2025-01-01T00:00:00Z", "quirk");
        add(l, "V21", "0 0 12 ? * MON/2", "UTC", "2025-01-01T00:00:00Z", "quirk");
        add(l, "V22", "0 0 12 ? * 6#3,2", "UTC", "2025-01-01T00:00:00Z", "quirk");
        add(l, "V23", "0 0 12 ? * 0#1", "UTC", "2025-01-01T00:00:00Z", "quirk");
        add(l, "V24", "0 0 12 1-5W * ?", "UTC", "2025-01-01T00:00:00Z", "quirk");
        add(l, "V25", "0 15 10 ? * 6L 2002-2005", "UTC", "2005-12-01T00:00:00Z", "monthend");
        add(l, "V26", "0 0 12 */10 * ?", "UTC", "2025-01-25T00:00:00Z", "monthend");
        add(l, "V27", "0 30 2 * * ?", "America/New_York", "2025-03-08T12:00:00-05:00", "dst");
        add(l, "V28", "0 30 1 * * ?", "America/New_York", "2025-11-01T12:00:00-04:00", "dst");
        add(l, "V29", "0 */15 * * * ?", "America/New_York", "2025-11-02T00:50:00-04:00", "dst");
        add(l, "V30", "0 */15 * * * ?", "America/New_York", "2025-11-02T01:30:00-04:00", "dst");
        add(l, "V31", "0 */10 * * * ?", "Australia/Lord_Howe", "2025-10-05T01:45:00+10:30", "dst");
        add(l, "V32", "0 45 1 * * ?", "Australia/Lord_Howe", "2025-04-05T12:00:00+11:00", "dst");
        add(l, "V33", "0 30 1 ? * SUNL", "Europe/London", "2025-03-01T00:00:00Z", "dst", "monthend");
        add(l, "V34", "0 0 0 * * ?", "America/Sao_Paulo", "2018-11-03T12:00:00-03:00", "dst");
        add(l, "V35", "0 0 12 * * ? 2030 foo", "UTC", "2025-01-01T00:00:00Z", "quirk");
        add(l, "V36", "L * * * * ?", "UTC", "2025-01-01T00:00:00Z", "quirk");
        add(l, "V37", "0 0 12 L-30W * ?", "UTC", "2025-03-02T00:00:00Z", "monthend", "quirk");
        add(l, "V38", "0 0 12 ? * 5#5", "UTC", "2025-01-01T00:00:00Z", "monthend");
        add(l, "V39", "0 0 12 L 2 ?", "UTC", "2100-01-01T00:00:00Z", "monthend");
        add(l, "V40", "0 0 12 * * *", "UTC", "2025-01-01T00:00:00Z");
        add(l, "V41", "*/5 * * * *", "UTC", "2025-01-01T00:00:00Z");
        add(l, "V42", "0 0 12 ? * 7-1", "UTC", "2025-01-01T00:00:00Z");
        return l;
    }

    private static void add(List<CronCase> l, String id, String expr, String zone, String start, String... tags) {
        CronCase c = new CronCase(id, expr, zone, Times.ms(start), "brief", "hand");
        c.tags.addAll(List.of(tags));
        l.add(c);
    }
}
