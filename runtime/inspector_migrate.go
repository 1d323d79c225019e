package chronos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/migrate"
)

// ErrNamespaceInUse is wrapped by the error of Migrate when a scheduler
// instance or a server of the namespace looks live (a
// *NamespaceInUseError says which).
var ErrNamespaceInUse = errors.New("chronos: namespace in use")

// ErrNamespaceMigrating is wrapped by the errors of a Client, Server,
// Scheduler or Inspector on a namespace that Migrate is moving to
// partitions: half its keys are in one layout, half in the other, so
// nothing may use it until the migration is finished (run it again if it
// was interrupted).
var ErrNamespaceMigrating = keyspace.ErrMigrating

// ErrNothingToMigrate is wrapped by the error of Migrate on a namespace
// that holds no key.
var ErrNothingToMigrate = migrate.ErrNothing

// NamespaceInUseError says what made Migrate refuse: what looks live.
type NamespaceInUseError struct {
	Namespace string
	// Instances are the scheduler instances whose heartbeat has not
	// expired, with host and process ID when their record says.
	Instances []string
	// Leader is the instance holding the leader lease, if one does.
	Leader string
	// Servers are the consumers of the queues' consumer groups that read
	// or claimed a task less than MigrateOptions.LiveWithin ago.
	Servers []string
}

func (e *NamespaceInUseError) Error() string {
	var parts []string
	if len(e.Instances) > 0 {
		parts = append(parts, "live scheduler instances "+strings.Join(e.Instances, ", "))
	}
	if e.Leader != "" {
		parts = append(parts, "instance "+e.Leader+" holds the leader lease")
	}
	if len(e.Servers) > 0 {
		parts = append(parts, "servers that read tasks recently: "+strings.Join(e.Servers, "; "))
	}
	return fmt.Sprintf("chronos: namespace %q is in use: %s", e.Namespace, strings.Join(parts, "; "))
}

// Unwrap makes the error match ErrNamespaceInUse.
func (e *NamespaceInUseError) Unwrap() error { return ErrNamespaceInUse }

// MigrateOptions configure Migrate.
type MigrateOptions struct {
	// Partitions is the partition count to migrate to; 0 means 12, or the
	// count of a migration under way.
	Partitions int
	// Force migrates although scheduler instances or servers look live:
	// for ones that crashed, whose heartbeat, lease or consumer has not
	// aged out yet.
	Force bool
	// DryRun counts what would move and writes nothing.
	DryRun bool
	// LiveWithin is how recently a consumer of a queue's group must have
	// read or claimed a task to count as a live server. Default 1 minute,
	// twice the default VisibilityTimeout.
	LiveWithin time.Duration
}

// MigrateKinds are the kinds of what Migrate moves, the keys of
// MigrateReport.Moved, in the order to print them.
var MigrateKinds = slices.Clone(migrate.Kinds)

// MigrateReport says what Migrate did, or with DryRun would do.
type MigrateReport struct {
	Namespace  string
	Partitions int
	// Found is what Migrate found: "layout 1", "migrating" (an interrupted
	// migration, which it finished) or "partitioned" (migrated already:
	// it moved what processes still using layout 1 wrote since, if
	// anything).
	Found  string
	DryRun bool
	// Moved counts what moved, or would move, by kind (MigrateKinds);
	// "leader epoch" is the epoch every partition's starts above. Items an
	// interrupted run had copied but not yet deleted are counted again
	// (copying them again changed nothing), except tasks of streams,
	// which are counted once.
	Moved map[string]int
	// Queues are the queues whose layout-1 keys were replaced by the
	// marker that makes a process still using layout 1 read the layout
	// again (with DryRun: the queues that would be moved).
	Queues []string
	// Left are keys of the namespace's single tag that stay: keys chronos
	// does not write, and the queues of versions before in-process
	// isolated schedules, which the scheduler deletes.
	Left []string
	// Forced lists what looked live when Force was set.
	Forced []string
}

// Migrate moves the namespace from the single-tag layout of versions
// before partitions (layout 1) to MigrateOptions.Partitions partitions,
// or finishes a migration that was interrupted: run it again after any
// failure. It refuses, with an error wrapping ErrNamespaceInUse, while a
// scheduler instance or server of the namespace looks live (unless
// Force). While it runs, Clients, Servers and Schedulers of this version
// refuse to start on the namespace (ErrNamespaceMigrating); Clients that
// read layout 1 before it began keep enqueueing there and are moved over,
// then redirected. Every process must run a version that knows partitions
// before it starts: earlier versions cannot read a migrated namespace. See
// docs/scheduler.md, "Migrating a layout-1 namespace".
func (i *Inspector) Migrate(ctx context.Context, o MigrateOptions) (*MigrateReport, error) {
	return i.migrate(ctx, o, migrateHooks{})
}

// migrateHooks are what tests change in Migrate: a hook after every write
// (to interrupt it) and the items per round trip.
type migrateHooks struct {
	step  func(string) error
	batch int
}

func (i *Inspector) migrate(ctx context.Context, o MigrateOptions, h migrateHooks) (*MigrateReport, error) {
	rep, err := migrate.Run(ctx, i.sched.client, migrate.Options{
		Namespace: i.ns, Partitions: o.Partitions, Force: o.Force, DryRun: o.DryRun, LiveWithin: o.LiveWithin,
		Step: h.step, Batch: h.batch,
	})
	if !o.DryRun {
		// Whatever happened, the layout this Inspector read may be gone.
		i.sched.resolver.Forget()
		i.queue.Forget(i.queue.Cached())
	}
	var live *migrate.LiveError
	if errors.As(err, &live) {
		return nil, &NamespaceInUseError{Namespace: live.Namespace, Instances: live.Instances, Leader: live.Leader, Servers: live.Consumers}
	}
	if err != nil {
		return nil, fmt.Errorf("chronos: migrate namespace %q: %w", i.ns, err)
	}
	return &MigrateReport{
		Namespace: rep.Namespace, Partitions: rep.Partitions, Found: rep.Found, DryRun: rep.DryRun,
		Moved: rep.Moved, Queues: rep.Queues, Left: rep.Left, Forced: rep.Forced,
	}, nil
}
