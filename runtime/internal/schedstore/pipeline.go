package schedstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// scriptCall is one invocation of a script in a pipeline.
type scriptCall struct {
	keys []string
	args []any
}

// waitFor asks evalPipelined to end its pipeline with WAIT, and receives
// how many replicas acknowledged.
type waitFor struct {
	replicas int
	timeout  time.Duration

	acked int    // set by evalPipelined
	err   error  // WAIT's own error, if any
	info  string // INFO replication, read in the same pipeline
}

// batchSize is the most commands a pipeline over many schedules sends at
// once (registering, reading states, listing, seeding, sweeping): more go
// in several pipelines, one after the other. One pipeline per operation
// over a million schedules took longer to write and to answer than a
// client's write and read timeouts (a deadline covers a whole pipeline),
// so Start failed and retried forever; batches keep each round trip short
// whatever the registry's size. Store.batch, which tests lower, is it.
const batchSize = 5000

// inBatches calls f for the ranges [lo, hi) of n items, s.batch at a
// time, in order, until one fails.
func (s *Store) inBatches(n int, f func(lo, hi int) error) error {
	for lo := 0; lo < n; lo += s.batch {
		if err := f(lo, min(lo+s.batch, n)); err != nil {
			return err
		}
	}
	return nil
}

// pipelinedBatches queues the commands of n items (add(p, i) those of item
// i) in pipelines of Store.batch items, one after the other, and after each
// pipeline calls read(i) for its items (read may be nil), so that a caller
// decodes a batch's replies and drops them before the next. A redis.Nil
// reply does not stop it; it is returned at the end, as Pipelined returns
// it. Any other error, or read's, stops it and is returned: the batches
// before ran.
func (s *Store) pipelinedBatches(ctx context.Context, n int, add func(p redis.Pipeliner, i int), read func(i int) error) error {
	var nilErr error
	err := s.inBatches(n, func(lo, hi int) error {
		_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := lo; i < hi; i++ {
				add(p, i)
			}
			return nil
		})
		if errors.Is(err, redis.Nil) {
			nilErr, err = err, nil
		}
		if err != nil || read == nil {
			return err
		}
		for i := lo; i < hi; i++ {
			if err := read(i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return nilErr
}

// evalPipelined runs script once per call in one pipeline and returns the
// commands in call order; without w, more than batchSize calls go in
// batches of that many (the error returned then comes from the first batch
// that failed: the batches before it ran). Pipelined EVALSHA cannot fall back to EVAL, so
// calls that meet NOSCRIPT (Redis restarted, or a replica was promoted,
// with an empty script cache: they did not run) are sent again once the
// script is loaded; the script is not loaded up front, which would cost a
// round trip per call. With w, the pipeline ends with WAIT, which counts
// the writes of its own connection: a pipeline keeps it on the scripts'
// connection, and INFO replication is read; the calls must then all be of
// one slot, whose master's own client carries the pipeline on a cluster
// (leader.Primary). Errors of individual calls are left in their commands;
// the error returned is a connection failure that reached none of them.
func (s *Store) evalPipelined(ctx context.Context, script *redis.Script, calls []scriptCall, w *waitFor) ([]*redis.Cmd, error) {
	if w != nil || len(calls) <= s.batch {
		return s.evalPipeline(ctx, script, calls, w)
	}
	cmds := make([]*redis.Cmd, 0, len(calls))
	err := s.inBatches(len(calls), func(lo, hi int) error {
		c, err := s.evalPipeline(ctx, script, calls[lo:hi], nil)
		cmds = append(cmds, c...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return cmds, nil
}

// evalPipeline is evalPipelined in one pipeline.
func (s *Store) evalPipeline(ctx context.Context, script *redis.Script, calls []scriptCall, w *waitFor) ([]*redis.Cmd, error) {
	client := s.client
	if w != nil && len(calls) > 0 {
		var err error
		if client, err = leader.Primary(ctx, s.client, calls[0].keys[0]); err != nil {
			return nil, err
		}
	}
	cmds := make([]*redis.Cmd, len(calls))
	todo := make([]int, len(calls))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0 && attempt < 2; attempt++ {
		if attempt > 0 {
			if err := script.Load(ctx, client).Err(); err != nil {
				leader.Reload(s.client, err)
				return nil, err
			}
		}
		var wait *redis.Cmd
		var info *redis.StringCmd
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range todo {
				cmds[i] = script.EvalSha(ctx, p, calls[i].keys, calls[i].args...)
			}
			if w != nil {
				if w.replicas > 0 {
					wait = p.Do(ctx, "WAIT", w.replicas, max(w.timeout, time.Millisecond).Milliseconds())
				}
				info = p.Info(ctx, "replication")
			}
			return nil
		})
		if client != s.client {
			leader.Reload(s.client, err)
		}
		if err != nil && !isScriptErr(err) {
			return nil, err
		}
		if wait != nil {
			n, err := wait.Int64()
			w.acked, w.err = int(n), err
		}
		if info != nil {
			w.info = info.Val()
		}
		var again []int
		for _, i := range todo {
			if e := cmds[i].Err(); e != nil && redis.HasErrorPrefix(e, "NOSCRIPT") {
				again = append(again, i)
			}
		}
		todo = again
	}
	return cmds, nil
}

// isScriptErr reports whether a pipeline's error is an error reply of one of
// its scripts (kept in its command) rather than a connection failure.
func isScriptErr(err error) bool {
	_, ok := err.(redis.Error)
	return ok
}
