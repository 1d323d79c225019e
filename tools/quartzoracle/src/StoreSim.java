import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.quartz.spi.OperableTrigger;

/**
 * StoreSim applies a misfire decision the way RAMJobStore.applyMisfire does, once, with one
 * "now": the trigger is misfired iff its instruction is not IGNORE (-1) and
 * nextFireTime <= now - threshold (inclusive, RAM store; the JDBC store uses <). A misfired
 * trigger gets updateAfterMisfire(null) with the JVM clock frozen at now, because Quartz reads
 * new Date() inside it; that call runs in the NowHelper child JVM. Then the store delivers every due fire: while next != null and
 * next <= now, record next and call triggered(null).
 */
final class StoreSim {
    /** CAP bounds the recorded fires; the loop itself always runs to the end. */
    static final int CAP = 500;

    boolean misfired;
    final List<Long> fires = new ArrayList<>();
    int total;

    /** trigger is the trigger after the store is done with it. */
    final OperableTrigger trigger;

    StoreSim(OperableTrigger t, long now, long threshold, NowClient helper) {
        Date next = t.getNextFireTime();
        misfired = t.getMisfireInstruction() != -1 && next != null && next.getTime() <= now - threshold;
        if (misfired) {
            t = helper.updateAfterMisfire(t, now);
        }
        trigger = t;
        for (Date d = t.getNextFireTime(); d != null && d.getTime() <= now; d = t.getNextFireTime()) {
            if (fires.size() < CAP) {
                fires.add(d.getTime());
            }
            total++;
            t.triggered(null);
        }
    }

    boolean capped() {
        return total > fires.size();
    }
}
