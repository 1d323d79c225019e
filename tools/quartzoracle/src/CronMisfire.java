import java.text.ParseException;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import org.quartz.impl.triggers.CronTriggerImpl;

/**
 * CronMisfire is one misfire_cron.jsonl case: a CronTriggerImpl brought to its pre-outage state
 * by computeFirstFireTime and timesTriggered calls of triggered(), then handed to StoreSim at
 * "now". CronTriggerImpl has no timesTriggered counter; the field records how many fires
 * happened before the outage.
 */
final class CronMisfire {
    String id;
    final String expr;
    final ZoneId zone;
    final long start;
    final Long end;
    final int timesTriggered;
    final long now;
    final long threshold;
    final String policy;

    CronMisfire(String id, String expr, String zone, long start, Long end, int timesTriggered,
            long now, long threshold, String policy) {
        this.id = id;
        this.expr = expr;
        this.zone = ZoneId.of(zone);
        this.start = start;
        this.end = end;
        this.timesTriggered = timesTriggered;
        this.now = now;
        this.threshold = threshold;
        this.policy = policy;
    }

    /** trigger builds the pre-outage trigger. */
    CronTriggerImpl trigger() {
        CronTriggerImpl t = new CronTriggerImpl();
        try {
            t.setCronExpression(expr);
        } catch (ParseException e) {
            throw new IllegalArgumentException("cron misfire " + id + ": " + e.getMessage(), e);
        }
        t.setTimeZone(TimeZone.getTimeZone(zone));
        t.setStartTime(new Date(start));
        if (end != null) {
            t.setEndTime(new Date(end));
        }
        t.setMisfireInstruction(Policy.CRON.get(policy));
        t.computeFirstFireTime(null);
        for (int i = 0; i < timesTriggered; i++) {
            t.triggered(null);
        }
        return t;
    }

    /** run computes the outcome and renders it in the misfire_cron.jsonl field order. */
    Map<String, Object> run(NowClient helper) {
        CronTriggerImpl t = trigger();
        Map<String, Object> m = Json.obj();
        m.put("id", id);
        m.put("expr", expr);
        m.put("zone", zone.getId());
        m.put("start", Times.fmt(t.getStartTime(), zone));
        m.put("end", Times.fmt(t.getEndTime(), zone));
        m.put("prev", Times.fmt(t.getPreviousFireTime(), zone));
        m.put("next", Times.fmt(t.getNextFireTime(), zone));
        m.put("times_triggered", timesTriggered);
        m.put("now", Times.fmt(now, zone));
        m.put("threshold_ms", threshold);
        m.put("policy", policy);
        StoreSim s = new StoreSim(t, now, threshold, helper);
        t = (CronTriggerImpl) s.trigger;
        m.put("misfired", s.misfired);
        List<Object> fires = new ArrayList<>();
        for (long f : s.fires) {
            fires.add(Times.fmt(f, zone));
        }
        m.put("fires", fires);
        m.put("fires_capped", s.capped());
        Map<String, Object> after = Json.obj();
        after.put("next", Times.fmt(t.getNextFireTime(), zone));
        after.put("prev", Times.fmt(t.getPreviousFireTime(), zone));
        after.put("complete", t.getNextFireTime() == null);
        m.put("after", after);
        m.put("fires_total", s.total);
        return m;
    }
}
