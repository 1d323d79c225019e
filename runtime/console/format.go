package console

import (
	"fmt"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
)

// Times on pages are UTC unless a column says otherwise: the same form the
// CLI prints and accepts, so a time can be copied from one to the other.

const utcLayout = "2006-01-02 15:04:05Z"

func fmtUTC(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(utcLayout)
}

func fmtISO(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// inZone is t in the named zone, or "" for UTC and unknown zones.
func inZone(t time.Time, zone string) string {
	if t.IsZero() || zone == "" || zone == "UTC" {
		return ""
	}
	loc, err := cron.LoadLocation(zone)
	if err != nil {
		return ""
	}
	return t.In(loc).Format("Mon 2006-01-02 15:04:05 MST")
}

// relative is t as "in 3m" or "5s ago" from the page's now.
func (c *Console) relative(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := t.Sub(c.now())
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d > 0:
		return "in " + roughly(d)
	}
	return roughly(-d) + " ago"
}

func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.String()
}
