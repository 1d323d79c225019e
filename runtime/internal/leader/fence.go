package leader

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrFenced is returned (wrapped) when a fenced script ran with a token that
// is no longer the lease: the caller's term is over and it must not act.
var ErrFenced = errors.New("leader: fenced: token is not the current lease")

// fenceErrPrefix starts the Lua error reply of a failed fence check.
const fenceErrPrefix = "CHRONOSFENCED"

// FenceLua is the Lua prelude FenceScript puts in front of a script body.
// It expects the lease key in KEYS[1] and the caller's Term.Token in
// ARGV[1], and aborts the script before any write when they differ:
//
//	if redis.call('GET', KEYS[1]) ~= ARGV[1] then
//	  return redis.error_reply('CHRONOSFENCED stale leader token')
//	end
//
// Because Redis runs a script atomically, a script that passes the check
// runs entirely inside the term of that token.
const FenceLua = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('` + fenceErrPrefix + ` stale leader token')
end
`

// FenceScript returns a script that runs body only while token (ARGV[1])
// still holds the lease (KEYS[1]). The body sees its own keys from KEYS[2]
// and its own arguments from ARGV[2]; build the argument lists with
// FenceKeys and FenceArgs. Errors from running it go through CheckFence.
func FenceScript(body string) *redis.Script {
	return redis.NewScript(FenceLua + body)
}

// FenceKeys returns the key list of a fenced script of the election k (a
// layout-1 namespace's, or one partition's): the lease first, then keys,
// which must be in the lease's hash slot.
func FenceKeys(k Keys, keys ...string) []string {
	return append([]string{k.Lock}, keys...)
}

// FenceArgs returns the argument list of a fenced script: the term's token
// first, then args.
func FenceArgs(t Term, args ...any) []any {
	return append([]any{t.Token}, args...)
}

// CheckFence maps the error of a fenced script: a failed fence check becomes
// an error wrapping ErrFenced; any other error is returned unchanged.
func CheckFence(err error) error {
	if err == nil {
		return nil
	}
	if strings.HasPrefix(err.Error(), fenceErrPrefix) {
		return ErrFenced
	}
	return err
}

// checkScript is FenceScript with an empty body, for Fence.
var checkScript = FenceScript("return 1")

// Fence reports, with one round trip, whether t still holds the lease of
// election k. It returns nil when it does, an error wrapping ErrFenced
// when it does not, and any Redis error as is (which callers must also treat
// as "not leader").
func Fence(ctx context.Context, client redis.Scripter, k Keys, t Term) error {
	return CheckFence(checkScript.Run(ctx, client, FenceKeys(k), FenceArgs(t)).Err())
}
