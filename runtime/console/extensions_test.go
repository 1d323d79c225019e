package console_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/console"
)

// fakeHealth reports "late" for reports.daily and "ok" for the rest.
type fakeHealth struct{ fail bool }

func (h fakeHealth) ScheduleHealth(ctx context.Context, ids []string) (map[string]console.Health, error) {
	if h.fail {
		return nil, errors.New("health store unreachable")
	}
	out := map[string]console.Health{}
	for _, id := range ids {
		out[id] = console.Health{State: console.HealthOK}
	}
	out["reports.daily"] = console.Health{State: console.HealthLate, Reason: "02:00 KST passed 5m ago, nothing enqueued"}
	return out, nil
}

// fakeRetirer records what it retired.
type fakeRetirer struct {
	mu      sync.Mutex
	retired []string
}

func (r *fakeRetirer) RetireSchedule(ctx context.Context, id, who string) error {
	if id == "nope" {
		return fmt.Errorf("retire %q: %w", id, chronos.ErrScheduleNotFound)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retired = append(r.retired, id+" by "+who)
	return nil
}

type fakeSince time.Time

func (s fakeSince) LeaderSince(ctx context.Context, epoch int64) (time.Time, error) {
	return time.Time(s), nil
}

// Without Options.Health the console shows the Inspector's schedule
// health; without Options.LeaderSince, when the leader's term began from
// the Inspector, which reads the record the leader writes.
func TestHealthAndLeaderSinceComeFromTheInspector(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.waitLeader()
	b := f.browser()
	overview := b.ok("/")
	l, err := f.insp.SchedulerLeader(context.Background())
	if err != nil || l == nil || l.Since.IsZero() {
		t.Fatalf("SchedulerLeader = %+v, %v; want the start of its term", l, err)
	}
	contains(t, "overview", overview, `<span class="health h-ok">ok</span> 5</a>`,
		`<time datetime="`+l.Since.UTC().Format(time.RFC3339)+`" id="leader-since">`)
	if strings.Contains(overview, "not recorded") {
		t.Error("the overview says since is not recorded")
	}
	if strings.Contains(overview, `id="health-na"`) {
		t.Error("the overview says health is not available")
	}
	body := b.ok("/schedules")
	contains(t, "schedules", body, `name="health"`)
	if strings.Contains(body, "Health is not available") {
		t.Error("the schedules page says health is not available")
	}
	if err := f.insp.PauseSchedule(context.Background(), "tick", chronos.PauseOptions{Who: "alice", Note: "db migration"}); err != nil {
		t.Fatal(err)
	}
	contains(t, "paused schedule", b.ok("/schedules/tick"), `<span class="health h-paused"`, "paused since", "by alice: db migration")
	contains(t, "paused schedules", b.ok("/schedules?health=paused"), `data-schedule="tick"`, "1 of 5 schedules")
	// Retire comes from the Inspector, which refuses a schedule a live
	// instance still declares, and says so.
	contains(t, "retire confirmation", b.ok("/schedules/tick/retire"), "Retire schedule tick?")
	r := b.submit("/schedules/tick/retire", "/schedules/tick/retire", url.Values{"confirm": {"yes"}})
	if r.status != http.StatusConflict || !strings.Contains(r.body, "still declared by a live instance") {
		t.Fatalf("retire of a declared schedule: %d\n%s", r.status, r.body)
	}
}

func TestHealthRetireAndLeaderSinceUseTheirBackend(t *testing.T) {
	retirer := &fakeRetirer{}
	since := time.Date(2026, 11, 30, 18, 10, 26, 0, time.UTC)
	f := start(t, fixtureOptions{console: console.Options{Health: fakeHealth{}, Retire: retirer, LeaderSince: fakeSince(since)}})
	f.waitLeader()
	b := f.browser()
	contains(t, "overview", b.ok("/"), "since <time", "2026-11-30 18:10:26Z",
		`<span class="health h-late">late</span> 1</a>`, `<span class="health h-ok">ok</span> 4</a>`)
	body := b.ok("/schedules?health=late")
	contains(t, "late schedules", body, `data-schedule="reports.daily"`, "02:00 KST passed 5m ago", "1 of 5 schedules")
	if strings.Contains(body, `data-schedule="tick"`) {
		t.Error("the health filter kept a healthy schedule")
	}
	contains(t, "retire confirmation", b.ok("/schedules/tick/retire"), "Retire schedule tick?", "ticks.go:7")
	r := b.submit("/schedules/tick/retire", "/schedules/tick/retire", nil)
	if r.status != http.StatusBadRequest {
		t.Fatalf("retire without confirmation: %d", r.status)
	}
	r = b.submit("/schedules/tick/retire", "/schedules/tick/retire", url.Values{"confirm": {"yes"}})
	contains(t, "after retiring", r.body, "Retired schedule tick.")
	if len(retirer.retired) != 1 || retirer.retired[0] != "tick by console" {
		t.Fatalf("retired %v", retirer.retired)
	}

	g := start(t, fixtureOptions{noSched: true, console: console.Options{Health: fakeHealth{fail: true}}})
	contains(t, "overview with a failing health source", g.browser().ok("/"), "Health could not be read: health store unreachable")
}
