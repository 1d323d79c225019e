package reports

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/cron"
)

// Seoul is the zone the shop's business days are counted in. It is the
// zone of the directives below; the handlers use it to turn a trigger time
// into the business day a report covers.
const Seoul = "Asia/Seoul"

// Order is one order as the reports see it.
type Order struct {
	ID     string
	User   string
	Amount int64 // in won
	Placed time.Time
}

// Source is where the reports read the shop's data. A real service
// implements it over its database; [SampleSource] is a fixed data set for
// the example.
type Source interface {
	Users(ctx context.Context) ([]string, error)
	Orders(ctx context.Context, from, to time.Time) ([]Order, error)
}

// Reports holds the report handlers and what they need. Create one per
// process and pass it to RegisterChronosJobs.
type Reports struct {
	// Source is read by every report. It must be set.
	Source Source
	// Dir is where report files are written (default: the "chronos-reports"
	// directory under os.TempDir()).
	Dir string
}

// DailySalesArgs is the task argument of DailySales: empty, because the
// day a run covers follows from its trigger time.
type DailySalesArgs struct{}

// Kind returns the stable task kind of the daily sales report.
func (DailySalesArgs) Kind() string { return "reports.daily-sales" }

// SalesSummary is the result of one daily sales report, logged and stored
// with the run by the server.
type SalesSummary struct {
	Day    string `json:"day"` // business day covered, YYYY-MM-DD in Seoul
	Orders int    `json:"orders"`
	Total  int64  `json:"total"`
	File   string `json:"file"`
}

// DailySales writes the sales report of the business day before its
// trigger, so a retried or late run writes the same report (the trigger
// time, not the clock, decides the day).
//
//chronos:schedule cron="0 0 2 * * ?" tz=Asia/Seoul misfire=doNothing max-retry=3 timeout=10m
func (r *Reports) DailySales(ctx context.Context, t *chronos.Task[DailySalesArgs]) (SalesSummary, error) {
	loc, err := cron.LoadLocation(Seoul)
	if err != nil {
		return SalesSummary{}, err
	}
	at := t.TriggerTime
	if at.IsZero() { // enqueued by hand rather than by the schedule
		at = time.Now()
	}
	at = at.In(loc)
	to := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, loc)
	from := to.AddDate(0, 0, -1)
	orders, err := r.source().Orders(ctx, from, to)
	if err != nil {
		return SalesSummary{}, fmt.Errorf("daily sales %s: %w", from.Format(time.DateOnly), err)
	}
	sum := SalesSummary{Day: from.Format(time.DateOnly), Orders: len(orders)}
	rows := [][]string{{"id", "user", "amount", "placed"}}
	for _, o := range orders {
		sum.Total += o.Amount
		rows = append(rows, []string{o.ID, o.User, fmt.Sprint(o.Amount), o.Placed.In(loc).Format(time.RFC3339)})
	}
	sum.File, err = r.write("sales-"+sum.Day+".csv", rows)
	if err != nil {
		return SalesSummary{}, fmt.Errorf("daily sales %s: %w", sum.Day, err)
	}
	return sum, nil
}

// ExportResult is the result of one month-end export.
type ExportResult struct {
	Rows int    `json:"rows"`
	File string `json:"file"`
}

// ExportUsers exports every user at month end.
//
//chronos:schedule group=month-end-export id=export-users max-retry=5
func (r *Reports) ExportUsers(ctx context.Context) (ExportResult, error) {
	users, err := r.source().Users(ctx)
	if err != nil {
		return ExportResult{}, fmt.Errorf("export users: %w", err)
	}
	rows := [][]string{{"user"}}
	for _, u := range users {
		rows = append(rows, []string{u})
	}
	file, err := r.write("users.csv", rows)
	if err != nil {
		return ExportResult{}, fmt.Errorf("export users: %w", err)
	}
	return ExportResult{Rows: len(users), File: file}, nil
}

// ExportOrders exports every order of the last 31 days at month end.
//
//chronos:schedule group=month-end-export id=export-orders max-retry=5
func (r *Reports) ExportOrders(ctx context.Context) (ExportResult, error) {
	now := time.Now().UTC() // 31 days of 24 hours, whatever the local zone's DST
	orders, err := r.source().Orders(ctx, now.AddDate(0, 0, -31), now)
	if err != nil {
		return ExportResult{}, fmt.Errorf("export orders: %w", err)
	}
	rows := [][]string{{"id", "user", "amount", "placed"}}
	for _, o := range orders {
		rows = append(rows, []string{o.ID, o.User, fmt.Sprint(o.Amount), o.Placed.UTC().Format(time.RFC3339)})
	}
	file, err := r.write("orders.csv", rows)
	if err != nil {
		return ExportResult{}, fmt.Errorf("export orders: %w", err)
	}
	return ExportResult{Rows: len(orders), File: file}, nil
}

// errNoSource is returned by every report of a Reports without a Source.
var errNoSource = errors.New("reports: Reports.Source is nil")

func (r *Reports) source() Source {
	if r.Source == nil {
		return failingSource{}
	}
	return r.Source
}

type failingSource struct{}

func (failingSource) Users(context.Context) ([]string, error) { return nil, errNoSource }
func (failingSource) Orders(context.Context, time.Time, time.Time) ([]Order, error) {
	return nil, errNoSource
}

// write writes rows as CSV to name in r.Dir, through a temporary file, so
// that a reader never sees half a report and a retry replaces it whole.
func (r *Reports) write(name string, rows [][]string) (string, error) {
	dir := r.Dir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "chronos-reports")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		return "", err
	}
	w := csv.NewWriter(f)
	err = w.WriteAll(rows)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	path := filepath.Join(dir, name)
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return path, nil
}
