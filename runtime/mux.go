package chronos

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// Mux routes tasks to handlers by kind. Register handlers with AddHandler,
// AddHandlerWithResult, AddFunc or AddFuncWithResult before passing the Mux
// to Server.Start.
type Mux struct {
	mu       sync.RWMutex
	handlers map[string]*handler
}

// NewMux returns an empty Mux.
func NewMux() *Mux {
	return &Mux{handlers: make(map[string]*handler)}
}

// handler is a registered handler with its args type erased.
type handler struct {
	kind    string
	run     func(ctx context.Context, m *rdb.Message) (result []byte, err error)
	backoff Backoff
	timeout time.Duration
}

func (mux *Mux) lookup(kind string) *handler {
	mux.mu.RLock()
	defer mux.mu.RUnlock()
	return mux.handlers[kind]
}

func (mux *Mux) add(h *handler) {
	if h.kind == "" {
		panic("chronos: AddHandler: args type has an empty Kind")
	}
	mux.mu.Lock()
	defer mux.mu.Unlock()
	if _, dup := mux.handlers[h.kind]; dup {
		panic(fmt.Sprintf("chronos: AddHandler: kind %q registered twice", h.kind))
	}
	mux.handlers[h.kind] = h
}

// HandlerOption configures the handler of one kind.
type HandlerOption interface {
	applyHandler(*handler)
}

type handlerOption func(*handler)

func (f handlerOption) applyHandler(h *handler) { f(h) }

// WithBackoff replaces the server's retry backoff for this kind.
func WithBackoff(b Backoff) HandlerOption {
	return handlerOption(func(h *handler) { h.backoff = b })
}

// WithDefaultTimeout bounds each run of this kind that was enqueued without
// WithTimeout.
func WithDefaultTimeout(d time.Duration) HandlerOption {
	return handlerOption(func(h *handler) { h.timeout = d })
}

// AddHandler registers h for the kind of A. It panics if the kind is empty
// or already registered, as http.ServeMux does for a duplicate pattern:
// both are programming errors found at startup.
//
// A task whose args do not decode into A goes to the dead letters at once
// (ErrBadPayload) rather than retrying, since no retry can fix it.
func AddHandler[A TaskArgs](mux *Mux, h func(context.Context, *Task[A]) error, opts ...HandlerOption) {
	addHandler(mux, func(ctx context.Context, t *Task[A]) ([]byte, error) {
		return nil, h(ctx, t)
	}, opts)
}

// AddHandlerWithResult registers h for the kind of A, like AddHandler. The
// result of a successful run is encoded as JSON, stored with the run record
// and logged with the success record.
func AddHandlerWithResult[A TaskArgs, R any](mux *Mux, h func(context.Context, *Task[A]) (R, error), opts ...HandlerOption) {
	addHandler(mux, func(ctx context.Context, t *Task[A]) ([]byte, error) {
		r, err := h(ctx, t)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("chronos: encode result of %s: %w", t.Args.Kind(), err)
		}
		return b, nil
	}, opts)
}

// AddFunc registers f for the kind of A, for a handler that needs neither
// the task's args nor its metadata (a scheduled job such as a nightly
// report). A names the kind and must be given: chronos.AddFunc[ReportArgs](mux, r.Nightly).
// The payload must still decode into A, as with AddHandler.
//
// Generated registration code uses it for handlers declared as
// func(context.Context) error.
func AddFunc[A TaskArgs](mux *Mux, f func(context.Context) error, opts ...HandlerOption) {
	addHandler(mux, func(ctx context.Context, _ *Task[A]) ([]byte, error) {
		return nil, f(ctx)
	}, opts)
}

// AddFuncWithResult is AddFunc for a function that returns a result, stored
// and logged as with AddHandlerWithResult. R is inferred:
// chronos.AddFuncWithResult[ExportArgs](mux, r.Export).
func AddFuncWithResult[A TaskArgs, R any](mux *Mux, f func(context.Context) (R, error), opts ...HandlerOption) {
	AddHandlerWithResult(mux, func(ctx context.Context, _ *Task[A]) (R, error) {
		return f(ctx)
	}, opts...)
}

func addHandler[A TaskArgs](mux *Mux, run func(context.Context, *Task[A]) ([]byte, error), opts []HandlerOption) {
	var zero A
	h := &handler{kind: zero.Kind()}
	h.run = func(ctx context.Context, m *rdb.Message) ([]byte, error) {
		t := &Task[A]{
			ID:         m.ID,
			Queue:      m.Queue,
			Attempt:    m.Attempt + 1,
			MaxRetry:   m.MaxRetry,
			EnqueuedAt: time.UnixMilli(m.EnqueuedAt),
			ScheduleID: m.ScheduleID,
		}
		if m.TriggerTime != 0 {
			t.TriggerTime = time.UnixMilli(m.TriggerTime)
		}
		if err := json.Unmarshal(m.Args, &t.Args); err != nil {
			return nil, fmt.Errorf("%w into %T: %w", ErrBadPayload, zero, err)
		}
		return run(ctx, t)
	}
	for _, o := range opts {
		o.applyHandler(h)
	}
	mux.add(h)
}
