package rdb

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Blocker holds a dedicated connection for blocking reads, so that another
// goroutine can end a read at once with CLIENT UNBLOCK instead of waiting
// for its timeout: that is what makes Server.Shutdown prompt. On Redis
// Cluster the connection goes to the master of the namespace's slot (after
// a failover the read fails, Reset drops the connection and the next Cmd
// finds the new master). Other clients fall back to the shared pool, and
// Unblock then does nothing; the read ends at its timeout.
type Blocker struct {
	r *RDB

	mu   sync.Mutex
	conn *redis.Conn
	id   int64 // CLIENT ID of conn; 0 when unknown
}

// NewBlocker returns a Blocker over r's client.
func NewBlocker(r *RDB) *Blocker { return &Blocker{r: r} }

// Cmd returns the connection to run the next blocking read on. After a
// failed read, call Reset so that the next Cmd dials afresh.
func (b *Blocker) Cmd(ctx context.Context) redis.Cmdable {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == nil {
		switch c := b.r.C.(type) {
		case *redis.ClusterClient:
			m, err := c.MasterForKey(ctx, b.r.K.Dead())
			if err != nil {
				return b.r.C
			}
			b.conn = m.Conn()
		case interface{ Conn() *redis.Conn }:
			b.conn = c.Conn()
		default:
			return b.r.C
		}
	}
	if b.id == 0 {
		id, err := b.conn.ClientID(ctx).Result()
		if err != nil {
			return b.conn // the read will fail too, and the caller resets
		}
		b.id = id
	}
	return b.conn
}

// Reset drops the dedicated connection after an error.
func (b *Blocker) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn != nil {
		_ = b.conn.Close()
	}
	b.conn, b.id = nil, 0
}

// Unblock ends a blocking read in progress on the dedicated connection, if
// any; the read returns as if it had timed out.
func (b *Blocker) Unblock(ctx context.Context) {
	b.mu.Lock()
	id := b.id
	b.mu.Unlock()
	if id == 0 {
		return
	}
	if c, ok := b.r.C.(*redis.ClusterClient); ok {
		// CLIENT UNBLOCK has no key, so it must go to the node holding the
		// connection: the master of the namespace's slot.
		if m, err := c.MasterForKey(ctx, b.r.K.Dead()); err == nil {
			_ = m.ClientUnblock(ctx, id).Err()
		}
		return
	}
	_ = b.r.C.ClientUnblock(ctx, id).Err()
}

// Close releases the dedicated connection.
func (b *Blocker) Close() { b.Reset() }
