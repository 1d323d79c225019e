package chronos_test

import (
	"context"
	"log/slog"
	"os"
	"strings"

	chronos "github.com/chronos-go/chronos/runtime"
)

// splitHandler sends records whose "event" attribute starts with "task."
// to jobs and all others to rest (docs/logging.md).
type splitHandler struct {
	jobs, rest slog.Handler
}

func (h splitHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.jobs.Enabled(ctx, l) || h.rest.Enabled(ctx, l)
}

func (h splitHandler) Handle(ctx context.Context, r slog.Record) error {
	isTask := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "event" && strings.HasPrefix(a.Value.String(), "task.") {
			isTask = true
			return false
		}
		return true
	})
	dst := h.rest
	if isTask {
		dst = h.jobs
	}
	if !dst.Enabled(ctx, r.Level) {
		return nil
	}
	return dst.Handle(ctx, r)
}

func (h splitHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return splitHandler{h.jobs.WithAttrs(as), h.rest.WithAttrs(as)}
}

func (h splitHandler) WithGroup(name string) slog.Handler {
	return splitHandler{h.jobs.WithGroup(name), h.rest.WithGroup(name)}
}

// Task lifecycle records carry an "event" attribute, so one logger can send
// them to their own destination, such as a rotating file (docs/logging.md).
func Example_routingTaskLogs() {
	noTime := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}
	jobs := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}) // e.g. a lumberjack.Logger
	rest := slog.NewTextHandler(os.Stderr, nil)
	logger := slog.New(splitHandler{jobs: jobs, rest: rest})

	logger.Info("task success", "event", chronos.EventTaskSuccess, "kind", "welcome_email")
	logger.Info("chronos: server started") // goes to rest, not shown
	_ = chronos.ServerConfig{Logger: logger}
	// Output: level=INFO msg="task success" event=task.success kind=welcome_email
}
