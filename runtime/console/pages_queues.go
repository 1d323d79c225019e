package console

import (
	"context"
	"net/http"
	"slices"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// rateWindow is the window of the queue page's rates.
const rateWindow = time.Minute

// queueRow is one queue on the queue page.
type queueRow struct {
	*chronos.QueueInfo
	OldestReady time.Time
	Dead        int
	Rate        chronos.QueueRate // runs finished in the last rateWindow
}

type queuesData struct {
	Rows   []queueRow
	Window time.Duration
}

// queues returns the names of the queues to show: those with keys in Redis
// (cached for a few seconds, since finding them scans the keyspace), those
// the schedules enqueue to, and the default queue.
func (c *Console) queues(ctx context.Context) ([]string, error) {
	names, err := c.queueNames.get(ctx, c.now(), c.insp.Queues)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{chronos.DefaultQueue: true}
	for _, n := range names {
		set[n] = true
	}
	scheds, err := c.insp.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range scheds {
		for _, j := range s.Jobs {
			set[j.Queue] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

func (c *Console) queuesPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	names, err := c.queues(ctx)
	if err != nil {
		return err
	}
	dead, err := c.deadCounts.get(ctx, c.now(), c.insp.DeadCountsByQueue)
	if err != nil {
		return err
	}
	rates, err := c.insp.QueueRates(ctx, rateWindow)
	if err != nil {
		return err
	}
	d := queuesData{Window: rateWindow}
	for _, q := range names {
		info, err := c.insp.QueueInfo(ctx, q)
		if err != nil {
			return err
		}
		row := queueRow{QueueInfo: info, Dead: dead[q], Rate: chronos.QueueRate{Queue: q, Window: rateWindow}}
		if row.OldestReady, err = c.insp.OldestReady(ctx, q); err != nil {
			return err
		}
		if rt := rates[q]; rt != nil {
			row.Rate = *rt
		}
		d.Rows = append(d.Rows, row)
	}
	c.render(w, r, http.StatusOK, "queues", "Queues", d)
	return nil
}

func (c *Console) pauseQueue(w http.ResponseWriter, r *http.Request) error {
	q := r.PathValue("queue")
	if err := c.insp.PauseQueue(r.Context(), q); err != nil {
		return err
	}
	c.queueNames.forget()
	who := c.opts.Who(r)
	c.log.Info("chronos console: queue paused", "queue", q, "who", who)
	return c.redirect(w, r, c.returnTo(r, c.link("queues")),
		"Paused queue "+q+": servers stop taking its tasks within a second. Enqueues are still accepted.")
}

func (c *Console) resumeQueue(w http.ResponseWriter, r *http.Request) error {
	q := r.PathValue("queue")
	if err := c.insp.ResumeQueue(r.Context(), q); err != nil {
		return err
	}
	who := c.opts.Who(r)
	c.log.Info("chronos console: queue resumed", "queue", q, "who", who)
	return c.redirect(w, r, c.returnTo(r, c.link("queues")), "Resumed queue "+q+".")
}
