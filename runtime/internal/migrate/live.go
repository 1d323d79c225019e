package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// ErrLive is wrapped by the error of a migration refused because a
// scheduler instance or a server of the namespace looks live (LiveError).
var ErrLive = errors.New("migrate: namespace in use")

// LiveError lists what looks live in a namespace.
type LiveError struct {
	Namespace string
	// Instances are scheduler instances whose heartbeat has not expired,
	// as "<id> (<host>, pid <pid>)" when their record says.
	Instances []string
	// Leader is the instance holding the leader lease, if one does.
	Leader string
	// Consumers are consumer-group consumers (servers) that read or
	// claimed a task less than LiveWithin ago, as "<consumer> on queue
	// <queue>, <idle> ago".
	Consumers []string
}

func (e *LiveError) Error() string {
	var parts []string
	if len(e.Instances) > 0 {
		parts = append(parts, "scheduler instances "+strings.Join(e.Instances, ", ")+" are live")
	}
	if e.Leader != "" {
		parts = append(parts, "instance "+e.Leader+" holds the leader lease")
	}
	if len(e.Consumers) > 0 {
		parts = append(parts, "servers read tasks recently: "+strings.Join(e.Consumers, "; "))
	}
	return fmt.Sprintf("namespace %q is in use: %s", e.Namespace, strings.Join(parts, "; "))
}

// Unwrap makes a LiveError match ErrLive.
func (e *LiveError) Unwrap() error { return ErrLive }

// what lists what e found, for a report of a forced migration.
func (e *LiveError) what() []string {
	out := append([]string(nil), e.Instances...)
	if e.Leader != "" {
		out = append(out, "leader "+e.Leader)
	}
	return append(out, e.Consumers...)
}

// live finds the scheduler instances and servers of the layout-1
// namespace that look live: instances whose heartbeat (the instance index,
// and the record of each) has not expired, the holder of the leader lease,
// and consumers of the queues' consumer groups whose idle time (XINFO
// CONSUMERS: since they last read or claimed a task) is below
// o.LiveWithin. It returns nil when none does.
func (m *migration) live(ctx context.Context, in *inventory) (*LiveError, error) {
	e := &LiveError{Namespace: m.ns}
	st := schedstore.New(m.c, schedstore.Config{Layout: keyspace.Single(m.ns), Now: m.o.Now})
	ids, err := st.Live(ctx)
	if err != nil {
		return nil, err
	}
	recs, err := st.Instances(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[string]schedstore.Instance{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	for _, id := range ids {
		s := id.ID
		if r, ok := byID[id.ID]; ok && r.Host != "" {
			s += fmt.Sprintf(" (%s, pid %d)", r.Host, r.PID)
		}
		e.Instances = append(e.Instances, s)
	}
	l, err := leader.Inspect(ctx, m.c, m.old.lease)
	if err != nil {
		return nil, err
	}
	if l.Held {
		e.Leader = l.Instance
	}
	for _, q := range in.streams {
		cs, err := m.c.XInfoConsumers(ctx, m.old.q.Stream(q), rdb.Group).Result()
		if err != nil {
			if rdb.IsNoGroup(err) || strings.Contains(err.Error(), "no such key") {
				continue
			}
			return nil, fmt.Errorf("migrate: consumers of queue %q: %w", q, err)
		}
		for _, c := range cs {
			if c.Idle < m.o.LiveWithin {
				e.Consumers = append(e.Consumers, fmt.Sprintf("%s on queue %s, %v ago", c.Name, q, c.Idle.Round(time.Millisecond)))
			}
		}
	}
	if len(e.Instances) == 0 && e.Leader == "" && len(e.Consumers) == 0 {
		return nil, nil
	}
	return e, nil
}
