package schedstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// ErrNotFound is returned (wrapped) when a schedule or request does not
// exist.
var ErrNotFound = errors.New("schedstore: not found")

// Defaults of Config.
const (
	DefaultInstanceTTL       = 15 * time.Second
	DefaultRetireGrace       = 24 * time.Hour
	DefaultFullSweepInterval = 10 * time.Minute
)

// Config configures a Store. The zero value is usable.
type Config struct {
	// Namespace selects the key set. Default "chronos".
	Namespace string
	// Layout is how the namespace's keys are spread over partitions
	// (keyspace.Resolver finds it). The zero value is layout 1 of
	// Namespace, the single tag.
	Layout keyspace.Layout
	// InstanceTTL is how long an instance counts as live after its last
	// heartbeat. Heartbeat about every InstanceTTL/3. Default 15s.
	InstanceTTL time.Duration
	// RetireGrace is how long a schedule that no live instance declares is
	// kept (with its state) before Sweep deletes it. It should outlast the
	// longest time a service may be scaled to zero or rolled back.
	// Default 24h.
	RetireGrace time.Duration
	// FullSweepInterval is the longest Sweep goes without reading the whole
	// registry while the live instances and their declarations stay the
	// same. Only a change made outside this package (a schedule hash
	// deleted or edited by hand) waits for it: everything Register,
	// Heartbeat, Deregister and Sweep do is seen at the next sweep. The
	// default, 10 minutes, repairs such a change within minutes while a
	// leader sweeping every 15 seconds reads the whole registry 40 times
	// less often. Negative: every sweep reads everything.
	FullSweepInterval time.Duration
	// Now returns the current time. Default time.Now. Tests set it.
	Now func() time.Time
	// Self is the instance ID of the Store's owner. A sweep retires and
	// deletes schedules only while Self is live: an owner whose own
	// heartbeats are not getting through (Redis out of memory, a long
	// outage) cannot tell a gone instance from one whose heartbeat was
	// refused too. Empty: no such check.
	Self string
}

// Store reads and writes the registry of one namespace, in every
// partition of its layout.
type Store struct {
	client redis.UniversalClient
	cfg    Config
	keys   keys

	sweepMu     sync.Mutex           // serializes sweeps, guards memo and orphanSince
	memo        sweepMemo            // this Store's last full sweep
	orphanSince map[string]time.Time // when a full pass first saw a schedule no live instance declares

	batch int // the most commands of a pipeline over many schedules (batchSize)

	reqSeq requestSeq // orders the IDs of requests made in the same millisecond
}

// New returns a Store on client.
func New(client redis.UniversalClient, cfg Config) *Store {
	if cfg.Namespace == "" {
		cfg.Namespace = keyspace.DefaultNamespace
	}
	if cfg.InstanceTTL <= 0 {
		cfg.InstanceTTL = DefaultInstanceTTL
	}
	if cfg.RetireGrace <= 0 {
		cfg.RetireGrace = DefaultRetireGrace
	}
	if cfg.FullSweepInterval == 0 {
		cfg.FullSweepInterval = DefaultFullSweepInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Layout.Partitions() == 0 {
		cfg.Layout = keyspace.Single(cfg.Namespace)
	}
	cfg.Namespace = cfg.Layout.Namespace()
	return &Store{client: client, cfg: cfg, keys: keysFor(cfg.Layout), orphanSince: map[string]time.Time{}, batch: batchSize}
}

// Namespace returns the store's namespace.
func (s *Store) Namespace() string { return s.cfg.Namespace }

// Layout returns the store's layout.
func (s *Store) Layout() keyspace.Layout { return s.cfg.Layout }

// Partitions returns the number of partitions of the store's layout.
func (s *Store) Partitions() int { return len(s.keys.parts) }

// PartitionOf returns the partition of schedule id.
func (s *Store) PartitionOf(id string) int { return s.cfg.Layout.ForSchedule(id) }

// Lease returns the election keys of partition p, whose lease fences the
// partition's writes.
func (s *Store) Lease(p int) leader.Keys { return s.keys.parts[p].lease }

// QueueKeys returns the queue keys of partition p, where the fire script
// enqueues the tasks of the partition's schedules.
func (s *Store) QueueKeys(p int) rdb.Keys { return s.keys.parts[p].queue }

// SchedKey returns the hash key of schedule id, for scripts that update its
// state together with other keys.
func (s *Store) SchedKey(id string) string { return s.keys.sched(id) }

// Schedule is a schedule as stored: the definition in force, who declared
// it, and its state.
type Schedule struct {
	Definition
	DefHash    string
	DeclaredBy Declarer
	Created    time.Time
	DefChanged time.Time
	State      State
	// Retired is when the schedule stopped firing because no live instance
	// declared it (or RetiredBy, an operator, retired it); zero while it
	// is in force. Its state is kept until RetireGrace deletes it.
	Retired   time.Time
	RetiredBy string
}

// TriggerState is the durable state the misfire engine evaluates. It
// mirrors runtime/trigger.State field for field (this package does not
// import it), so the scheduler converts between them without loss. The
// zero value means "never evaluated": the scheduler starts from the
// trigger's initial state.
type TriggerState struct {
	Next           time.Time // next scheduled fire time; zero once Complete
	Prev           time.Time // last fire time handed out
	Start          time.Time // anchor of a simple trigger's slots
	TimesTriggered int64
	RepeatCount    int64
	Complete       bool
}

// State is the durable state of a schedule.
type State struct {
	TriggerState
	// LastOutcome is the outcome word of the last SaveState.
	LastOutcome string
	// Saved is when the trigger state was last written (zero: never).
	Saved time.Time
	// Pause is set while the whole schedule is paused (see Paused).
	Pause *PauseInfo
	// Resumed is when an operator last ended a pause of the whole
	// schedule (zero: never, or before versions that record it).
	Resumed time.Time
	// JobPauses holds the paused jobs of a group, by job name.
	JobPauses map[string]PauseInfo
}

// PauseInfo says who paused something, when, why and until when (zero
// Until: until resumed).
type PauseInfo struct {
	Note  string    `json:"note,omitempty"`
	Who   string    `json:"who,omitempty"`
	At    time.Time `json:"at"`
	Until time.Time `json:"until,omitzero"`
}

// Active reports whether the pause is in force at now.
func (p PauseInfo) Active(now time.Time) bool { return p.Until.IsZero() || now.Before(p.Until) }

// Paused reports whether the whole schedule is paused at now.
func (s Schedule) Paused(now time.Time) bool {
	return s.State.Pause != nil && s.State.Pause.Active(now)
}

// JobPaused reports whether job is paused at now, on its own or with the
// whole schedule.
func (s Schedule) JobPaused(job string, now time.Time) bool {
	if s.Paused(now) {
		return true
	}
	p, ok := s.State.JobPauses[job]
	return ok && p.Active(now)
}

// Get returns schedule id, or an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Schedule, error) {
	m, err := s.client.HGetAll(ctx, s.keys.sched(id)).Result()
	if err != nil {
		return Schedule{}, fmt.Errorf("schedstore: get %q: %w", id, err)
	}
	if len(m) == 0 {
		return Schedule{}, fmt.Errorf("schedstore: get %q: %w", id, ErrNotFound)
	}
	return decodeSchedule(m)
}

// GetMany returns the schedules of ids that exist, in one round trip per
// batchSize of them.
func (s *Store) GetMany(ctx context.Context, ids []string) (map[string]Schedule, error) {
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	out := make(map[string]Schedule, len(ids))
	err := s.pipelinedBatches(ctx, len(ids), func(p redis.Pipeliner, i int) {
		cmds[i] = p.HGetAll(ctx, s.keys.sched(ids[i]))
	}, func(i int) error {
		m := cmds[i].Val()
		cmds[i] = nil
		if len(m) == 0 {
			return nil
		}
		sc, err := decodeSchedule(m)
		if err != nil {
			return err
		}
		out[sc.ID] = sc
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schedstore: get %d schedules: %w", len(ids), err)
	}
	return out, nil
}

// List returns every schedule of every partition, ordered by ID: one
// pipeline for the partitions' indexes, one for the hashes.
func (s *Store) List(ctx context.Context) ([]Schedule, error) {
	idx := make([]*redis.StringSliceCmd, len(s.keys.parts))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range s.keys.parts {
			idx[i] = p.ZRange(ctx, s.keys.parts[i].schedules, 0, -1)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schedstore: list: %w", err)
	}
	var ids []string
	for _, c := range idx {
		ids = append(ids, c.Val()...)
	}
	return s.list(ctx, ids)
}

// ListPartition returns the schedules of partition p, ordered by ID: the
// registry a partition's leader fires.
func (s *Store) ListPartition(ctx context.Context, p int) ([]Schedule, error) {
	ids, err := s.client.ZRange(ctx, s.keys.parts[p].schedules, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("schedstore: list partition %d: %w", p, err)
	}
	return s.list(ctx, ids)
}

// list reads the hashes of ids, pipelined (pipelinedBatches).
func (s *Store) list(ctx context.Context, ids []string) ([]Schedule, error) {
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	out := make([]Schedule, 0, len(ids))
	err := s.pipelinedBatches(ctx, len(ids), func(p redis.Pipeliner, i int) {
		cmds[i] = p.HGetAll(ctx, s.keys.sched(ids[i]))
	}, func(i int) error {
		m := cmds[i].Val()
		cmds[i] = nil
		if len(m) == 0 {
			return nil // retired between the two reads
		}
		sc, err := decodeSchedule(m)
		if err != nil {
			return err
		}
		out = append(out, sc)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schedstore: list: %w", err)
	}
	sortByID(out)
	return out, nil
}

func decodeSchedule(m map[string]string) (Schedule, error) {
	var sc Schedule
	d := &sc.Definition
	d.ID, d.Kind, d.Spec, d.Zone = m[FieldID], m[FieldKind], m[FieldSpec], m[FieldZone]
	d.Policy, d.Group, d.Overlap, d.Source = m[FieldPolicy], m[FieldGroup], m[FieldOverlap], m[FieldSource]
	d.Isolated = m[FieldIsolated] == "1"
	if n, err := strconv.ParseInt(m[FieldLateAfter], 10, 64); err == nil && n > 0 {
		d.LateAfter = time.Duration(n) * time.Millisecond
	}
	if n, err := strconv.Atoi(m[FieldFailingAfter]); err == nil && n > 0 {
		d.FailingAfter = n
	}
	if j := m[FieldJobs]; j != "" {
		if err := json.Unmarshal([]byte(j), &d.Jobs); err != nil {
			return sc, fmt.Errorf("schedstore: schedule %q: jobs: %w", d.ID, err)
		}
	}
	sc.DefHash = m[FieldDefHash]
	sc.DeclaredBy = Declarer{InstanceID: m[FieldDeclaredBy], Version: m[FieldDeclaredVersion], Started: msTime(m[FieldDeclaredStart])}
	sc.Created, sc.DefChanged = msTime(m[FieldCreated]), msTime(m[FieldDefChanged])
	sc.Retired, sc.RetiredBy = msTime(m[FieldRetired]), m[FieldRetiredBy]
	st := &sc.State
	st.Next, st.Prev, st.Start = msTime(m[FieldNextFire]), msTime(m[FieldLastFired]), msTime(m[FieldTriggerStart])
	st.TimesTriggered, _ = strconv.ParseInt(m[FieldTimesTriggered], 10, 64)
	st.RepeatCount, _ = strconv.ParseInt(m[FieldRepeatCount], 10, 64)
	st.Complete = m[FieldComplete] == "1"
	st.Saved = msTime(m[FieldStateSaved])
	st.LastOutcome = m[FieldLastOutcome]
	st.Resumed = msTime(m[FieldResumedAt])
	if m[FieldPaused] == "1" {
		st.Pause = &PauseInfo{Note: m[FieldPauseNote], Who: m[FieldPausedBy], At: msTime(m[FieldPausedAt]), Until: msTime(m[FieldPauseUntil])}
	}
	for k, v := range m {
		if job, ok := strings.CutPrefix(k, FieldJobPausePrefix); ok {
			var p PauseInfo
			if err := json.Unmarshal([]byte(v), &p); err != nil {
				return sc, fmt.Errorf("schedstore: schedule %q: pause of job %q: %w", d.ID, job, err)
			}
			if st.JobPauses == nil {
				st.JobPauses = map[string]PauseInfo{}
			}
			st.JobPauses[job] = p
		}
	}
	return sc, nil
}

// ms encodes t as Unix milliseconds; the zero time is 0.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// msTime decodes Unix milliseconds; "" and "0" are the zero time.
func msTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}

func sortByID(s []Schedule) {
	slices.SortFunc(s, func(a, b Schedule) int { return cmp.Compare(a.ID, b.ID) })
}

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return s
}

// NoteChange bumps the change counter of every partition, which each
// partition's leader polls every second: a registration is acted on at
// once instead of at the next full read of the registry, and the leader of
// partition 0 sweeps at once. One pipeline.
func (s *Store) NoteChange(ctx context.Context) error {
	ps := make([]int, len(s.keys.parts))
	for i := range ps {
		ps[i] = i
	}
	return s.NoteChangeIn(ctx, ps...)
}

// NoteChangeOf bumps the change counter of schedule id's partition: a
// pause or a resume of it is acted on at once.
func (s *Store) NoteChangeOf(ctx context.Context, id string) error {
	return s.NoteChangeIn(ctx, s.PartitionOf(id))
}

// NoteChangeIn bumps the change counters of partitions ps, in one pipeline.
func (s *Store) NoteChangeIn(ctx context.Context, ps ...int) error {
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range ps {
			p.Incr(ctx, s.keys.parts[i].version)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("schedstore: note a registry change: %w", err)
	}
	return nil
}

// ChangeCount returns the change counter of partition p ("" before the
// first change): a leader that sees it differ from its last reading
// reloads the partition's registry.
func (s *Store) ChangeCount(ctx context.Context, p int) (string, error) {
	v, err := s.client.Get(ctx, s.keys.parts[p].version).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("schedstore: read the change counter of partition %d: %w", p, err)
	}
	return v, nil
}

// ChangeCounts returns the change counters of partitions ps, in one
// pipeline ("" for a partition before its first change).
func (s *Store) ChangeCounts(ctx context.Context, ps []int) ([]string, error) {
	cmds := make([]*redis.StringCmd, len(ps))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, i := range ps {
			cmds[k] = p.Get(ctx, s.keys.parts[i].version)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("schedstore: read the registry's change counters: %w", err)
	}
	out := make([]string, len(ps))
	for k, c := range cmds {
		out[k] = c.Val()
	}
	return out, nil
}
