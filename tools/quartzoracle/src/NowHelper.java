import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.TimeZone;
import org.quartz.CronExpression;
import org.quartz.spi.OperableTrigger;

/**
 * NowHelper is the child JVM that runs the Quartz calls whose result depends on the wall clock,
 * each with the clock frozen at a chosen millisecond. It runs under libfaketime with an
 * uncached timestamp file (see FakeClock), which makes every clock read cost a file read; that
 * is why only these calls run here and everything else runs in the parent, whose clock is
 * frozen once and cached.
 *
 * Protocol on stdin/stdout (DataInput/DataOutput), one request at a time:
 * "misfire" now bytes → bytes: deserialise an OperableTrigger, set the clock to now, call
 * updateAfterMisfire(null), check the clock still reads now, serialise the trigger back.
 * "cron" expr zone start clock → count times... end: CronEval.chain with the clock at clock.
 */
public final class NowHelper {
    private NowHelper() {}

    public static void main(String[] args) throws Exception {
        FakeClock clock = FakeClock.fromEnv();
        clock.set(Times.ms(Oracle.CLOCK)); // before CronExpression loads: MAX_YEAR as in the parent
        if (CronExpression.MAX_YEAR != Integer.parseInt(args[0])) {
            throw new IllegalStateException("helper MAX_YEAR " + CronExpression.MAX_YEAR + ", parent " + args[0]);
        }
        CronEval eval = new CronEval(Oracle.TIMEOUT_MILLIS);
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(System.out));
        for (;;) {
            String cmd;
            try {
                cmd = in.readUTF();
            } catch (EOFException e) {
                return;
            }
            switch (cmd) {
                case "misfire" -> {
                    long now = in.readLong();
                    byte[] b = new byte[in.readInt()];
                    in.readFully(b);
                    OperableTrigger t = (OperableTrigger) new ObjectInputStream(new ByteArrayInputStream(b)).readObject();
                    clock.set(now);
                    t.updateAfterMisfire(null);
                    FakeClock.check(now);
                    byte[] r = serialize(t);
                    out.writeInt(r.length);
                    out.write(r);
                }
                case "cron" -> {
                    CronExpression ce = new CronExpression(in.readUTF());
                    ce.setTimeZone(TimeZone.getTimeZone(in.readUTF()));
                    long start = in.readLong();
                    clock.set(in.readLong());
                    CronEval.Outcome o = eval.chain(ce, start);
                    out.writeInt(o.next.size());
                    for (long t : o.next) {
                        out.writeLong(t);
                    }
                    out.writeUTF(o.end);
                }
                default -> throw new IllegalStateException("nowhelper: unknown command " + cmd);
            }
            out.flush();
        }
    }

    static byte[] serialize(Object o) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (ObjectOutputStream oo = new ObjectOutputStream(b)) {
            oo.writeObject(o);
        }
        return b.toByteArray();
    }
}
