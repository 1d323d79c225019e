package rdb

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Blocker holds a dedicated connection for blocking reads, so that another
// goroutine can end a read at once with CLIENT UNBLOCK instead of waiting
// for its timeout: that is what makes Server.Shutdown prompt. Clients that
// cannot hand out a dedicated connection (Redis Cluster) fall back to the
// shared pool, and Unblock then does nothing; the read ends at its timeout.
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
	dialer, ok := b.r.C.(interface{ Conn() *redis.Conn })
	if !ok {
		return b.r.C
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == nil {
		b.conn = dialer.Conn()
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
	if id != 0 {
		_ = b.r.C.ClientUnblock(ctx, id).Err()
	}
}

// Close releases the dedicated connection.
func (b *Blocker) Close() { b.Reset() }
