package leader

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// childEnv, when set, makes the test binary run one elector as a child
// process of TestElectorsAsProcesses instead of running tests.
const childEnv = "CHRONOS_LEADER_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

// childMain runs one elector against CHRONOS_LEADER_REDIS and reports its
// view on stdout, one line per change of view:
//
//	L <epoch> <acquired unix ns> <trusted-until unix ns>   trusted leader
//	F                                                     not a trusted leader
//
// Wall-clock readings are comparable across processes on one host.
func childMain() int {
	opt, err := redis.ParseURL(os.Getenv("CHRONOS_LEADER_REDIS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ttl, err := time.ParseDuration(os.Getenv("CHRONOS_LEADER_TTL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	e := New(rdb, Config{InstanceID: os.Getenv(childEnv), TTL: ttl})
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(ctx) }()

	last := ""
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		line := "F"
		if t, ok := e.Current(); ok {
			line = fmt.Sprintf("L %d %d %d", t.Epoch, t.Acquired.UnixNano(), t.TrustedUntil.UnixNano())
		}
		if line != last {
			fmt.Fprintln(os.Stdout, line)
			last = line
		}
		select {
		case <-ctx.Done():
			<-done
			return 0
		case <-tick.C:
		}
	}
}
