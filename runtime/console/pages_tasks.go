package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	chronos "github.com/chronos-go/chronos/runtime"
)

// pageSize is the number of tasks a listing shows at once.
const pageSize = 50

// listStates are the states the task listing shows; dead letters have
// their own page.
var listStates = []chronos.TaskState{chronos.TaskReady, chronos.TaskRunning, chronos.TaskDelayed}

type tasksData struct {
	Queues      []string
	Queue       string
	State       string
	States      []chronos.TaskState
	Kind        string
	Tasks       []*chronos.StoredTask
	Offset      int
	Next, Prev  string // links to the neighbouring pages; "" at an end
	QueueInfo   *chronos.QueueInfo
	StateCounts map[string]int64
}

func offsetParam(r *http.Request) (int, error) {
	s := r.URL.Query().Get("offset")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, badRequestf("Offset %q: want a number of tasks to skip.", s)
	}
	return n, nil
}

// pager sets the links to the previous and next pages of a listing.
func pager(base string, kv []string, offset, got int) (prev, next string) {
	if offset > 0 {
		prev = linkQuery(base, append(slices.Clone(kv), "offset", strconv.Itoa(max(offset-pageSize, 0)))...)
	}
	if got > pageSize {
		next = linkQuery(base, append(slices.Clone(kv), "offset", strconv.Itoa(offset+pageSize))...)
	}
	return prev, next
}

func (c *Console) tasksPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	q := r.URL.Query()
	if id := strings.TrimSpace(q.Get("id")); id != "" {
		http.Redirect(w, r, linkQuery(c.link("tasks", id), "kind", q.Get("kind")), http.StatusSeeOther)
		return nil
	}
	d := tasksData{Queue: q.Get("queue"), State: q.Get("state"), Kind: strings.TrimSpace(q.Get("kind")), States: listStates}
	if d.Queue == "" {
		d.Queue = chronos.DefaultQueue
	}
	if d.State == "" {
		d.State = string(chronos.TaskReady)
	}
	if !slices.Contains(listStates, chronos.TaskState(d.State)) {
		return badRequestf("Unknown state %q: want ready, running or delayed (dead letters are on the dead-letter page).", d.State)
	}
	var err error
	if d.Offset, err = offsetParam(r); err != nil {
		return err
	}
	if d.Queues, err = c.queues(ctx); err != nil {
		return err
	}
	if d.QueueInfo, err = c.insp.QueueInfo(ctx, d.Queue); err != nil {
		return err
	}
	d.StateCounts = map[string]int64{"ready": d.QueueInfo.Ready, "running": d.QueueInfo.Running, "delayed": d.QueueInfo.Delayed}
	d.Tasks, err = c.insp.ListTasks(ctx, d.Queue, chronos.TaskState(d.State), chronos.TaskFilter{Kind: d.Kind, Offset: d.Offset, Limit: pageSize + 1})
	if err != nil {
		return err
	}
	d.Prev, d.Next = pager(c.link("tasks"), []string{"queue", d.Queue, "state", d.State, "kind", d.Kind}, d.Offset, len(d.Tasks))
	if len(d.Tasks) > pageSize {
		d.Tasks = d.Tasks[:pageSize]
	}
	c.render(w, r, http.StatusOK, "tasks", "Tasks", d)
	return nil
}

// taskData is the task page: the task wherever it is, and its run records.
type taskData struct {
	ID       string
	Task     *chronos.StoredTask // nil: finished (only run records remain)
	Runs     []*chronos.RunRecord
	Finished bool
}

func (c *Console) taskPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, kind := r.PathValue("id"), strings.TrimSpace(r.URL.Query().Get("kind"))
	queues, err := c.queues(ctx)
	if err != nil {
		return err
	}
	d := taskData{ID: id}
	d.Task, err = c.insp.GetTask(ctx, id, queues...)
	if err != nil && !errors.Is(err, chronos.ErrTaskNotFound) {
		return err
	}
	if d.Task != nil {
		kind = d.Task.Kind
	}
	if d.Runs, err = c.insp.TaskRuns(ctx, id, kind); err != nil {
		return err
	}
	if d.Task == nil {
		if len(d.Runs) == 0 {
			return &httpError{Status: http.StatusNotFound, Title: "No such task", Back: c.link("tasks"),
				Detail: fmt.Sprintf("No task %q waits in any queue or in the dead letters, and no run record names it. "+
					"A finished task is found by its run records, which are kept for about ServerConfig.RunRetention runs of its kind.", id)}
		}
		d.Finished = true
	}
	c.render(w, r, http.StatusOK, "task", "Task "+id, d)
	return nil
}

type deadData struct {
	Queues     []string
	Queue      string
	Kind       string
	Tasks      []*chronos.DeadTask
	Total      int
	ByQueue    map[string]int
	Offset     int
	Next, Prev string
	Return     string
}

func (c *Console) deadPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	q := r.URL.Query()
	d := deadData{Queue: q.Get("queue"), Kind: strings.TrimSpace(q.Get("kind")), Return: r.URL.RequestURI()}
	var err error
	if d.Offset, err = offsetParam(r); err != nil {
		return err
	}
	if d.Queues, err = c.queues(ctx); err != nil {
		return err
	}
	if d.Total, err = c.insp.CountDead(ctx); err != nil {
		return err
	}
	if d.ByQueue, err = c.deadCounts.get(ctx, c.now(), c.insp.DeadCountsByQueue); err != nil {
		return err
	}
	d.Tasks, err = c.insp.SearchDead(ctx, d.Queue, chronos.TaskFilter{Kind: d.Kind, Offset: d.Offset, Limit: pageSize + 1})
	if err != nil {
		return err
	}
	d.Prev, d.Next = pager(c.link("dead"), []string{"queue", d.Queue, "kind", d.Kind}, d.Offset, len(d.Tasks))
	if len(d.Tasks) > pageSize {
		d.Tasks = d.Tasks[:pageSize]
	}
	c.render(w, r, http.StatusOK, "dead", "Dead letters", d)
	return nil
}

// goneDead is the error of an action on a dead letter that is not there:
// typically a stale page whose task was requeued or deleted meanwhile.
func (c *Console) goneDead(id string, err error) error {
	if errors.Is(err, chronos.ErrTaskNotFound) {
		return &httpError{Status: http.StatusNotFound, Title: "No such dead task", Back: c.link("dead"), Err: err,
			Detail: fmt.Sprintf("Task %q is not in the dead letters (any more): it was requeued or deleted meanwhile, or never died. Nothing was changed.", id)}
	}
	return err
}

func (c *Console) requeueDead(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	info, err := c.insp.RequeueDead(r.Context(), id)
	if err != nil {
		return c.goneDead(id, err)
	}
	c.deadCounts.forget()
	who := c.opts.Who(r)
	c.log.Info("chronos console: dead task requeued", "task", id, "kind", info.Kind, "queue", info.Queue, "who", who)
	return c.redirect(w, r, c.returnTo(r, c.link("dead")),
		fmt.Sprintf("Requeued %s (%s) to queue %s, ready at once with its retry count reset.", id, info.Kind, info.Queue))
}

func (c *Console) deletePage(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	t, err := c.insp.GetDead(r.Context(), id)
	if err != nil {
		return c.goneDead(id, err)
	}
	c.render(w, r, http.StatusOK, "confirm", "Delete "+id, confirmData{
		Heading: "Delete dead task " + id + "?",
		Message: "The task and its history are deleted for good; it will not run again.",
		Facts: [][2]string{{"Kind", t.Kind}, {"Queue", t.Queue}, {"Died", fmtUTC(t.DiedAt)},
			{"Reason", firstLineOf(t.Reason)}, {"Schedule", t.ScheduleID}},
		Action: c.link("dead", id, "delete"), Button: "Delete " + id, Cancel: c.link("tasks", id),
	})
	return nil
}

func (c *Console) deleteDead(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if r.PostFormValue("confirm") != "yes" {
		return badRequestf("Deleting needs the confirmation page: open %s.", c.link("dead", id, "delete"))
	}
	if err := c.insp.DeleteDead(r.Context(), id); err != nil {
		return c.goneDead(id, err)
	}
	c.deadCounts.forget()
	who := c.opts.Who(r)
	c.log.Info("chronos console: dead task deleted", "task", id, "who", who)
	return c.redirect(w, r, c.link("dead"), "Deleted dead task "+id+".")
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
