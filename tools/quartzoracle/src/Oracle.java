import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Function;
import org.quartz.CronExpression;

/**
 * Oracle writes chronos's Quartz 2.3.2 test vectors by running the real library:
 * cron_next.jsonl (chained CronExpression.getTimeAfter), misfire_cron.jsonl and
 * misfire_simple.jsonl (updateAfterMisfire as the RAM store applies it), and META.json.
 *
 * Usage: java Oracle OUTDIR SEED. It must run under libfaketime (see run.sh) with the clock frozen
 * at CLOCK; calls that need another clock value (updateAfterMisfire at each case's "now", the W
 * millisecond check) run in a NowHelper child JVM whose clock is moved per call.
 */
public final class Oracle {
    /** CLOCK is where the clock is frozen first; it fixes CronExpression.MAX_YEAR at 2126. */
    static final String CLOCK = "2026-01-01T00:00:00.999Z";
    /** TIMEOUT is how long one getTimeAfter call may take before it counts as a hang. */
    static final long TIMEOUT_MILLIS = 2000;
    static final int RANDOM_CRON = 2500;
    static final int RANDOM_MISFIRE = 980;

    private Oracle() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: java Oracle OUTDIR SEED");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        long seed = Long.parseLong(args[1]);
        long clockMillis = Times.ms(CLOCK);
        FakeClock.check(clockMillis); // run.sh freezes this JVM's clock; MAX_YEAR reads it once
        Files.createDirectories(out);
        NowClient helper = new NowClient();

        CronEval eval = new CronEval(TIMEOUT_MILLIS);
        Corpus corpus = new Corpus(eval, helper, clockMillis);
        for (CronCase c : BriefCases.all()) {
            corpus.add(c);
        }
        int brief = corpus.cases.size();
        HandCases.addTo(corpus);
        int hand = corpus.cases.size() - brief;
        DstCases.addTo(corpus);
        int dst = corpus.cases.size() - brief - hand;
        SweepCases.addTo(corpus);
        int sweep = corpus.cases.size() - brief - hand - dst;
        RandomCron.addTo(corpus, seed, RANDOM_CRON);
        write(out.resolve("cron_next.jsonl"), corpus.lines());
        log("cron_next.jsonl: %d cases (brief %d, hand %d, dst %d, sweep %d, random %d), %d hangs, %d W millisecond cases",
                corpus.cases.size(), brief, hand, dst, sweep, RANDOM_CRON, eval.hangs, corpus.wMillis);

        List<CronMisfire> mc = MisfireCases.briefCron();
        mc.addAll(MisfireCases.randomCron(seed + 1, RANDOM_MISFIRE));
        List<String> mcLines = lines(mc, c -> c.run(helper));
        write(out.resolve("misfire_cron.jsonl"), mcLines);
        List<SimpleMisfire> ms = MisfireCases.briefSimple();
        ms.addAll(MisfireCases.randomSimple(seed + 2, RANDOM_MISFIRE));
        List<String> msLines = lines(ms, c -> c.run(helper));
        write(out.resolve("misfire_simple.jsonl"), msLines);
        helper.close();
        log("misfire_cron.jsonl: %d cases; misfire_simple.jsonl: %d cases", mc.size(), ms.size());

        Map<String, Object> meta = new TreeMap<>();
        meta.put("quartz_version", quartzVersion());
        meta.put("quartz_jar", jarPath());
        meta.put("quartz_jar_sha256", sha256(Path.of(jarPath())));
        meta.put("quartz_package", System.getProperty("oracle.package", "unknown"));
        meta.put("java_version", System.getProperty("java.version"));
        meta.put("java_vm_version", System.getProperty("java.vm.version"));
        meta.put("java_vendor", System.getProperty("java.vendor"));
        meta.put("tzdata", java.time.zone.ZoneRulesProvider.getVersions("UTC").lastKey());
        meta.put("max_year", CronExpression.MAX_YEAR);
        meta.put("seed", seed);
        meta.put("seed_misfire_cron", seed + 1);
        meta.put("seed_misfire_simple", seed + 2);
        meta.put("clock", CLOCK);
        meta.put("hang_timeout_ms", TIMEOUT_MILLIS);
        meta.put("chain_length", CronEval.N);
        meta.put("fires_cap", StoreSim.CAP);
        meta.put("generated", System.getProperty("oracle.generated", "unknown"));
        Map<String, Object> counts = new TreeMap<>();
        counts.put("cron_next", corpus.cases.size());
        counts.put("cron_next_brief", brief);
        counts.put("cron_next_hand", hand);
        counts.put("cron_next_dst", dst);
        counts.put("cron_next_sweep", sweep);
        counts.put("cron_next_random", RANDOM_CRON);
        counts.put("cron_next_hang", eval.hangs);
        counts.put("cron_next_w_millis", corpus.wMillis);
        Map<String, Object> tags = new TreeMap<>();
        Map<String, Object> ends = new TreeMap<>();
        for (int i = 0; i < corpus.cases.size(); i++) {
            for (String t : corpus.cases.get(i).tags) {
                tags.merge(t, 1, (a, b) -> (Integer) a + (Integer) b);
            }
            String e = corpus.outcomes.get(i).valid ? corpus.outcomes.get(i).end : "invalid";
            ends.merge(e, 1, (a, b) -> (Integer) a + (Integer) b);
        }
        counts.put("cron_next_by_tag", tags);
        counts.put("cron_next_by_end", ends);
        counts.put("misfire_cron", mc.size());
        counts.put("misfire_simple", ms.size());
        meta.put("counts", counts);
        write(out.resolve("META.json"), List.of(Json.write(meta)));
        System.exit(0); // abandoned workers of hung calls may still be alive
    }

    private static <T> List<String> lines(List<T> cases, Function<T, Map<String, Object>> run) {
        List<String> l = new ArrayList<>();
        for (T c : cases) {
            l.add(Json.write(run.apply(c)));
        }
        return l;
    }

    private static void write(Path p, List<String> lines) throws IOException {
        StringBuilder b = new StringBuilder();
        for (String l : lines) {
            b.append(l).append('\n');
        }
        Files.writeString(p, b.toString(), StandardCharsets.UTF_8);
    }

    private static void log(String format, Object... args) {
        System.err.println("quartzoracle: " + String.format(format, args));
    }

    private static String quartzVersion() throws IOException {
        Properties p = new Properties();
        try (InputStream in = CronExpression.class.getResourceAsStream("/org/quartz/core/quartz-build.properties")) {
            if (in == null) {
                return "unknown";
            }
            p.load(in);
        }
        return p.getProperty("version", "unknown");
    }

    private static String jarPath() {
        try {
            return Path.of(CronExpression.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                    .toRealPath().toString();
        } catch (Exception e) {
            throw new IllegalStateException("locate quartz jar: " + e, e);
        }
    }

    private static String sha256(Path p) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        return HexFormat.of().formatHex(md.digest(Files.readAllBytes(p)));
    }
}
