package rdb

import (
	"context"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
)

// chronos migrate leaves MigratedMarker in place of a layout-1 queue's
// stream and delayed set. An enqueue there fails with WRONGTYPE, so the
// Client reads the layout again, and one with a dedup key fails before
// claiming it: no claim is left in a layout nobody reads, where a later
// move of the dedup keys would copy it over the Client's retry and make
// that retry a duplicate of itself.
func TestADedupEnqueueThatMeetsWrongTypeClaimsNothing(t *testing.T) {
	redistest.Parallel(t)
	c := redistest.Start(t).Client()
	ctx := context.Background()
	r := New(c, "moved")
	for _, k := range []string{r.K.Stream("q"), r.K.Delayed("q")} {
		if err := c.Set(ctx, k, MigratedMarker, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	for _, tc := range []struct {
		name string
		due  time.Time
		key  string
	}{
		{"ready, dedup", now, "k1"},
		{"delayed, dedup", now.Add(time.Hour), "k2"},
		{"ready", now, ""},
		{"delayed", now.Add(time.Hour), ""},
	} {
		ttl := time.Duration(0)
		if tc.key != "" {
			ttl = time.Hour
		}
		_, _, err := r.Enqueue(ctx, "q", []byte(`{"id":"x"}`), "x", tc.due, now, tc.key, ttl)
		if !IsWrongType(err) {
			t.Errorf("%s: %v, want WRONGTYPE", tc.name, err)
		}
		if tc.key != "" {
			if n := c.Exists(ctx, r.K.Dedup(tc.key)).Val(); n != 0 {
				t.Errorf("%s: the failed enqueue claimed its dedup key", tc.name)
			}
		}
	}
}
