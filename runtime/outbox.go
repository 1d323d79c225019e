package chronos

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// outbox writes records to Redis in the background, in order, and keeps
// them while Redis is unreachable: the run records of tasks run in process
// and the firing history of isolated schedules, which happen whether or not
// Redis answers. It keeps at most limit writes; beyond that it drops the
// oldest, counts them and says so. Its owner runs run on a goroutine and
// stops it with its context, then calls flush for a last attempt.
type outbox struct {
	what  string // "run records", for log lines
	limit int
	log   *slog.Logger

	mu      sync.Mutex
	items   []outboxItem
	seq     uint64
	dropped int  // dropped since the last warning
	failing bool // the last attempt failed: a warning was logged
	wake    chan struct{}
}

// outboxItem is one queued write; seq tells it apart from the one the
// limit may have dropped while it was being written.
type outboxItem struct {
	seq   uint64
	write func(context.Context) error
}

func newOutbox(what string, limit int, log *slog.Logger) *outbox {
	return &outbox{what: what, limit: limit, log: log, wake: make(chan struct{}, 1)}
}

// add queues a write.
func (o *outbox) add(write func(context.Context) error) {
	o.mu.Lock()
	if len(o.items) >= o.limit {
		o.items = o.items[1:]
		o.dropped++
	}
	o.seq++
	o.items = append(o.items, outboxItem{o.seq, write})
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// run writes what is queued until ctx ends, retrying every retry while
// Redis fails.
func (o *outbox) run(ctx context.Context) {
	const retry = time.Second
	t := time.NewTimer(retry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.wake:
		case <-t.C:
		}
		o.flush(ctx)
		t.Reset(retry)
	}
}

// flush writes what is queued, in order, until a write fails or ctx ends.
func (o *outbox) flush(ctx context.Context) {
	written := 0
	for {
		o.mu.Lock()
		o.warnDropped()
		if len(o.items) == 0 {
			if o.failing {
				o.failing = false
				o.log.Info("chronos: Redis reachable again; delayed "+o.what+" written", "count", written)
			}
			o.mu.Unlock()
			return
		}
		it := o.items[0]
		o.mu.Unlock()
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := it.write(wctx)
		cancel()
		o.mu.Lock()
		if err != nil {
			if !o.failing && ctx.Err() == nil {
				o.failing = true
				o.log.Warn("chronos: cannot write "+o.what+"; keeping them until Redis answers", "waiting", len(o.items), "limit", o.limit, "err", err)
			}
			o.mu.Unlock()
			return
		}
		if len(o.items) > 0 && o.items[0].seq == it.seq {
			o.items = o.items[1:]
		}
		written++
		o.mu.Unlock()
	}
}

// pending returns how many writes wait.
func (o *outbox) pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.items)
}

// warnDropped says how many writes the limit dropped. o.mu is held.
func (o *outbox) warnDropped() {
	if o.dropped > 0 {
		o.log.Warn("chronos: Redis unreachable too long: dropped the oldest "+o.what, "dropped", o.dropped, "limit", o.limit)
		o.dropped = 0
	}
}
