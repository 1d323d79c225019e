package schedstore

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// keyspace cannot import the storage packages, so ControlMarkers and
// ControlChannels spell their layout-1 names themselves; they must stay
// the names those packages build for a namespace of layout 1, or an older
// version's namespace (or one that lost its data while its processes run)
// would be taken for a new one and partitioned under its feet.
func TestControlMarkersAreTheStoragePackagesLayout1Names(t *testing.T) {
	for _, ns := range []string{"", "billing", "a:b"} {
		k, q, l := keysFor(keyspace.Single(ns)), rdb.NewKeys(ns), leader.KeysFor(ns)
		want := []string{k.parts[0].schedules, k.instances(), l.Epoch, q.DeadIndex(), q.Paused()}
		if got := keyspace.ControlMarkers(ns); !slices.Equal(got, want) {
			t.Errorf("ControlMarkers(%q) = %q, want the names schedstore, leader and rdb build: %q", ns, got, want)
		}
		if got, want := keyspace.ControlChannels(ns), []string{l.Resign, q.Wake()}; !slices.Equal(got, want) {
			t.Errorf("ControlChannels(%q) = %q, want the channels leader and rdb subscribe to: %q", ns, got, want)
		}
	}
}

// The history's stored form is written in two places, the fire script
// (historyLua) and AppendHistory (encodeFiringRecord), and read in one
// (decodeFiringRecord): each writer's output reads back as what was
// written, and so does the form versions before historyLua wrote.
func TestFiringRecordsReadBackAsWritten(t *testing.T) {
	at := time.UnixMilli(1796062231081)
	slot := time.UnixMilli(1796062231000)
	recs := []FiringRecord{
		{At: at, Slot: slot, Source: "trigger", Jobs: []FiringJob{{Job: "main", Task: "01M8PTDF4JH5H3BVJ602F3S357", Result: "enqueued"}}},
		{At: at, Slot: slot, Source: "catchup", Jobs: []FiringJob{
			{Job: "users", Task: "t1", Result: "enqueued"}, {Job: "orders", Result: "skipped"},
			{Job: "orders", Task: "t0", Result: "cleared"}}},
		{At: at, Slot: slot, Source: "trigger", Jobs: []FiringJob{}}, // every job of a group paused
		{At: at, Slot: slot, Source: "isolated", Jobs: []FiringJob{{Job: "main", Task: "t2", Result: "enqueued"}}, Instance: "host-1-ab"},
		{At: time.UnixMilli(0), Slot: time.UnixMilli(-1000), Source: `quote " and \ slash`, Jobs: []FiringJob{{Job: "ü", Task: "", Result: "buffered"}}},
	}
	for _, r := range recs {
		b, err := encodeFiringRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeFiringRecord(string(b))
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if !sameRecord(got, r) {
			t.Errorf("encode then decode:\n got %+v\nwant %+v\nstored %s", got, r, b)
		}
	}
	// A nil Jobs is stored as [] and read back as no jobs.
	b, _ := encodeFiringRecord(FiringRecord{At: at, Slot: slot, Source: "trigger"})
	if got, err := decodeFiringRecord(string(b)); err != nil || len(got.Jobs) != 0 || got.Jobs == nil {
		t.Errorf("nil jobs stored as %s read back as %#v, %v; want an empty list", b, got.Jobs, err)
	}

	// The fire script's writer, and cjson's own encoding of an empty jobs
	// table ({}), as versions before historyLua stored it, on a real Redis.
	redistest.Parallel(t)
	c := redistest.Start(t).Client()
	write := redis.NewScript(historyLua + `
local jobs = {}
for i = 6, #ARGV, 3 do jobs[#jobs + 1] = {ARGV[i], ARGV[i + 1], ARGV[i + 2]} end
chronos_history(KEYS[1], 10, ARGV[1], ARGV[2], ARGV[3], jobs)
if ARGV[4] == '1' then
  redis.call('LPUSH', KEYS[1], cjson.encode({at = tonumber(ARGV[1]), slot = tonumber(ARGV[2]), src = ARGV[3], jobs = {}}))
end
return redis.call('LRANGE', KEYS[1], 0, -1)
`)
	for _, r := range recs[:4] {
		args := []any{ms(r.At), ms(r.Slot), r.Source, "1", ""}
		for _, j := range r.Jobs {
			args = append(args, j.Job, j.Task, j.Result)
		}
		key := keysFor(keyspace.Single("records-test")).history(r.Source)
		stored, err := write.Run(ctx, c, []string{key}, args...).StringSlice()
		if err != nil {
			t.Fatal(err)
		}
		legacy, err := decodeFiringRecord(stored[0])
		if err != nil || len(legacy.Jobs) != 0 || !legacy.At.Equal(r.At) || !legacy.Slot.Equal(r.Slot) || legacy.Source != r.Source {
			t.Errorf("legacy record %s read back as %+v, %v", stored[0], legacy, err)
		}
		got, err := decodeFiringRecord(stored[1])
		want := r
		want.Instance = "" // the fire script writes the leader's records only
		if err != nil || !sameRecord(got, want) {
			t.Errorf("historyLua wrote %s, read back as %+v, %v; want %+v", stored[1], got, err, want)
		}
		_ = c.Del(ctx, key)
	}
}

// sameRecord compares records, times by instant and a nil Jobs as empty.
func sameRecord(a, b FiringRecord) bool {
	if len(a.Jobs) == 0 && len(b.Jobs) == 0 {
		a.Jobs, b.Jobs = nil, nil
	}
	return a.At.Equal(b.At) && a.Slot.Equal(b.Slot) && a.Source == b.Source && a.Instance == b.Instance &&
		reflect.DeepEqual(a.Jobs, b.Jobs)
}
