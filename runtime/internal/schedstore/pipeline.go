package schedstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// scriptCall is one invocation of a script in a pipeline.
type scriptCall struct {
	keys []string
	args []any
}

// evalPipelined runs script once per call in one pipeline and returns the
// commands in call order. Pipelined EVALSHA cannot fall back to EVAL, so the
// script is loaded first; calls that still meet NOSCRIPT (Redis restarted
// meanwhile, so they did not run) are loaded and sent again once. Errors of
// individual calls are left in their commands.
func (s *Store) evalPipelined(ctx context.Context, script *redis.Script, calls []scriptCall) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(calls))
	todo := make([]int, len(calls))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0 && attempt < 2; attempt++ {
		if err := script.Load(ctx, s.rdb).Err(); err != nil {
			return nil, err
		}
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range todo {
				cmds[i] = script.EvalSha(ctx, p, calls[i].keys, calls[i].args...)
			}
			return nil
		})
		if err != nil && !isScriptErr(err) {
			return nil, err
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
