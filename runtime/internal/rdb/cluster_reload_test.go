package rdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"weak"

	"github.com/redis/go-redis/v9"
)

// A cluster client shared by many Clients, Servers and Schedulers is
// hooked once; other clients are not hooked at all.
func TestReloadOnFailureHooksAClusterClientOnce(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	for range 3 {
		ReloadOnFailure(cc)
	}
	n := 0
	watched.Range(func(k, _ any) bool {
		if k.(weak.Pointer[redis.ClusterClient]) == weak.Make(cc) {
			n++
		}
		return true
	})
	if n != 1 {
		t.Fatalf("the client is watched %d times, want once", n)
	}
	ReloadOnFailure(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})) // not a cluster client: nothing
	ReloadOnFailure(nil)
}

// Which errors make a cluster client reload its slot map.
func TestStaleMapIsAFailedConnectionATimeoutOrClusterDown(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{redis.Nil, false},
		{context.Canceled, false},
		{errors.New("NOSCRIPT No matching script"), false},
		{fmt.Errorf("rdb: enqueue: %w", redis.ErrClosed), false},
		{refused, true},
		{io.EOF, true},
		{context.DeadlineExceeded, true},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true},
	} {
		if got := staleMap(tc.err); got != tc.want {
			t.Errorf("staleMap(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
