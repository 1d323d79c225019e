import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Policy maps the chronos/Aspectran misfire policy names onto Quartz's misfire instruction
 * codes. Quartz itself only knows the integers; the names are what the vectors record.
 */
final class Policy {
    private Policy() {}

    /** CRON maps CronTrigger policies to codes, in code order. */
    static final Map<String, Integer> CRON = new LinkedHashMap<>();
    /** SIMPLE maps SimpleTrigger policies to codes, in code order. */
    static final Map<String, Integer> SIMPLE = new LinkedHashMap<>();

    static {
        CRON.put("ignoreMisfires", -1);
        CRON.put("smartPolicy", 0);
        CRON.put("fireOnceNow", 1);
        CRON.put("doNothing", 2);
        SIMPLE.put("ignoreMisfires", -1);
        SIMPLE.put("smartPolicy", 0);
        SIMPLE.put("fireNow", 1);
        SIMPLE.put("rescheduleNowWithExistingRepeatCount", 2);
        SIMPLE.put("rescheduleNowWithRemainingRepeatCount", 3);
        SIMPLE.put("rescheduleNextWithRemainingCount", 4);
        SIMPLE.put("rescheduleNextWithExistingCount", 5);
    }
}
