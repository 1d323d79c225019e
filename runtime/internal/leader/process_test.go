//go:build linux

package leader

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
)

// report is one line of a child's view, stamped when the parent read it.
type report struct {
	child       int
	leader      bool
	epoch       int64
	from, until time.Time // trusted interval claimed by the child (wall clock)
	received    time.Time
}

// cluster is a set of elector child processes and everything they said.
type cluster struct {
	t       *testing.T
	procs   []*exec.Cmd
	eof     []chan struct{} // closed when a child's stdout is drained
	mu      sync.Mutex
	latest  []report
	reports []report
	notify  chan struct{}
}

func startCluster(t *testing.T, url string, n int, ttl time.Duration) *cluster {
	c := &cluster{t: t, latest: make([]report, n), notify: make(chan struct{}, 1)}
	for i := range n {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(),
			fmt.Sprintf("%s=p%d", childEnv, i),
			"CHRONOS_LEADER_REDIS="+url,
			"CHRONOS_LEADER_TTL="+ttl.String())
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		eof := make(chan struct{})
		c.procs = append(c.procs, cmd)
		c.eof = append(c.eof, eof)
		go func() { defer close(eof); c.read(i, bufio.NewScanner(out)) }()
		t.Cleanup(func() { c.stop(i, syscall.SIGKILL) })
	}
	return c
}

// stop signals child i and reaps it after its output is drained (Wait
// closes the pipe, so it must come after the last read).
func (c *cluster) stop(i int, sig syscall.Signal) {
	p := c.procs[i]
	if p.ProcessState != nil {
		return
	}
	_ = p.Process.Signal(sig)
	<-c.eof[i]
	_ = p.Wait()
}

func (c *cluster) read(child int, sc *bufio.Scanner) {
	for sc.Scan() {
		r := report{child: child, received: time.Now()}
		var from, until int64
		if n, _ := fmt.Sscanf(sc.Text(), "L %d %d %d", &r.epoch, &from, &until); n == 3 {
			r.leader, r.from, r.until = true, time.Unix(0, from), time.Unix(0, until)
		}
		c.mu.Lock()
		c.latest[child] = r
		c.reports = append(c.reports, r)
		// Observation: at the moment a report arrives, at most one child
		// claims a trust window that covers now.
		now := time.Now()
		var trusted []int
		for _, l := range c.latest {
			if l.leader && now.Before(l.until) {
				trusted = append(trusted, l.child)
			}
		}
		c.mu.Unlock()
		if len(trusted) > 1 {
			c.t.Errorf("children %v are trusted leaders at the same moment", trusted)
		}
		select {
		case c.notify <- struct{}{}:
		default:
		}
	}
}

// waitLeader waits for a child other than the excluded ones to report a
// term with an epoch above minEpoch, and returns that report.
func (c *cluster) waitLeader(minEpoch int64, exclude ...int) report {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		for _, r := range c.latest {
			if r.leader && r.epoch > minEpoch && !contains(exclude, r.child) {
				c.mu.Unlock()
				return r
			}
		}
		c.mu.Unlock()
		select {
		case <-c.notify:
		case <-deadline:
			c.t.Fatal("no new leader")
		}
	}
}

func (c *cluster) waitFollower(child int) {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		r := c.latest[child]
		c.mu.Unlock()
		if !r.leader && !r.received.IsZero() {
			return
		}
		select {
		case <-c.notify:
		case <-deadline:
			c.t.Fatalf("child %d never reported it is no longer leader", child)
		}
	}
}

// checkTerms verifies the safety property on everything the children said:
// trust windows of different epochs never overlap, in epoch order.
func (c *cluster) checkTerms() {
	c.mu.Lock()
	defer c.mu.Unlock()
	type span struct{ from, until time.Time }
	spans := map[int64]*span{}
	for _, r := range c.reports {
		if !r.leader {
			continue
		}
		s, ok := spans[r.epoch]
		if !ok {
			spans[r.epoch] = &span{r.from, r.until}
			continue
		}
		if r.until.After(s.until) {
			s.until = r.until
		}
	}
	for a, sa := range spans {
		for b, sb := range spans {
			if a < b && sa.until.After(sb.from) {
				c.t.Errorf("epoch %d trusted until %v, after epoch %d started at %v",
					a, sa.until.Format(time.StampMicro), b, sb.from.Format(time.StampMicro))
			}
		}
	}
	c.t.Logf("%d terms observed, %d reports", len(spans), len(c.reports))
}

func TestElectorsAsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	s := redistest.Start(t)
	const ttl = time.Second
	c := startCluster(t, s.URL(), 3, ttl)

	first := c.waitLeader(0)

	// SIGKILL the leader: its lease must expire and another take over.
	killed := time.Now()
	if err := c.procs[first.child].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second := c.waitLeader(first.epoch, first.child)
	took := second.received.Sub(killed)
	t.Logf("takeover after SIGKILL: %v (TTL %v)", took, ttl)
	if took > ttl+time.Second {
		t.Errorf("takeover after SIGKILL took %v, more than TTL + 1s", took)
	}

	// SIGSTOP the new leader past its TTL: the last child takes over, and
	// the stopped one, once continued, must step down without overlapping.
	stopped := c.procs[second.child].Process
	if err := stopped.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	third := c.waitLeader(second.epoch, first.child, second.child)
	took = third.received.Sub(paused)
	t.Logf("takeover after SIGSTOP: %v (TTL %v)", took, ttl)
	if took > ttl+time.Second {
		t.Errorf("takeover after SIGSTOP took %v, more than TTL + 1s", took)
	}
	time.Sleep(ttl) // keep it stopped well past its lease
	if err := stopped.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	c.waitFollower(second.child)
	time.Sleep(ttl) // a few renewals of the third leader after the resume

	c.mu.Lock()
	still := c.latest[third.child]
	c.mu.Unlock()
	if !still.leader || still.epoch != third.epoch {
		t.Errorf("leader after resume = %+v, want child %d epoch %d to keep its term", still, third.child, third.epoch)
	}
	c.stop(first.child, syscall.SIGKILL)
	c.stop(second.child, syscall.SIGTERM)
	c.stop(third.child, syscall.SIGTERM)
	c.checkTerms()
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
