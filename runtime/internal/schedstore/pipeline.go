package schedstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// maxPipeline is the most commands the store sends in one pipeline where
// their count grows with the schedules: a thousand scripts take Redis tens
// of milliseconds, well inside any client's timeouts, and the round trips
// they cost are a thousandth of the commands.
const maxPipeline = 1000

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

// evalPipelined runs script once per call in one pipeline and returns the
// commands in call order. Pipelined EVALSHA cannot fall back to EVAL, so
// calls that meet NOSCRIPT (Redis restarted, or a replica was promoted,
// with an empty script cache: they did not run) are sent again once the
// script is loaded; the script is not loaded up front, which would cost a
// round trip per call. With w, the pipeline ends with WAIT, which counts
// the writes of its own connection: a pipeline keeps it on the scripts'
// connection, and INFO replication is read; the calls must then all be of
// one slot, whose master's own client carries the pipeline on a cluster
// (leader.Primary). Errors of individual calls are left in their commands;
// the error returned is a connection failure that reached none of them.
//
// Without w, calls are sent maxPipeline at a time: a pipeline that Redis
// takes longer to run than the client's write timeout (go-redis: 3 s by
// default) fails with an i/o timeout while its writes wait on a full
// socket, as registering 1,000,000 schedules in one pipeline did.
func (s *Store) evalPipelined(ctx context.Context, script *redis.Script, calls []scriptCall, w *waitFor) ([]*redis.Cmd, error) {
	if w == nil && len(calls) > maxPipeline {
		cmds := make([]*redis.Cmd, 0, len(calls))
		for start := 0; start < len(calls); start += maxPipeline {
			part, err := s.evalPipelined(ctx, script, calls[start:min(start+maxPipeline, len(calls))], nil)
			if err != nil {
				return nil, err
			}
			cmds = append(cmds, part...)
		}
		return cmds, nil
	}
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

// pipelined calls add(p, i) for every i below n, sending the commands in
// pipelines of maxPipeline (see evalPipelined for why). It returns the
// first error of a failed command, as go-redis's Pipelined does, but goes
// on through the other pipelines unless the connection failed: the
// callers read the commands they added, each holding its own error.
func (s *Store) pipelined(ctx context.Context, n int, add func(p redis.Pipeliner, i int)) error {
	var first error
	for start := 0; start < n; start += maxPipeline {
		_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := start; i < min(start+maxPipeline, n); i++ {
				add(p, i)
			}
			return nil
		})
		if err != nil && !isScriptErr(err) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}
