import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * RandomCron builds expressions from the whole Quartz grammar with a seeded java.util.Random:
 * ordinary forms, forms Quartz silently accepts (trailing junk, step 0, MON/2, 0#1, extra
 * tokens, L outside the day fields, ...) and plainly invalid ones, each with a random start
 * between 1995 and 2090 in one of the corpus zones. The real parser decides what is valid; the
 * generator only marks the forms it meant as quirks.
 */
final class RandomCron {
    private static final String[] MONTHS = {
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    };
    private static final String[] DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

    private static final long FROM = LocalDateTime.of(1995, 1, 1, 0, 0).toInstant(ZoneOffset.UTC).toEpochMilli();
    private static final long TO = LocalDateTime.of(2091, 1, 1, 0, 0).toInstant(ZoneOffset.UTC).toEpochMilli();

    private final Random r;
    private boolean quirk;

    RandomCron(long seed) {
        r = new Random(seed);
    }

    static void addTo(Corpus corpus, long seed, int count) {
        RandomCron g = new RandomCron(seed);
        int added = 0;
        while (added < count) {
            g.quirk = false;
            String expr = g.expr();
            String zone = DstCases.ZONES[g.r.nextInt(DstCases.ZONES.length)];
            CronCase c = new CronCase("R", expr, zone, g.start(), "random");
            if (g.quirk) {
                c.tags.add("quirk");
            }
            CronEval.Outcome o = corpus.add(c);
            if (o != null) {
                added++;
                if (!o.valid) {
                    c.tags.remove("quirk");
                }
            }
        }
    }

    private boolean p(double prob) {
        return r.nextDouble() < prob;
    }

    private int between(int lo, int hi) {
        return lo + r.nextInt(hi - lo + 1);
    }

    private long start() {
        long t = FROM + (long) (r.nextDouble() * (TO - FROM));
        double u = r.nextDouble();
        if (u < 0.5) {
            return t - Math.floorMod(t, 1000L);
        } else if (u < 0.7) {
            return t - Math.floorMod(t, 60_000L);
        } else if (u < 0.8) {
            return t - Math.floorMod(t, 3_600_000L);
        }
        return t;
    }

    /** expr returns one expression; about 15% carry a quirk and about 12% a plain error. */
    String expr() {
        List<String> f = new ArrayList<>();
        f.add(p(0.5) ? "0" : numField(0, 59, null));
        f.add(p(0.2) ? "0" : numField(0, 59, null));
        f.add(numField(0, 23, null));
        double mode = r.nextDouble();
        if (mode < 0.55) {
            f.add(domField());
            f.add(numField(1, 12, MONTHS));
            f.add("?");
        } else if (mode < 0.97) {
            f.add("?");
            f.add(numField(1, 12, MONTHS));
            f.add(dowField());
        } else {
            // both restricted or both '?': rejected by Quartz.
            f.add(p(0.5) ? "?" : numField(1, 31, null));
            f.add(numField(1, 12, MONTHS));
            f.add(p(0.5) ? "?" : dowField());
        }
        if (p(0.35)) {
            f.add(yearField());
        }
        if (p(0.15)) {
            quirk(f);
        }
        if (p(0.12)) {
            invalid(f);
        }
        String sep = p(0.03) ? "\t" : " ";
        String s = String.join(sep, f);
        if (p(0.03)) {
            s = "  " + s + " ";
        }
        if (p(0.05)) {
            s = s.toLowerCase();
        }
        return s;
    }

    private String numField(int min, int max, String[] names) {
        int n = p(0.75) ? 1 : between(2, 3);
        if (n == 1 && p(0.25)) {
            return "*";
        }
        List<String> items = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            items.add(numItem(min, max, names));
        }
        return String.join(",", items);
    }

    private String val(int v, int min, String[] names) {
        if (names != null && p(0.3)) {
            return names[v - min];
        }
        return p(0.05) ? String.format("%02d", v) : Integer.toString(v);
    }

    private String numItem(int min, int max, String[] names) {
        int a = between(min, max);
        int b = between(min, max);
        int span = max - min + 1;
        double u = r.nextDouble();
        if (u < 0.4) {
            return val(a, min, names);
        } else if (u < 0.6) {
            if (names != null && p(0.3)) {
                return names[a - min] + "-" + names[b - min];
            }
            return a + "-" + b; // b < a wraps
        } else if (u < 0.75) {
            return "*/" + between(1, Math.max(1, span / 2));
        } else if (u < 0.88) {
            return a + "/" + between(1, Math.max(1, span / 2));
        }
        int lo = Math.min(a, b);
        int hi = Math.max(a, b);
        return lo + "-" + hi + "/" + between(1, Math.max(1, span / 3));
    }

    private String domField() {
        double u = r.nextDouble();
        if (u < 0.08) {
            return "L";
        } else if (u < 0.16) {
            return "L-" + between(0, 30);
        } else if (u < 0.21) {
            return "LW";
        } else if (u < 0.27) {
            return "L-" + between(0, 27) + "W";
        } else if (u < 0.37) {
            return between(1, 31) + "W";
        }
        return numField(1, 31, null);
    }

    private String day() {
        int d = between(1, 7);
        return p(0.5) ? DAYS[d - 1] : Integer.toString(d);
    }

    private String dowField() {
        double u = r.nextDouble();
        if (u < 0.12) {
            return day() + "L";
        } else if (u < 0.26) {
            return day() + "#" + between(1, 5);
        } else if (u < 0.29) {
            return "L";
        }
        return numField(1, 7, DAYS);
    }

    private String yearField() {
        int a = between(1995, 2100);
        double u = r.nextDouble();
        if (u < 0.3) {
            return Integer.toString(a);
        } else if (u < 0.5) {
            return a + "-" + (a + between(0, 40));
        } else if (u < 0.65) {
            return a + "/" + between(1, 30);
        } else if (u < 0.8) {
            return a + "," + (a + between(1, 50));
        }
        return "*";
    }

    private static final String[] QUIRKS = {
        "junk", "step0", "namestep", "hash0", "hash8", "extra", "Lsec", "qjunk", "longname", "rangeW",
        "rangeL", "bigstep", "nostar", "zeroW", "deepLW", "dowL2", "hashlist",
    };

    /** quirk rewrites one field into a form that Quartz 2.3.2 accepts but a strict parser rejects. */
    private void quirk(List<String> f) {
        quirk = true;
        switch (QUIRKS[r.nextInt(QUIRKS.length)]) {
            case "junk" -> f.set(2, between(0, 23) + (p(0.5) ? "X" : "RR"));
            case "step0" -> f.set(r.nextInt(3), p(0.5) ? "*/0" : between(0, 59 / 3) + "/0");
            case "namestep" -> {
                if (f.get(5).equals("?")) {
                    f.set(4, MONTHS[r.nextInt(12)] + "-" + MONTHS[r.nextInt(12)] + "/2");
                } else {
                    f.set(5, DAYS[r.nextInt(7)] + "/" + between(2, 3));
                }
            }
            case "hash0" -> {
                f.set(3, "?");
                f.set(5, "0#" + between(1, 5));
            }
            case "hash8" -> {
                f.set(3, "?");
                f.set(5, "8#" + between(1, 5));
            }
            case "extra" -> {
                if (f.size() == 6) {
                    f.add("*");
                }
                f.add(p(0.5) ? "foo" : "2030");
            }
            case "Lsec" -> f.set(r.nextInt(3), "L");
            case "qjunk" -> {
                if (f.get(3).equals("?")) {
                    f.set(3, p(0.5) ? "?5" : "??");
                } else {
                    f.set(5, "?" + between(1, 7));
                }
            }
            case "longname" -> {
                f.set(3, "?");
                f.set(5, p(0.5) ? "MONDAY" : "FRIDAY#2");
            }
            case "rangeW" -> {
                f.set(3, between(1, 10) + "-" + between(11, 20) + "W");
                f.set(5, "?");
            }
            case "rangeL" -> {
                f.set(3, "?");
                f.set(5, between(1, 3) + "-" + between(4, 7) + "L");
            }
            case "bigstep" -> f.set(1, between(0, 30) + "-59/" + between(60, 99));
            case "nostar" -> f.set(1, "/" + between(5, 30));
            case "zeroW" -> {
                if (p(0.2)) { // loops forever in Quartz: keep rare, each costs a timeout
                    f.set(3, "0W");
                    f.set(5, "?");
                } else {
                    f.set(3, "1W");
                    f.set(5, "?");
                }
            }
            case "deepLW" -> {
                f.set(3, "L-" + between(28, 30) + (p(0.15) ? "W" : ""));
                f.set(5, "?");
            }
            case "dowL2" -> {
                f.set(3, "?");
                f.set(5, "L-" + between(1, 6));
            }
            case "hashlist" -> {
                f.set(3, "?");
                f.set(5, day() + "#" + between(1, 5) + "," + day());
            }
            default -> throw new IllegalStateException("unknown quirk");
        }
    }

    private static final String[][] BAD = {
        {"0", "60"}, {"1", "60"}, {"2", "24"}, {"3", "32"}, {"3", "0"}, {"4", "13"}, {"4", "0"},
        {"5", "8"}, {"5", "0"}, {"0", "*/60"}, {"2", "*/24"}, {"3", "*/32"}, {"5", "*/8"}, {"4", "*/13"},
        {"5", "1#6"}, {"3", "L-31"}, {"3", "32W"}, {"5", "FOO"}, {"4", "FOO"}, {"2", "ABC"}, {"5", "MON-5"},
        {"4", "JUN-2"}, {"3", "W"}, {"3", "L,15"}, {"5", "6L,2"}, {"5", "1#1,2#2"}, {"3", "1#2"},
        {"1", "5W"}, {"2", "?"}, {"1", "0/"}, {"1", "0/x"}, {"3", "???"}, {"3", "?x"}, {"5", "9L"},
        {"0", "1-60"}, {"2", "-5"}, {"0", "5$"},
    };

    /** invalid breaks the expression in one of the ways Quartz rejects. */
    private void invalid(List<String> f) {
        double u = r.nextDouble();
        if (u < 0.1) {
            f.remove(0); // 5-field (Vixie) shape
        } else if (u < 0.15) {
            f.set(3, "*");
            f.set(5, "*");
        } else if (u < 0.2) {
            f.set(3, "?");
            f.set(5, "?");
        } else if (u < 0.25) {
            int a = between(2000, 2090);
            if (f.size() == 6) {
                f.add(a + "-" + (a - between(1, 20)));
            } else {
                f.set(6, a + "-" + (a - between(1, 20)));
            }
        } else if (u < 0.28) {
            f.set(2, f.get(2) + "\n" + "1");
        } else {
            String[] bad = BAD[r.nextInt(BAD.length)];
            f.set(Integer.parseInt(bad[0]), bad[1]);
        }
    }
}
