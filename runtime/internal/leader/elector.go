package leader

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// Elector takes part in the election of one namespace. Create it with New
// and drive it with Run; Current may be called from any goroutine.
type Elector struct {
	rdb   redis.UniversalClient
	cfg   Config
	keys  Keys
	owner string // "<instance>:<nonce>", the token minus its epoch

	running atomic.Bool
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

// New returns an Elector for cfg on rdb. It does nothing until Run.
func New(rdb redis.UniversalClient, cfg Config) *Elector {
	cfg = cfg.withDefaults()
	return &Elector{
		rdb:   rdb,
		cfg:   cfg,
		keys:  KeysFor(cfg.Namespace),
		owner: cfg.InstanceID + ":" + randomHex(6),
		wake:  make(chan struct{}, 1),
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

	hint := make(chan struct{}, 1)
	listenCtx, stopListen := context.WithCancel(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { e.listen(listenCtx, hint) })
	if e.cfg.OnChange != nil {
		wg.Go(func() { e.notify(done) })
	}

	e.loop(ctx, hint)
	e.resign()

	stopListen()
	close(done)
	wg.Wait()
	return nil
}

// loop is the state machine. It returns when ctx ends.
func (e *Elector) loop(ctx context.Context, hint <-chan struct{}) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	var renewAt time.Time
	for ctx.Err() == nil {
		if _, leader := e.state(); leader {
			timer.Reset(time.Until(renewAt))
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			if next, ok := e.renew(ctx); ok {
				renewAt = next
			}
			continue
		}

		wait, next := e.acquire(ctx)
		if wait == 0 {
			renewAt = next
			continue
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-hint:
			timer.Stop()
		}
	}
}

func (e *Elector) state() (Term, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.term, e.leader
}

// acquire runs the acquire script once. It returns wait == 0 and the time of
// the first renewal when a term started, otherwise how long to wait before
// the next attempt.
func (e *Elector) acquire(ctx context.Context) (wait time.Duration, renewAt time.Time) {
	ttl := e.cfg.TTL
	start := time.Now()
	cmd, err := e.eval(ctx, acquireScript, []string{e.keys.Lock, e.keys.Epoch}, e.owner, ttl.Milliseconds(), e.maxEpoch.Load())
	res, _ := cmd.Slice()
	if err != nil || len(res) != 3 {
		if ctx.Err() == nil {
			e.cfg.Logger.Warn("leader: acquire failed", "instance", e.cfg.InstanceID, "err", err)
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
		return time.Duration(pttl)*time.Millisecond + jitter(ttl/10), time.Time{}
	}
	token, _ := res[1].(string)
	epoch, _ := res[2].(int64)
	e.seeEpoch(epoch)
	t := Term{Token: token, Epoch: epoch, Acquired: time.Now(), TrustedUntil: start.Add(ttl - e.cfg.DriftMargin)}
	e.mu.Lock()
	e.term, e.leader = t, true
	e.mu.Unlock()
	e.cfg.Logger.Info("leader: acquired", "instance", e.cfg.InstanceID, "epoch", epoch)
	e.emit(Change{Leader: true, Term: t})
	return 0, start.Add(ttl / 2)
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
// replicas. A refusal or too few acknowledgements return an error
// wrapping ErrNotReplicated; the script's own reply is still in the
// returned command.
func (e *Elector) eval(ctx context.Context, s *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	g := e.cfg.Guard
	required := g.Required()
	args = append(args, required)
	if g.Want() <= 0 {
		cmd := s.Run(ctx, e.rdb, keys, args...)
		return cmd, cmd.Err()
	}
	var cmd, wait *redis.Cmd
	var info *redis.StringCmd
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
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
		e.cfg.Logger.Warn("leader: stepped down", "instance", e.cfg.InstanceID, "epoch", term.Epoch, "err", why)
	} else {
		e.cfg.Logger.Info("leader: resigned", "instance", e.cfg.InstanceID, "epoch", term.Epoch)
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
	err := resignScript.Run(ctx, e.rdb, []string{e.keys.Lock}, term.Token, e.keys.Resign).Err()
	if err != nil {
		// The lease expires on its own within TTL.
		e.cfg.Logger.Warn("leader: resign failed", "instance", e.cfg.InstanceID, "err", err)
	}
}

// listen turns resign messages into hints for the follower loop. Losing a
// message only delays a takeover until the follower's own timer.
func (e *Elector) listen(ctx context.Context, hint chan<- struct{}) {
	ps := e.rdb.Subscribe(ctx, e.keys.Resign)
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
			select {
			case hint <- struct{}{}:
			default:
			}
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
