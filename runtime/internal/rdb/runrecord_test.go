package rdb

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// runRecords are records of every shape the finish script and AppendRun
// write.
var runRecords = []RunRecord{
	{TaskID: "01M8PTDD629YQSSEH54S6ZHNPK", Queue: "default", Status: RunSuccess, Attempt: 1,
		Start: time.UnixMilli(1796062230001), Duration: 65 * time.Microsecond},
	{TaskID: "t-result", Queue: "reports", Status: RunSuccess, Attempt: 2, Start: time.UnixMilli(1796062230002),
		Duration: 1500 * time.Millisecond, Result: []byte(`{"rows":3}`)},
	{TaskID: "t-retry", Queue: "default", Status: RunRetry, Attempt: 3, Start: time.UnixMilli(1796062230003),
		Duration: time.Second, Error: "connection reset by peer\nat line 3", ScheduleID: "nightly",
		TriggerTime: time.UnixMilli(1796062200000)},
	{TaskID: "t-dead", Queue: "local", Status: RunDead, Attempt: 1, Start: time.UnixMilli(1796062230004),
		Duration: 0, Error: "boom", ScheduleID: "local-logs", TriggerTime: time.UnixMilli(1796062230000), Instance: "host-1-ab"},
	// A scheduled run whose trigger time is unknown keeps it zero.
	{TaskID: "t-zero", Queue: "default", Status: RunSuccess, Attempt: 1, Start: time.UnixMilli(1796062230005), ScheduleID: "s"},
}

// The run record's fields are spelled by Fields and read by
// decodeRunRecord: what one writes, the other reads back.
func TestRunRecordsReadBackAsWritten(t *testing.T) {
	for _, r := range runRecords {
		values := map[string]any{}
		f := r.Fields()
		for k := 0; k+1 < len(f); k += 2 {
			switch v := f[k+1].(type) { // Redis hands every value back as a string
			case []byte:
				values[f[k].(string)] = string(v)
			default:
				values[f[k].(string)] = fmt.Sprint(v)
			}
		}
		if got := decodeRunRecord(values); !sameRun(got, r) {
			t.Errorf("Fields then decode:\n got %+v\nwant %+v\nfields %q", got, r, f)
		}
	}
}

// The same through a real stream: AppendRun writes, ListRuns reads.
func TestRunRecordsReadBackFromTheStream(t *testing.T) {
	redistest.Parallel(t)
	st := NewStore(redistest.Start(t).Client(), keyspace.Single("records"))
	r := st.Parts[0]
	ctx := context.Background()
	for k := range runRecords {
		if err := r.AppendRun(ctx, "report", &runRecords[k], 100); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.ListRuns(ctx, "report", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(runRecords) {
		t.Fatalf("%d records, want %d", len(got), len(runRecords))
	}
	for k, g := range got { // newest first
		if want := runRecords[len(runRecords)-1-k]; !sameRun(g, want) {
			t.Errorf("record %d:\n got %+v\nwant %+v", k, g, want)
		}
	}
}

// sameRun compares records, times by instant, an empty Result as none.
func sameRun(a, b RunRecord) bool {
	return a.TaskID == b.TaskID && a.Queue == b.Queue && a.Status == b.Status && a.Attempt == b.Attempt &&
		a.Start.Equal(b.Start) && a.Duration == b.Duration && bytes.Equal(a.Result, b.Result) && a.Error == b.Error &&
		a.ScheduleID == b.ScheduleID && a.TriggerTime.Equal(b.TriggerTime) && a.Instance == b.Instance
}
