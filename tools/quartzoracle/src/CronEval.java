import java.text.ParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.quartz.CronExpression;

/**
 * CronEval runs one CronCase against the real org.quartz.CronExpression: parse, then chain
 * getTimeAfter up to N times from the start. Each chain runs on its own worker thread, and a
 * chain that completes no call within timeoutMillis counts as a hang and is stopped, because
 * Quartz 2.3.2 loops forever on some accepted expressions (0W, L-30W).
 */
final class CronEval {
    /** N is the default length of a chain. */
    static final int N = 10;

    private final long timeoutMillis;
    /** hangs counts the calls that timed out, for the summary. */
    int hangs;

    CronEval(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    /** Outcome is the raw result of one case; toJson renders it in the vector field order. */
    static final class Outcome {
        boolean valid;
        String error;
        String errorKind;
        final List<Long> next = new ArrayList<>();
        String end;
    }

    private static final Object EXHAUSTED = new Object();

    /** run evaluates c. */
    Outcome run(CronCase c) {
        Outcome o = new Outcome();
        CronExpression ce;
        try {
            ce = new CronExpression(c.expr);
        } catch (ParseException e) {
            o.valid = false;
            o.error = e.getMessage();
            o.errorKind = e.getMessage().startsWith("Illegal cron expression format (")
                    ? "wrapped_runtime" : "message";
            return o;
        }
        ce.setTimeZone(TimeZone.getTimeZone(c.zone));
        return chain(ce, c.start);
    }

    /**
     * chain calls ce.getTimeAfter up to N times from start on a worker thread. The caller wakes
     * only when the worker ends or a timeout window passes, and calls it a hang when a whole
     * window brings no result. (Waiting uses a latch, which times out on the monotonic clock:
     * Thread.join(millis) on JDK 17 measures with the wall clock, which libfaketime freezes.)
     */
    Outcome chain(CronExpression ce, long start) {
        Outcome o = new Outcome();
        o.valid = true;
        List<Object> results = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(1);
        Thread worker = new Thread(() -> {
            try {
                Date after = new Date(start);
                for (int i = 0; i < N; i++) {
                    Date d;
                    try {
                        d = ce.getTimeAfter(after);
                    } catch (RuntimeException e) {
                        results.add(e);
                        return;
                    }
                    if (d == null) {
                        results.add(EXHAUSTED);
                        return;
                    }
                    results.add(d);
                    after = d;
                }
            } finally {
                done.countDown();
            }
        }, "cron-chain");
        worker.setDaemon(true);
        worker.start();
        for (int seen = -1; !await(done, timeoutMillis); ) {
            if (results.size() == seen) {
                stop(worker, done);
                hangs++;
                o.end = "hang";
                break;
            }
            seen = results.size();
        }
        synchronized (results) {
            for (Object r : results) {
                if (r == EXHAUSTED) {
                    o.end = "exhausted";
                } else if (r instanceof Throwable t) {
                    o.end = "throws";
                    o.error = t.getClass().getName();
                } else {
                    o.next.add(((Date) r).getTime());
                }
            }
        }
        if (o.end == null) {
            o.end = "limit";
        }
        return o;
    }

    private static boolean await(CountDownLatch l, long millis) {
        try {
            return l.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * stop ends a worker stuck in Quartz's endless loop and waits for it to die. Thread.stop
     * still works on JDK 17 and is the only way to end a loop that never checks for
     * interruption. A spinning worker must not outlive its case: the W branches read the
     * (faked) clock on every iteration, which would slow the run and race the next clock change.
     */
    @SuppressWarnings({"deprecation", "removal"})
    private static void stop(Thread t, CountDownLatch done) {
        t.stop();
        if (!await(done, 10_000)) {
            throw new IllegalStateException("cannot stop hung worker " + t.getName());
        }
    }

    /** toJson renders a case and its outcome in the cron_next.jsonl field order. */
    static Map<String, Object> toJson(CronCase c, Outcome o) {
        Map<String, Object> m = Json.obj();
        m.put("id", c.id);
        m.put("expr", c.expr);
        m.put("zone", c.zone.getId());
        m.put("start", Times.fmt(c.start, c.zone));
        m.put("valid", o.valid);
        if (o.valid) {
            List<Object> next = new ArrayList<>();
            for (long t : o.next) {
                next.add(Times.fmt(t, c.zone));
            }
            m.put("next", next);
            m.put("end", o.end);
        }
        if (o.error != null) {
            m.put("error", o.error);
        }
        if (o.errorKind != null) {
            m.put("error_kind", o.errorKind);
        }
        m.put("tags", new ArrayList<Object>(c.sortedTags()));
        return m;
    }
}
