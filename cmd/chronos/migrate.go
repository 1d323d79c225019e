package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	chronos "github.com/chronos-go/chronos/runtime"
)

func migrateCommands() []command {
	return []command{
		{name: "migrate", synopsis: "[-partitions N] [-force] [-dry-run]", run: runMigrate,
			summary: "Move a namespace written by versions before partitions (layout 1) to N partitions (default 12), " +
				"or finish a migration that was interrupted. Stop its schedulers and servers first."},
	}
}

// migrateConnected, if set, sees the command's state once it connected
// (tests).
var migrateConnected func(*cli)

// migrateView is the JSON of "chronos migrate".
type migrateView struct {
	Namespace  string         `json:"namespace"`
	Partitions int            `json:"partitions"`
	Found      string         `json:"found"` // layout 1, migrating, partitioned
	DryRun     bool           `json:"dry_run"`
	Moved      map[string]int `json:"moved"`
	Queues     []string       `json:"queues"`
	Left       []string       `json:"left,omitempty"`
	Forced     []string       `json:"forced,omitempty"`
}

// runMigrate runs Inspector.Migrate. Unless -timeout is given, it runs
// without the default limit: a large namespace takes longer than 30 s, and
// an interrupted migration leaves the namespace refusing every process
// until it is run again.
func runMigrate(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("migrate")
	partitions := fs.Int("partitions", 0, "partitions to migrate to (default 12, or the count of a migration under way)")
	force := fs.Bool("force", false, "migrate although scheduler instances or servers look live: for ones that crashed")
	dryRun := fs.Bool("dry-run", false, "say what would move, and change nothing")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	if *partitions < 0 || *partitions > 1024 {
		return usagef("-partitions %d: a namespace has between 1 and 1024 partitions", *partitions)
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "timeout" {
			c.timeoutSet = true
		}
	})
	if !c.timeoutSet {
		c.timeout = 0
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	if migrateConnected != nil {
		migrateConnected(c)
	}
	rep, err := insp.Migrate(ctx, chronos.MigrateOptions{Partitions: *partitions, Force: *force, DryRun: *dryRun})
	if err != nil {
		return migrateErr(err)
	}
	if c.json {
		v := migrateView{Namespace: rep.Namespace, Partitions: rep.Partitions, Found: rep.Found, DryRun: rep.DryRun,
			Moved: rep.Moved, Queues: rep.Queues, Left: rep.Left, Forced: rep.Forced}
		if v.Moved == nil {
			v.Moved = map[string]int{}
		}
		if v.Queues == nil {
			v.Queues = []string{}
		}
		return c.printJSON(v)
	}
	c.printMigrate(rep)
	return nil
}

// printMigrate prints what a migration did or would do.
func (c *cli) printMigrate(rep *chronos.MigrateReport) {
	w := c.stdout
	ns := strconv.Quote(rep.Namespace)
	switch {
	case rep.DryRun && rep.Found == "partitioned" && len(rep.Moved) == 0:
		fmt.Fprintf(w, "dry run: namespace %s is partitioned already (%d partitions): nothing to move\n", ns, rep.Partitions)
	case rep.DryRun:
		fmt.Fprintf(w, "dry run: namespace %s is %s; chronos migrate would move to %d partitions:\n", ns, foundText(rep.Found), rep.Partitions)
	case rep.Found == "partitioned" && len(rep.Moved) == 0 && len(rep.Queues) == 0:
		fmt.Fprintf(w, "namespace %s is partitioned already (%d partitions): nothing to move\n", ns, rep.Partitions)
	case rep.Found == "migrating":
		fmt.Fprintf(w, "finished the migration of namespace %s to %d partitions, which an earlier run had begun:\n", ns, rep.Partitions)
	case rep.Found == "partitioned":
		fmt.Fprintf(w, "namespace %s is partitioned (%d partitions); moved what processes still using layout 1 wrote since:\n", ns, rep.Partitions)
	default:
		fmt.Fprintf(w, "migrated namespace %s from layout 1 to %d partitions:\n", ns, rep.Partitions)
	}
	if len(rep.Moved) > 0 {
		head := "MOVED"
		if rep.DryRun {
			head = "TO MOVE"
		}
		t := newTable(w, "KIND", head)
		for _, kind := range chronos.MigrateKinds {
			if n, ok := rep.Moved[kind]; ok {
				t.row(kind, strconv.Itoa(n))
			}
		}
		_ = t.flush()
	}
	if rep.Moved["pending tasks"] > 0 {
		fmt.Fprintln(w, "pending tasks (taken by a server that did not finish them) are re-added as new entries: their delivery counts start over")
	}
	if len(rep.Queues) > 0 {
		if rep.DryRun {
			fmt.Fprintf(w, "queues: %s\n", strings.Join(rep.Queues, ", "))
		} else {
			fmt.Fprintf(w, "the layout-1 stream and delayed set of queues %s are markers now: a process still using layout 1 reads the layout again at its next enqueue\n",
				strings.Join(rep.Queues, ", "))
		}
	}
	if len(rep.Forced) > 0 {
		fmt.Fprintf(w, "forced although live: %s\n", strings.Join(rep.Forced, "; "))
	}
	if len(rep.Left) > 0 {
		fmt.Fprintf(w, "left under the single tag (keys chronos does not write, or queues of versions before in-process isolated schedules): %s\n",
			strings.Join(rep.Left, ", "))
	}
}

func foundText(found string) string {
	switch found {
	case "migrating":
		return "being migrated (an earlier run was interrupted)"
	case "partitioned":
		return "partitioned already, with keys left in layout 1"
	}
	return "in layout 1 (the single tag of versions before partitions)"
}

// migrateErr turns the errors an operator can act on into what to do.
func migrateErr(err error) error {
	var inUse *chronos.NamespaceInUseError
	switch {
	case errors.As(err, &inUse):
		return fmt.Errorf("%s: stop them first (a graceful shutdown deregisters a scheduler and takes a server out of its "+
			"consumer groups), or add -force if they crashed", strings.TrimPrefix(inUse.Error(), "chronos: "))
	case errors.Is(err, chronos.ErrNothingToMigrate):
		return &noNamespaceError{}
	}
	return err
}
