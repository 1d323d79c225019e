import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.quartz.CronExpression;
import org.quartz.spi.OperableTrigger;

/**
 * NowClient owns the NowHelper child process and sends it the clock-dependent calls. The child
 * is started with libfaketime reading the timestamp file named by -Doracle.stamp uncached;
 * close stops it.
 */
final class NowClient implements AutoCloseable {
    private final Process proc;
    private final DataInputStream in;
    private final DataOutputStream out;

    NowClient() {
        String stamp = System.getProperty("oracle.stamp");
        if (stamp == null) {
            throw new IllegalStateException("-Doracle.stamp (the libfaketime timestamp file) is required; use run.sh");
        }
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(java, "-Duser.timezone=UTC", "-Dfile.encoding=UTF-8",
                "-cp", System.getProperty("java.class.path"), "NowHelper", Integer.toString(CronExpression.MAX_YEAR));
        Map<String, String> env = pb.environment();
        env.remove("FAKETIME");
        env.put("FAKETIME_TIMESTAMP_FILE", stamp);
        env.put("FAKETIME_NO_CACHE", "1");
        env.put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        try {
            proc = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("start NowHelper", e);
        }
        in = new DataInputStream(new BufferedInputStream(proc.getInputStream()));
        out = new DataOutputStream(new BufferedOutputStream(proc.getOutputStream()));
    }

    /** updateAfterMisfire returns a copy of t after Quartz's updateAfterMisfire at now. */
    <T extends OperableTrigger> T updateAfterMisfire(T t, long now) {
        try {
            byte[] b = NowHelper.serialize(t);
            out.writeUTF("misfire");
            out.writeLong(now);
            out.writeInt(b.length);
            out.write(b);
            out.flush();
            byte[] r = new byte[in.readInt()];
            in.readFully(r);
            @SuppressWarnings("unchecked")
            T u = (T) new ObjectInputStream(new ByteArrayInputStream(r)).readObject();
            return u;
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException("NowHelper misfire: " + e, e);
        }
    }

    /** cron runs CronEval.chain for c in the helper, with the clock frozen at clock. */
    CronEval.Outcome cron(CronCase c, long clock) {
        try {
            out.writeUTF("cron");
            out.writeUTF(c.expr);
            out.writeUTF(c.zone.getId());
            out.writeLong(c.start);
            out.writeLong(clock);
            out.flush();
            CronEval.Outcome o = new CronEval.Outcome();
            o.valid = true;
            int k = in.readInt();
            for (int i = 0; i < k; i++) {
                o.next.add(in.readLong());
            }
            o.end = in.readUTF();
            return o;
        } catch (IOException e) {
            throw new IllegalStateException("NowHelper cron: " + e, e);
        }
    }

    @Override
    public void close() throws InterruptedException {
        try {
            out.close();
        } catch (IOException e) {
            // the child is gone already; waitFor reports how it ended
        }
        int rc = proc.waitFor();
        if (rc != 0) {
            throw new IllegalStateException("NowHelper exited with " + rc);
        }
    }
}
