import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.quartz.impl.triggers.SimpleTriggerImpl;

/**
 * SimpleMisfire is one misfire_simple.jsonl case: a SimpleTriggerImpl brought to its pre-outage
 * state by computeFirstFireTime and timesTriggered calls of triggered(), then handed to StoreSim
 * at "now". Simple triggers are zone-free, so times are written in UTC.
 */
final class SimpleMisfire {
    private static final ZoneId UTC = ZoneId.of("UTC");

    String id;
    final long start;
    final Long end;
    final long interval;
    final int repeatCount;
    final int timesTriggered;
    final long now;
    final long threshold;
    final String policy;

    SimpleMisfire(String id, long start, Long end, long interval, int repeatCount, int timesTriggered,
            long now, long threshold, String policy) {
        this.id = id;
        this.start = start;
        this.end = end;
        this.interval = interval;
        this.repeatCount = repeatCount;
        this.timesTriggered = timesTriggered;
        this.now = now;
        this.threshold = threshold;
        this.policy = policy;
    }

    /** trigger builds the pre-outage trigger. */
    SimpleTriggerImpl trigger() {
        SimpleTriggerImpl t = new SimpleTriggerImpl();
        t.setStartTime(new Date(start));
        if (end != null) {
            t.setEndTime(new Date(end));
        }
        t.setRepeatInterval(interval);
        t.setRepeatCount(repeatCount);
        t.setMisfireInstruction(Policy.SIMPLE.get(policy));
        t.computeFirstFireTime(null);
        for (int i = 0; i < timesTriggered; i++) {
            t.triggered(null);
        }
        return t;
    }

    /** run computes the outcome and renders it in the misfire_simple.jsonl field order. */
    Map<String, Object> run(NowClient helper) {
        SimpleTriggerImpl t = trigger();
        Map<String, Object> m = Json.obj();
        m.put("id", id);
        m.put("start", Times.fmt(t.getStartTime(), UTC));
        m.put("end", Times.fmt(t.getEndTime(), UTC));
        m.put("interval_ms", interval);
        m.put("repeat_count", repeatCount);
        m.put("times_triggered", t.getTimesTriggered());
        m.put("prev", Times.fmt(t.getPreviousFireTime(), UTC));
        m.put("next", Times.fmt(t.getNextFireTime(), UTC));
        m.put("now", Times.fmt(now, UTC));
        m.put("threshold_ms", threshold);
        m.put("policy", policy);
        StoreSim s = new StoreSim(t, now, threshold, helper);
        t = (SimpleTriggerImpl) s.trigger;
        m.put("misfired", s.misfired);
        List<Object> fires = new ArrayList<>();
        for (long f : s.fires) {
            fires.add(Times.fmt(f, UTC));
        }
        m.put("fires", fires);
        m.put("fires_capped", s.capped());
        Map<String, Object> after = Json.obj();
        after.put("start", Times.fmt(t.getStartTime(), UTC));
        after.put("next", Times.fmt(t.getNextFireTime(), UTC));
        after.put("prev", Times.fmt(t.getPreviousFireTime(), UTC));
        after.put("repeat_count", t.getRepeatCount());
        after.put("times_triggered", t.getTimesTriggered());
        after.put("complete", t.getNextFireTime() == null);
        m.put("after", after);
        m.put("fires_total", s.total);
        return m;
    }
}
