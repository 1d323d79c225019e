package leader

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors carried by Change.Err when a term ends without a resignation.
var (
	// ErrLostLease means a renewal found another token in the lease: the
	// lease expired and another instance took it.
	ErrLostLease = errors.New("leader: lease is held by another token")
	// ErrTrustExpired means no renewal succeeded before the term's
	// TrustedUntil, for example because this process was paused.
	ErrTrustExpired = errors.New("leader: term's trust window passed before a renewal succeeded")
	// ErrNotReplicated means fewer than Config.Replicas replicas
	// acknowledged a lease write in time: a failover could lose the lease,
	// so the term is not started or not continued.
	ErrNotReplicated = errors.New("leader: lease write not acknowledged by enough replicas")
	// ErrAlreadyRunning is returned by Run when it is already running.
	ErrAlreadyRunning = errors.New("leader: Run is already running")
)

// Change is one transition of an Elector.
type Change struct {
	// Leader is true when a term started and false when it ended.
	Leader bool
	// Term is the term that started or ended.
	Term Term
	// Err says why a term ended: nil after a resignation, otherwise the
	// renewal failure (ErrLostLease, ErrTrustExpired or a wrapped Redis
	// error). Always nil when Leader is true.
	Err error
}

// Mode says when a follower tries to take the lease (SetMode).
type Mode int32

const (
	// Contend takes the lease whenever it is free: at once after a resign
	// notice, otherwise when the holder's lease expires (plus a jitter).
	// The default, and the only mode of layout 1.
	Contend Mode = iota
	// Standby takes the lease only once it has stayed free for
	// Config.Grace: the instance that stands in for a partition's owner
	// when the owner stops renewing (crashed, stopped, cut off), without
	// racing a live owner that is about to take it.
	Standby
	// Idle never takes the lease, and resigns it if held: a partition
	// assigned to another instance.
	Idle
)

func (m Mode) String() string {
	switch m {
	case Contend:
		return "contend"
	case Standby:
		return "standby"
	case Idle:
		return "idle"
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// Elector takes part in one election: a namespace's in layout 1, one
// partition's in a partitioned namespace. Create it with New and drive it
// with Run; Current, SetMode and Hint may be called from any goroutine.
type Elector struct {
	client redis.UniversalClient
	cfg    Config
	keys   Keys
	owner  string // "<instance>:<nonce>", the token minus its epoch

	running atomic.Bool
	mode    atomic.Int32
	modeCh  chan struct{} // a mode change for the loop
	hints   chan struct{} // resign notices for the loop
	// maxEpoch is the highest epoch this elector has seen, in its own
	// terms and in the tokens of other holders: the floor of its next
	// epoch, so that a Redis that lost its counter issues no epoch twice.
	maxEpoch atomic.Int64

	mu     sync.Mutex
	term   Term
	leader bool

	nmu   sync.Mutex
	queue []Change
	wake  chan struct{}

	// beforeRenew, when set by a test, runs before each renewal; a test
	// blocks in it to simulate a leader whose process is stalled.
	beforeRenew func(ctx context.Context)
}

// New returns an Elector for cfg on client. It does nothing until Run.
func New(client redis.UniversalClient, cfg Config) *Elector {
	cfg = cfg.withDefaults()
	e := &Elector{
		client: client,
		cfg:    cfg,
		keys:   KeysAt(cfg.Prefix),
		owner:  cfg.InstanceID + ":" + randomHex(6),
		wake:   make(chan struct{}, 1),
		modeCh: make(chan struct{}, 1),
		hints:  make(chan struct{}, 1),
	}
	e.mode.Store(int32(cfg.Mode))
	return e
}

// Keys returns the keys of the election.
func (e *Elector) Keys() Keys { return e.keys }

// Partition returns Config.Partition.
func (e *Elector) Partition() int { return e.cfg.Partition }

// Mode returns the elector's mode.
func (e *Elector) Mode() Mode { return Mode(e.mode.Load()) }

// SetMode changes when the elector tries to take the lease. A leader set
// to Idle resigns at once (step down, delete the lease, notify); a
// follower set to Contend tries at once. Setting the mode it has changes
// nothing.
func (e *Elector) SetMode(m Mode) {
	if Mode(e.mode.Swap(int32(m))) == m {
		return
	}
	select {
	case e.modeCh <- struct{}{}:
	default:
	}
}

// Hint tells the elector that a leader just resigned this election (a
// message on its resign channel), for electors with Config.ExternalHints.
func (e *Elector) Hint() {
	select {
	case e.hints <- struct{}{}:
	default:
	}
}

// InstanceID returns the instance ID this elector puts in its tokens.
func (e *Elector) InstanceID() string { return e.cfg.InstanceID }

// Current returns the current term and whether this elector is leader and
// still trusts that term now. When ok is false the Term may be zero or a
// term whose trust window has passed; either way the caller must not act.
func (e *Elector) Current() (t Term, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.leader {
		return Term{}, false
	}
	return e.term, e.term.Trusted(time.Now())
}

// Run takes part in the election until ctx ends, then resigns if leader and
// returns nil. It returns ErrAlreadyRunning if called concurrently. Every
// goroutine it starts has stopped when it returns.
func (e *Elector) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer e.running.Store(false)

	listenCtx, stopListen := context.WithCancel(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	if !e.cfg.ExternalHints {
		wg.Go(func() { e.listen(listenCtx) })
	}
	if e.cfg.OnChange != nil {
		wg.Go(func() { e.notify(done) })
	}

	e.loop(ctx)
	e.resign()

	stopListen()
	close(done)
	wg.Wait()
	return nil
}

// loop is the state machine. It returns when ctx ends.
func (e *Elector) loop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	var renewAt time.Time
	// freeAt is when a follower in Standby expects the lease to be, or saw
	// it become, free (zero: unknown); it takes the lease once it has
	// stayed free for Grace.
	var freeAt time.Time
	for ctx.Err() == nil {
		mode := e.Mode()
		if _, leader := e.state(); leader {
			if mode == Idle {
				e.resign()
				continue
			}
			e.sleep(ctx, timer, time.Until(renewAt), false)
			if ctx.Err() != nil {
				return
			}
			if e.Mode() == Idle {
				continue // resign at the top
			}
			if next, ok := e.renew(ctx); ok {
				renewAt = next
			}
			continue
		}

		var wait time.Duration
		switch mode {
		case Idle:
			freeAt = time.Time{}
			e.sleep(ctx, timer, forever, false)
			continue
		case Standby:
			wait, renewAt, freeAt = e.standby(ctx, freeAt)
		default:
			wait, renewAt = e.acquire(ctx, e.acquired)
			freeAt = time.Time{}
		}
		if wait == 0 {
			continue
		}
		hinted := e.sleep(ctx, timer, wait, true)
		if ctx.Err() != nil {
			return
		}
		if hinted && e.Mode() == Standby {
			// A resign notice: the lease is free from now; the partition's
			// owner takes it at once unless it is gone.
			freeAt = time.Now()
		}
	}
}

// forever is the duration sleep never ends by itself.
const forever = time.Duration(-1 << 63)

// sleep waits for d (or forever), a mode change, the end of ctx,
// or, if hints, a resign notice. It reports whether a resign notice ended
// the wait.
func (e *Elector) sleep(ctx context.Context, timer *time.Timer, d time.Duration, hints bool) bool {
	var tc <-chan time.Time
	if d != forever {
		timer.Reset(max(d, 0))
		tc = timer.C
		defer timer.Stop()
	}
	var hc <-chan struct{}
	if hints {
		hc = e.hints
	}
	select {
	case <-ctx.Done():
		return false
	case <-tc:
		return false
	case <-e.modeCh:
		return false
	case <-hc:
		return true
	}
}

func (e *Elector) state() (Term, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.term, e.leader
}

// acquired is the acquire attempt of a contending follower: acquire and
// jitter.
func (e *Elector) acquired(pttl time.Duration) time.Duration {
	return pttl + jitter(maxJitter(e.cfg.TTL))
}

// acquire runs the acquire script once. It returns wait == 0 and the time of
// the first renewal when a term started, otherwise how long to wait before
// the next attempt: retry(PTTL) when another holds the lease.
func (e *Elector) acquire(ctx context.Context, retry func(pttl time.Duration) time.Duration) (wait time.Duration, renewAt time.Time) {
	ttl := e.cfg.TTL
	start := time.Now()
	cmd, err := e.eval(ctx, acquireScript, []string{e.keys.Lock, e.keys.Epoch, e.keys.Since},
		e.owner, ttl.Milliseconds(), e.maxEpoch.Load(), start.UnixMilli())
	res, _ := cmd.Slice()
	if err != nil || len(res) != 3 {
		if ctx.Err() == nil {
			e.cfg.Logger.Warn("leader: acquire failed", "instance", e.cfg.InstanceID, "partition", e.cfg.Partition, "err", err)
		}
		// Redis is unreachable or answered nonsense: nobody can renew either,
		// so retry a few times per TTL.
		return ttl/4 + jitter(ttl/10), time.Time{}
	}
	if got, _ := res[0].(int64); got != 1 {
		if holder, _ := res[1].(string); holder != "" {
			if epoch, _, _, ok := parseToken(holder); ok {
				e.seeEpoch(epoch)
			}
		}
		pttl, _ := res[2].(int64)
		if pttl <= 0 { // no expiry (not ours to fix) or gone: try again soon
			pttl = ttl.Milliseconds()
		}
		return max(retry(time.Duration(pttl)*time.Millisecond), time.Millisecond), time.Time{}
	}
	token, _ := res[1].(string)
	epoch, _ := res[2].(int64)
	e.seeEpoch(epoch)
	t := Term{Token: token, Epoch: epoch, Acquired: time.Now(), TrustedUntil: start.Add(ttl - e.cfg.DriftMargin)}
	e.mu.Lock()
	e.term, e.leader = t, true
	e.mu.Unlock()
	e.cfg.Logger.Info("leader: acquired", "instance", e.cfg.InstanceID, "partition", e.cfg.Partition, "epoch", epoch)
	e.emit(Change{Leader: true, Term: t})
	return 0, start.Add(ttl / 2)
}

// standby is one step of a follower in Standby: it reads the lease (GET
// and PTTL, no write) and takes it only once it has stayed free for Grace
// since freeAt, the time it expected or saw it free. It returns what
// acquire returns, and the new freeAt.
func (e *Elector) standby(ctx context.Context, freeAt time.Time) (time.Duration, time.Time, time.Time) {
	grace := e.cfg.Grace
	retry := func(pttl time.Duration) time.Duration { return pttl + grace + jitter(grace/2) }
	now := time.Now()
	l, err := inspect(ctx, e.client, e.keys)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			e.cfg.Logger.Warn("leader: read the lease failed", "instance", e.cfg.InstanceID, "partition", e.cfg.Partition, "err", err)
		}
		return e.cfg.TTL/4 + jitter(e.cfg.TTL/10), time.Time{}, time.Time{}
	case l.Held:
		e.seeEpoch(l.Epoch)
		rem := l.Remaining
		if rem <= 0 {
			rem = e.cfg.TTL
		}
		return retry(rem), time.Time{}, now.Add(rem)
	case freeAt.IsZero():
		// Free at first sight: it may have been released a moment ago.
		return grace + jitter(grace/2), time.Time{}, now
	case now.Sub(freeAt) < grace:
		return grace - now.Sub(freeAt) + jitter(grace/2), time.Time{}, freeAt
	}
	wait, renewAt := e.acquire(ctx, retry)
	if wait == 0 {
		e.cfg.Logger.Info("leader: took over a lease that stayed free (standby)", "instance", e.cfg.InstanceID,
			"partition", e.cfg.Partition, "free_for", now.Sub(freeAt).Round(time.Millisecond))
		return 0, renewAt, time.Time{}
	}
	return wait, time.Time{}, time.Time{}
}

// seeEpoch raises maxEpoch to epoch.
func (e *Elector) seeEpoch(epoch int64) {
	for {
		cur := e.maxEpoch.Load()
		if epoch <= cur || e.maxEpoch.CompareAndSwap(cur, epoch) {
			return
		}
	}
}

// renew extends the current term or ends it. It returns the time of the
// next renewal and true when the term goes on.
func (e *Elector) renew(ctx context.Context) (time.Time, bool) {
	term, _ := e.state()
	if e.beforeRenew != nil {
		e.beforeRenew(ctx)
	}
	ttl := e.cfg.TTL
	start := time.Now()
	if !term.Trusted(start) {
		e.stepDown(term, ErrTrustExpired)
		return time.Time{}, false
	}
	rctx, cancel := context.WithDeadline(ctx, term.TrustedUntil)
	cmd, err := e.eval(rctx, renewScript, []string{e.keys.Lock}, term.Token, ttl.Milliseconds())
	n, _ := cmd.Int()
	cancel()
	switch {
	case ctx.Err() != nil:
		return time.Time{}, false // shutting down: Run resigns next
	case err != nil:
		e.stepDown(term, fmt.Errorf("leader: renew epoch %d: %w", term.Epoch, err))
		return time.Time{}, false
	case n != 1:
		e.stepDown(term, ErrLostLease)
		return time.Time{}, false
	}
	e.mu.Lock()
	if e.leader && e.term.Token == term.Token {
		e.term.TrustedUntil = start.Add(ttl - e.cfg.DriftMargin)
	}
	e.mu.Unlock()
	return start.Add(ttl / 2), true
}

// eval runs an election script, with the number of replicas its master
// must have online as its last argument (Config.Guard; the script refuses
// to write with fewer: ReplicaLua). When replicas are required it sends
// WAIT on the same connection right after the script (WAIT counts the
// writes of its own connection, hence the pipeline), and with a guard it
// reads INFO replication in the same pipeline to learn the master's
// replicas; on a cluster client that pipeline goes to the master of the
// lease's slot (Primary). A refusal or too few acknowledgements return an error
// wrapping ErrNotReplicated; the script's own reply is still in the
// returned command.
func (e *Elector) eval(ctx context.Context, s *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	g := e.cfg.Guard
	required := g.Required()
	args = append(args, required)
	if g.Want() <= 0 {
		cmd := s.Run(ctx, e.client, keys, args...)
		return cmd, cmd.Err()
	}
	var cmd, wait *redis.Cmd
	var info *redis.StringCmd
	client, err := Primary(ctx, e.client, keys[0])
	if err != nil {
		cmd = redis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd, err
	}
	_, err = client.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = s.Eval(ctx, p, keys, args...)
		if required > 0 {
			wait = p.Do(ctx, "WAIT", required, e.cfg.ReplicaTimeout.Milliseconds())
		}
		info = p.Info(ctx, "replication")
		return nil
	})
	if v, ierr := info.Result(); ierr == nil {
		g.Observe(v)
	}
	Reload(e.client, err)
	if IsNoReplicas(cmd.Err()) {
		return cmd, fmt.Errorf("%w: %v", ErrNotReplicated, cmd.Err())
	}
	if err != nil {
		return cmd, err
	}
	if wait != nil {
		if n, _ := wait.Int64(); n < int64(required) {
			return cmd, fmt.Errorf("%w: %d of %d", ErrNotReplicated, n, required)
		}
	}
	return cmd, nil
}

// Guard returns the elector's replica guard (nil without Replicas).
func (e *Elector) Guard() *ReplicaGuard { return e.cfg.Guard }

// stepDown ends term locally, before anything else happens, and reports why.
func (e *Elector) stepDown(term Term, why error) {
	e.mu.Lock()
	if !e.leader || e.term.Token != term.Token {
		e.mu.Unlock()
		return
	}
	e.term, e.leader = Term{}, false
	e.mu.Unlock()
	if why != nil {
		e.cfg.Logger.Warn("leader: stepped down", "instance", e.cfg.InstanceID, "partition", e.cfg.Partition, "epoch", term.Epoch, "err", why)
	} else {
		e.cfg.Logger.Info("leader: resigned", "instance", e.cfg.InstanceID, "partition", e.cfg.Partition, "epoch", term.Epoch)
	}
	e.emit(Change{Leader: false, Term: term, Err: why})
}

// resign steps down locally first and only then deletes the lease and
// publishes the resignation, so no other instance can be trusted while this
// one still is.
func (e *Elector) resign() {
	term, leader := e.state()
	if !leader {
		return
	}
	e.stepDown(term, nil)
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.TTL/2)
	defer cancel()
	err := resignScript.Run(ctx, e.client, []string{e.keys.Lock}, term.Token, e.keys.Resign).Err()
	if err != nil {
		// The lease expires on its own within TTL.
		e.cfg.Logger.Warn("leader: resign failed", "instance", e.cfg.InstanceID, "partition", e.cfg.Partition, "err", err)
	}
}

// listen turns resign messages into hints for the follower loop. Losing a
// message only delays a takeover until the follower's own timer.
func (e *Elector) listen(ctx context.Context) {
	ps := e.client.Subscribe(ctx, e.keys.Resign)
	defer ps.Close()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			e.Hint()
		}
	}
}

func (e *Elector) emit(c Change) {
	if e.cfg.OnChange == nil {
		return
	}
	e.nmu.Lock()
	e.queue = append(e.queue, c)
	e.nmu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// notify delivers queued changes in order until done is closed, then
// delivers what is left and returns.
func (e *Elector) notify(done <-chan struct{}) {
	for {
		e.nmu.Lock()
		q := e.queue
		e.queue = nil
		e.nmu.Unlock()
		for _, c := range q {
			e.cfg.OnChange(c)
		}
		if len(q) > 0 {
			continue
		}
		select {
		case <-e.wake:
		case <-done:
			e.nmu.Lock()
			q = e.queue
			e.queue = nil
			e.nmu.Unlock()
			for _, c := range q {
				e.cfg.OnChange(c)
			}
			return
		}
	}
}

// jitter returns a random duration in [0, max).
func jitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return rand.N(max)
}
