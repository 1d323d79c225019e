package main

import (
	"context"
	"strings"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

func TestRequeueMovesADeadTaskBackToItsQueue(t *testing.T) {
	c := startCluster(t)
	info, err := chronos.NewClient(c.rdb).Enqueue(context.Background(), flaky{})
	if err != nil {
		t.Fatal(err)
	}
	type deadView struct {
		ID       string `json:"id"`
		Kind     string `json:"kind"`
		Queue    string `json:"queue"`
		Attempts int    `json:"attempts"`
		Reason   string `json:"reason"`
	}
	var dead []deadView
	eventually(t, "the task to die", func() bool {
		c.okJSON(&dead, "dead")
		return len(dead) == 1
	})
	if d := dead[0]; d.ID != info.ID || d.Kind != "flaky" || d.Queue != "default" || !strings.Contains(d.Reason, "disk full") {
		t.Fatalf("dead = %+v", d)
	}
	if row := lineOf(t, c.ok("dead"), info.ID); !strings.Contains(row, "flaky") || !strings.Contains(row, "disk full") {
		t.Fatalf("dead row %q", row)
	}

	if out := c.ok("requeue", info.ID); out != "requeued "+info.ID+" (flaky) to queue default\n" {
		t.Fatalf("requeue printed %q", out)
	}
	c.okJSON(&dead, "dead")
	if len(dead) != 0 {
		t.Fatalf("still dead after requeue: %+v", dead)
	}
	var runs []struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
	}
	eventually(t, "the requeued task to succeed", func() bool {
		c.okJSON(&runs, "runs", "flaky")
		return len(runs) == 2
	})
	if runs[0].Status != "success" || runs[1].Status != "dead" || runs[0].TaskID != info.ID {
		t.Fatalf("runs = %+v, want success after dead", runs)
	}

	r := c.chronos("requeue", info.ID)
	if r.code != exitFail || r.stderr != "chronos requeue: no dead task \""+info.ID+"\" in namespace \"chronos\"\n" {
		t.Fatalf("second requeue: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestDeadSaysWhenItShowsOnlyPartOfTheList(t *testing.T) {
	c := startCluster(t)
	client := chronos.NewClient(c.rdb)
	for range 3 {
		if _, err := client.Enqueue(context.Background(), doomed{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "three dead tasks", func() bool {
		var dead []struct{ ID string }
		c.okJSON(&dead, "dead")
		return len(dead) == 3
	})
	out := c.ok("dead", "-n", "2")
	if rows := strings.Count(out, " doomed "); rows != 2 || !strings.HasSuffix(out, "(2 of 3 dead tasks; -n shows more)\n") {
		t.Fatalf("dead -n 2 shows %d rows:\n%s", rows, out)
	}
	if out := c.ok("dead"); strings.Contains(out, "dead tasks;") {
		t.Fatalf("footer although nothing is left out:\n%s", out)
	}
}

// Deleting is final, so without -yes the command names the task and
// deletes nothing.
func TestDeleteRemovesADeadTaskOnlyWithYes(t *testing.T) {
	c := startCluster(t)
	info, err := chronos.NewClient(c.rdb).Enqueue(context.Background(), doomed{})
	must(t, err)
	var dead []struct {
		ID     string    `json:"id"`
		DiedAt time.Time `json:"died_at"`
	}
	eventually(t, "the task to die", func() bool {
		c.okJSON(&dead, "dead")
		return len(dead) == 1
	})
	what := "dead task " + info.ID + " (doomed, queue default, died " + dead[0].DiedAt.Format(time.RFC3339) + ")"
	r := c.chronos("delete", info.ID)
	want := "chronos delete: " + what + " not deleted: deleting is final, so add -yes (or requeue it: chronos requeue " + info.ID + ")\n"
	if r.code != exitFail || r.stderr != want || r.stdout != "" {
		t.Fatalf("delete without -yes: exit %d, stdout %q, stderr %q; want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
	if out := c.ok("delete", info.ID, "-yes"); out != "deleted "+what+"\n" {
		t.Fatalf("delete -yes printed %q", out)
	}
	c.okJSON(&dead, "dead")
	if len(dead) != 0 {
		t.Fatalf("dead after delete = %+v", dead)
	}
	r = c.chronos("delete", info.ID, "-yes")
	if r.code != exitFail || r.stderr != "chronos delete: no dead task \""+info.ID+"\" in namespace \"chronos\"\n" {
		t.Fatalf("second delete: exit %d, stderr %q", r.code, r.stderr)
	}
}

// "chronos runs" takes a schedule ID (the runs of the tasks it fired) as
// well as a task kind (all of that kind); anything else fails.
func TestRunsOfAScheduleOrAKind(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	type runView struct {
		TaskID     string `json:"task_id"`
		Kind       string `json:"kind"`
		ScheduleID string `json:"schedule_id"`
	}
	// The kind of a schedule's job is known before any task of it ran:
	// the answer is empty.
	var none []runView
	c.okJSON(&none, "runs", "report")
	if none == nil || len(none) != 0 {
		t.Fatalf("runs report before any run = %+v, want []", none)
	}
	c.ok("trigger", "reports.daily")
	c.ok("trigger", "health")
	var all []runView
	eventually(t, "both runs", func() bool {
		c.okJSON(&all, "runs", "report")
		return len(all) == 2
	})
	var daily []runView
	c.okJSON(&daily, "runs", "reports.daily")
	if len(daily) != 1 || daily[0].ScheduleID != "reports.daily" || daily[0].Kind != "report" {
		t.Fatalf("runs reports.daily = %+v, want its one run", daily)
	}
	if row := lineOf(t, c.ok("runs", "reports.daily"), daily[0].TaskID); !hasFields(row, daily[0].TaskID+" report success 1") {
		t.Fatalf("row %q", row)
	}
	c.okJSON(&none, "runs", "nightly")
	if none == nil || len(none) != 0 {
		t.Fatalf("runs nightly = %+v, want [] (it has not fired)", none)
	}
	var one []runView
	c.okJSON(&one, "runs", "report", "-kind", "-n", "1")
	if len(one) != 1 || one[0].TaskID != all[0].TaskID {
		t.Fatalf("runs report -kind -n 1 = %+v, want the newest of %+v", one, all)
	}
	r := c.chronos("runs", "reprot")
	want := "chronos runs: no schedule or task kind \"reprot\" in namespace \"chronos\" (kinds with run records: report)\n"
	if r.code != exitFail || r.stderr != want {
		t.Fatalf("runs reprot: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
}
