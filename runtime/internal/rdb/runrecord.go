package rdb

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RunRecord is the record of one finished run of a task, as the finish
// script appends it to the capped stream {ns}:runs:<kind>. Fields encodes
// it and decodeRunRecord reads it back; they are the only two places that
// spell its field names.
type RunRecord struct {
	TaskID      string
	Queue       string
	Status      string // RunSuccess, RunRetry or RunDead
	Attempt     int    // the run's attempt number, from 1
	Start       time.Time
	Duration    time.Duration // stored in microseconds
	Result      []byte        // success of a handler with a result
	Error       string        // failures
	ScheduleID  string        // scheduled runs only
	TriggerTime time.Time     // scheduled runs only
	// Instance is the scheduler instance that ran an isolated task in
	// process; "" for queued tasks.
	Instance string
}

// Run record statuses.
const (
	RunSuccess = "success"
	RunRetry   = "retry" // failed, will be retried
	RunDead    = "dead"
)

// Run record field names.
const (
	runTaskID   = "task_id"
	runStatus   = "status"
	runQueue    = "queue"
	runAttempt  = "attempt"
	runStart    = "start"       // unix ms
	runDuration = "duration_us" // microseconds
	runSchedule = "schedule"
	runTrigger  = "trigger" // unix ms
	runError    = "error"
	runResult   = "result"
	runInstance = "instance"
)

// Fields returns r as the stream entry's field/value list (Finish.RunAttrs).
func (r *RunRecord) Fields() []any {
	a := make([]any, 0, 20)
	a = append(a,
		runTaskID, r.TaskID,
		runStatus, r.Status,
		runQueue, r.Queue,
		runAttempt, strconv.Itoa(r.Attempt),
		runStart, strconv.FormatInt(r.Start.UnixMilli(), 10),
		runDuration, strconv.FormatInt(r.Duration.Microseconds(), 10),
	)
	if r.ScheduleID != "" {
		a = append(a, runSchedule, r.ScheduleID, runTrigger, strconv.FormatInt(msOrZero(r.TriggerTime), 10))
	}
	if r.Instance != "" {
		a = append(a, runInstance, r.Instance)
	}
	switch {
	case r.Error != "":
		a = append(a, runError, r.Error)
	case r.Result != nil:
		a = append(a, runResult, r.Result)
	}
	return a
}

// decodeRunRecord reads a run record from its stream entry's values.
func decodeRunRecord(values map[string]any) RunRecord {
	v := func(k string) string { s, _ := values[k].(string); return s }
	r := RunRecord{
		TaskID: v(runTaskID), Queue: v(runQueue), Status: v(runStatus),
		Error: v(runError), ScheduleID: v(runSchedule), Instance: v(runInstance),
	}
	r.Attempt, _ = strconv.Atoi(v(runAttempt))
	if ms, err := strconv.ParseInt(v(runStart), 10, 64); err == nil {
		r.Start = time.UnixMilli(ms)
	}
	if us, err := strconv.ParseInt(v(runDuration), 10, 64); err == nil {
		r.Duration = time.Duration(us) * time.Microsecond
	}
	if ms, err := strconv.ParseInt(v(runTrigger), 10, 64); err == nil && ms != 0 {
		r.TriggerTime = time.UnixMilli(ms)
	}
	if s := v(runResult); s != "" {
		r.Result = []byte(s)
	}
	return r
}

// AppendRun adds rec to the run records of kind, keeping about keep of
// them. The finish script appends the records of queued tasks in the same
// step as their outcome; this is for tasks run in process.
func (r *RDB) AppendRun(ctx context.Context, kind string, rec *RunRecord, keep int) error {
	err := r.C.XAdd(ctx, &redis.XAddArgs{Stream: r.keysOf(kind).runs, MaxLen: int64(keep), Approx: true, Values: rec.Fields()}).Err()
	if err != nil {
		return fmt.Errorf("rdb: append a run record of %q: %w", kind, err)
	}
	return nil
}

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// DecodeRunRecord reads a run record from its stream entry's values (for
// chronos migrate, which files each record under the partition of its
// schedule or task).
func DecodeRunRecord(values map[string]any) RunRecord { return decodeRunRecord(values) }
