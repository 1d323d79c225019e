package chronos

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// Task lifecycle records. Every run logs a start record (level Debug) and
// one outcome record: success (ServerConfig.SuccessLogLevel, by default
// Debug), a failure that will be retried (Warn) or a failure that sent the
// task to the dead letters (Error). All carry
// the attribute event = "task.start" / "task.success" / "task.failure", so
// a handler can route them; see docs/logging.md.
const (
	EventTaskStart   = "task.start"
	EventTaskSuccess = "task.success"
	EventTaskFailure = "task.failure"
)

func taskAttrs(a []slog.Attr, m *rdb.Message) []slog.Attr {
	a = append(a,
		slog.String("kind", m.Kind),
		slog.String("task_id", m.ID),
		slog.String("queue", m.Queue),
	)
	if m.ScheduleID != "" {
		a = append(a, slog.String("schedule", m.ScheduleID), slog.Time("trigger_time", time.UnixMilli(m.TriggerTime)))
	}
	return a
}

func (s *Server) logStart(ctx context.Context, m *rdb.Message) {
	if !s.taskLog.Enabled(ctx, slog.LevelDebug) {
		return
	}
	var buf [8]slog.Attr
	a := append(buf[:0], slog.String("event", EventTaskStart))
	a = taskAttrs(a, m)
	a = append(a, slog.Int("attempt", m.Attempt+1), slog.Int("max_retry", m.MaxRetry))
	s.taskLog.LogAttrs(ctx, slog.LevelDebug, "task start", a...)
}

func (s *Server) logOutcome(r *run) {
	ctx := s.handlerCtx
	level, msg, event := s.cfg.SuccessLogLevel.Level(), "task success", EventTaskSuccess
	switch r.outcome {
	case rdb.Retry:
		level, msg, event = slog.LevelWarn, "task failure", EventTaskFailure
	case rdb.Dead:
		level, msg, event = slog.LevelError, "task failure", EventTaskFailure
	}
	if !s.taskLog.Enabled(ctx, level) {
		return
	}
	attempt := r.m.Attempt
	if r.outcome == rdb.Done {
		attempt++
	}
	var buf [14]slog.Attr
	a := append(buf[:0], slog.String("event", event))
	a = taskAttrs(a, r.m)
	a = append(a,
		slog.Int("attempt", max(attempt, 1)),
		slog.Int("max_retry", r.m.MaxRetry),
		slog.Duration("duration", r.dur),
		slog.String("outcome", outcomeName(r.outcome)),
	)
	switch r.outcome {
	case rdb.Done:
		if r.result != nil {
			a = append(a, slog.Any("result", json.RawMessage(r.result)))
		}
	case rdb.Retry:
		a = append(a, slog.String("error", r.err.Error()), slog.Time("retry_at", r.due))
	case rdb.Dead:
		a = append(a, slog.String("error", r.err.Error()))
	}
	var pe *PanicError
	if r.err != nil && asPanic(r.err, &pe) {
		a = append(a, slog.String("stack", pe.Stack))
	}
	s.taskLog.LogAttrs(ctx, level, msg, a...)
}

func outcomeName(o rdb.Outcome) string {
	switch o {
	case rdb.Done:
		return "success"
	case rdb.Retry:
		return "retry"
	default:
		return "dead"
	}
}
