package rdb

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/redis/go-redis/v9"
)

// A go-redis cluster client learns that a master was replaced from a MOVED
// answer or from its periodic reload of the slot map
// (ClusterOptions.ClusterStateReloadInterval, 60 s by default). A master
// that was killed sends no MOVED: its connections are refused, so until the
// next periodic reload every command for its slots fails, long after a
// replica took them over (measured: 56 s with the defaults, against 0.5 s
// once the reload interval is 1 s; docs/cluster.md). ReloadOnFailure closes
// that gap whatever the options: a command or pipeline that fails for want
// of a connection, times out, or meets CLUSTERDOWN asks the client to
// reload its map.
// go-redis coalesces the reloads (one at a time, at most one every 200 ms),
// so an outage costs a CLUSTER SLOTS every 200 ms per client at most.

// watched holds the cluster clients ReloadOnFailure hooked, so that a
// client shared by many Clients, Servers and Schedulers is hooked once.
var watched sync.Map // weak.Pointer[redis.ClusterClient] → struct{}

// ReloadOnFailure makes c, if it is a cluster client, reload its slot map
// after a command or pipeline fails to connect or meets CLUSTERDOWN. It
// hooks each client once, however often it is called.
func ReloadOnFailure(c redis.UniversalClient) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return
	}
	wp := weak.Make(cc)
	if _, loaded := watched.LoadOrStore(wp, struct{}{}); loaded {
		return
	}
	runtime.AddCleanup(cc, func(wp weak.Pointer[redis.ClusterClient]) { watched.Delete(wp) }, wp)
	cc.AddHook(reloadHook{cc: cc})
}

// reloadHook is the hook of ReloadOnFailure.
type reloadHook struct{ cc *redis.ClusterClient }

func (h reloadHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.after(err)
		return err
	}
}

func (h reloadHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if err == nil {
			for _, c := range cmds {
				if staleMap(c.Err()) {
					err = c.Err()
					break
				}
			}
		}
		h.after(err)
		return err
	}
}

func (h reloadHook) after(err error) {
	if staleMap(err) {
		h.cc.ReloadState(context.Background())
	}
}

// staleMap reports whether err says the node a command went to may no
// longer serve its slot: the connection failed or timed out (a hung node
// answers nothing until the read times out, or the caller's deadline
// passes), or the cluster is down there (a failover under way).
func staleMap(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return strings.HasPrefix(rerr.Error(), "CLUSTERDOWN")
	}
	var nerr net.Error
	return errors.As(err, &nerr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "connection reset")
}

// SkipReloadOnFailure keeps ReloadOnFailure from hooking c: for the tests
// that measure a cluster client's own recovery.
func SkipReloadOnFailure(c *redis.ClusterClient) {
	watched.LoadOrStore(weak.Make(c), struct{}{})
}
