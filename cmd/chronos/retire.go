package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	chronos "github.com/chronos-go/chronos/runtime"
)

func retireCommands() []command {
	return []command{
		{name: "retire", synopsis: "ID [-who NAME]", run: runRetire,
			summary: "Stop a schedule no live instance declares any more, keeping its state so that a rollback resumes it."},
		{name: "delete-schedule", synopsis: "ID -yes", run: runDeleteSchedule,
			summary: "Delete a schedule no live instance declares, with its state and history, for good."},
	}
}

// runRetire retires a schedule (Inspector.RetireSchedule): what the
// leader does by itself once no live instance declares it, done now.
func runRetire(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("retire")
	who := whoFlag(fs)
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	id := pos[0]
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	s, err := insp.Schedule(ctx, id)
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	already := !s.Retired.IsZero()
	if !already {
		if err := insp.RetireSchedule(ctx, id, *who); err != nil {
			return retireErr(err, "retire", id)
		}
		if s, err = insp.Schedule(ctx, id); err != nil {
			return checkFound(err, "schedule", id)
		}
	}
	if c.json {
		return c.printJSON(struct {
			ID        string `json:"id"`
			Retired   bool   `json:"retired"` // false: it was retired already
			RetiredAt string `json:"retired_at,omitempty"`
			RetiredBy string `json:"retired_by,omitempty"`
		}{id, !already, fmtTime(s.Retired), s.RetiredBy})
	}
	if already {
		fmt.Fprintf(c.stdout, "schedule %s was retired already, %s\n", id, retiredText(s))
		return nil
	}
	fmt.Fprintf(c.stdout, "retired schedule %s: it no longer fires; its state is kept for the retirement grace, "+
		"so an instance that declares it again resumes it from its last firing (delete it now: chronos delete-schedule %s -yes)\n", id, id)
	return nil
}

// runDeleteSchedule deletes a schedule with its state and history
// (Inspector.DeleteSchedule). Like "delete" for a dead task, it is final,
// so without -yes it names what it would delete and fails.
func runDeleteSchedule(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("delete-schedule")
	yes := fs.Bool("yes", false, "delete it: its state and history are gone for good")
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	id := pos[0]
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	s, err := insp.Schedule(ctx, id)
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	what := fmt.Sprintf("schedule %s (%s", id, triggerText(s))
	if !s.LastFired.IsZero() {
		what += ", last fired " + fmtTime(s.LastFired)
	}
	if !s.Retired.IsZero() {
		what += ", " + retiredText(s)
	}
	what += ")"
	if !*yes {
		return fmt.Errorf("%s not deleted: deleting is final (its state and history go, and an instance that declares it again "+
			"starts it afresh), so add -yes (or keep its state: chronos retire %s)", what, id)
	}
	if err := insp.DeleteSchedule(ctx, id); err != nil {
		return retireErr(err, "delete", id)
	}
	if c.json {
		return c.printJSON(struct {
			ID      string `json:"id"`
			Deleted bool   `json:"deleted"`
		}{id, true})
	}
	fmt.Fprintf(c.stdout, "deleted %s\n", what)
	return nil
}

// retiredText says when and by whom (or what) s was retired.
func retiredText(s *chronos.ScheduleInfo) string {
	if s.RetiredBy != "" {
		return "retired " + fmtTime(s.Retired) + " by " + s.RetiredBy
	}
	return "retired " + fmtTime(s.Retired) + " when no live instance declared it any more"
}

// declaredMarker precedes the instances in the error of a schedule that is
// still declared (schedstore.ErrDeclared, then ": " and the IDs).
const declaredMarker = "by a live instance: "

// retireErr is the error of retiring or deleting (verb) schedule id: for
// one that a live instance still declares, which instances and what to do
// instead.
func retireErr(err error, verb, id string) error {
	if !errors.Is(err, chronos.ErrScheduleDeclared) {
		return checkFound(err, "schedule", id)
	}
	by := "a live instance"
	if msg := err.Error(); strings.Contains(msg, declaredMarker) {
		ids := msg[strings.LastIndex(msg, declaredMarker)+len(declaredMarker):]
		by = "live instance " + ids
		if strings.Contains(ids, ", ") {
			by = "live instances " + ids
		}
	}
	return fmt.Errorf("cannot %s schedule %s: it is still declared by %s, so it would be back in force at once; "+
		"to stop it while the code declares it, pause it (chronos pause %s), or deploy a build that no longer declares it: "+
		"once no live instance does, the leader retires it by itself", verb, id, by, id)
}
