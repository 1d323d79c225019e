package redistest

import (
	"context"
	"os"
	"testing"
)

// parallel runs t in parallel with the package's other tests, unless they
// all share the one server REDIS_URL names.
func parallel(t *testing.T) {
	if os.Getenv("REDIS_URL") == "" {
		t.Parallel()
	}
}

func TestStartKillRestartKeepsAOFData(t *testing.T) {
	parallel(t)
	s := Start(t, Options{AOF: true})
	ctx := context.Background()
	c := s.Client()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	s.Kill()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("ping succeeded after Kill")
	}
	s.Restart()
	if s.PID() == pid || s.PID() == 0 {
		t.Fatalf("restart kept pid %d", pid)
	}
	got, err := c.Get(ctx, "k").Result()
	if err != nil || got != "v" {
		t.Fatalf("after restart: %q, %v; want v", got, err)
	}
}

func TestServersArePrivate(t *testing.T) {
	parallel(t)
	if Start(t).External() {
		t.Skip("REDIS_URL set")
	}
	a, b := Start(t), Start(t)
	ctx := context.Background()
	a.Client().Set(ctx, "k", "a", 0)
	if n, _ := b.Client().Exists(ctx, "k").Result(); n != 0 {
		t.Fatal("servers share data")
	}
}
