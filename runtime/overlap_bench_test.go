package chronos

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// BenchmarkFireOverlap runs the fire script (without the leader fence) for
// one schedule, once per iteration, in each overlap situation, and reports
// what Redis did per firing:
//
//	cmds/fire       commands the script ran (INFO commandstats, EVALSHA excluded)
//	redis-µs/fire   Redis's time in the script (EVALSHA usec per call)
//
// The situations: allow (every firing enqueues), skip with nothing running
// (every firing enqueues, under a new schedule so the marker is empty),
// skip while the run is queued, and skip while it waits in the delayed set.
//
//	go test -run '^$' -bench BenchmarkFireOverlap ./runtime
func BenchmarkFireOverlap(b *testing.B) {
	cases := []struct {
		name    string
		overlap Overlap
		delay   time.Duration
		fresh   bool // a new schedule each firing: its marker is empty
	}{
		{"allow", OverlapAllow, 0, false},
		{"skip/empty", OverlapSkip, 0, true},
		{"skip/queued", OverlapSkip, 0, false},
		{"skip/delayed", OverlapSkip, time.Hour, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			srv := redistest.Start(b)
			rc := srv.Client()
			ctx := context.Background()
			s := NewScheduler(rc, SchedulerConfig{InstanceID: "bench", Logger: slog.New(slog.DiscardHandler)})
			s.store = testStore(b, rc) // fire without Start
			p := &plan{overlap: c.overlap, jobs: []planJob{{Job: schedstore.Job{Name: mainJob, Kind: "tick", Payload: []byte(`{"n":1}`)},
				opts: &taskOptions{processIn: c.delay}}}}
			slot := time.Unix(1_800_000_000, 0)
			term := holdLease(b, rc)
			fire := func(i int) {
				id := "bench"
				if c.fresh {
					id = "bench-" + strconv.Itoa(i)
				}
				slot = slot.Add(time.Second)
				r := &fireReq{id: id, plan: p, slot: slot, at: slot, dedup: dedupKey(id, slot), source: "trigger"}
				res := s.fire(ctx, term, []*fireReq{r})
				if res[0].Err != nil || res[0].Status != fireFired {
					b.Fatalf("fire: %v %s", res[0].Err, res[0].Status)
				}
			}
			fire(-1) // the run that later firings find queued or delayed
			if err := rc.ConfigResetStat(ctx).Err(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				fire(i)
			}
			b.StopTimer()
			cmds, evals, usec := commandStats(b, rc)
			if evals != b.N {
				b.Fatalf("%d script runs for %d firings", evals, b.N)
			}
			b.ReportMetric(float64(cmds)/float64(b.N), "cmds/fire")
			b.ReportMetric(usec/float64(b.N), "redis-µs/fire")
		})
	}
}

// commandStats returns the commands Redis ran since CONFIG RESETSTAT other
// than EVALSHA and the bookkeeping ones, the EVALSHA calls, and their usec.
func commandStats(b *testing.B, c redis.UniversalClient) (cmds, evals int, usec float64) {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		name, stats, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		var calls int
		var us float64
		for kv := range strings.SplitSeq(stats, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				calls, _ = strconv.Atoi(v)
			case "usec":
				us, _ = strconv.ParseFloat(v, 64)
			}
		}
		switch name {
		case "evalsha":
			evals, usec = calls, us
		case "info", "config|resetstat", "script|load", "ping", "hello", "client|setinfo", "client|setname":
		default:
			cmds += calls
		}
	}
	if cmds == 0 && evals == 0 {
		b.Fatalf("no command stats in %q", info)
	}
	return cmds, evals, usec
}
