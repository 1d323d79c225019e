package rdb

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// RunPage is one read of the run records of a kind: newest first, with
// where a read of older ones goes on.
type RunPage struct {
	Records []RunRecord
	// More reports that the read stopped at its count, so older records
	// may exist; Cursor then continues below the oldest record read.
	More   bool
	Cursor string
}

// RecentRuns reads up to count run records of each of kinds, newest first,
// in one round trip. A kind with a cursor in below (a RunPage.Cursor) is
// read from under it; the others from the newest record. A kind without
// records has an empty page.
func (r *RDB) RecentRuns(ctx context.Context, count int, kinds []string, below map[string]string) (map[string]RunPage, error) {
	cmds := make([]*redis.XMessageSliceCmd, len(kinds))
	_, err := r.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, kind := range kinds {
			start := "+"
			if c := below[kind]; c != "" {
				start = "(" + c
			}
			cmds[i] = p.XRevRangeN(ctx, r.K.Runs(kind), start, "-", int64(count))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rdb: recent runs of %d kinds: %w", len(kinds), err)
	}
	out := make(map[string]RunPage, len(kinds))
	for i, c := range cmds {
		msgs := c.Val()
		page := RunPage{Records: make([]RunRecord, len(msgs)), More: len(msgs) == count}
		for k, m := range msgs {
			page.Records[k] = decodeRunRecord(m.Values)
		}
		if len(msgs) > 0 {
			page.Cursor = msgs[len(msgs)-1].ID
		}
		out[kinds[i]] = page
	}
	return out, nil
}
