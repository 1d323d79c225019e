package chronos

import (
	"context"
	"fmt"
	"time"
)

// OldestReady returns when the oldest ready task of queue (waiting for a
// worker) was added to the queue: enqueued, or moved there when its delay
// or retry backoff ran out. It is zero when no task is ready. Exporters
// turn it into the age of the queue's head, the measure of a queue that
// workers do not keep up with. It is the oldest of every partition's, read
// in one round trip.
func (i *Inspector) OldestReady(ctx context.Context, queue string) (time.Time, error) {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("chronos: oldest ready task of %q: %w", queue, err)
	}
	id, err := st.OldestReady(ctx, queue)
	if err != nil {
		return time.Time{}, fmt.Errorf("chronos: oldest ready task of %q: %w", queue, err)
	}
	if id == "" {
		return time.Time{}, nil
	}
	at, ok := entryTime(id)
	if !ok {
		return time.Time{}, fmt.Errorf("chronos: oldest ready task of %q: entry ID %q is not a stream ID", queue, id)
	}
	return at, nil
}
