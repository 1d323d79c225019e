package reports

import (
	"context"
	"fmt"
	"time"
)

// SampleSource is a fixed, in-memory data set for running the example
// without a database: a few users, and one order per user per hour.
type SampleSource struct{}

// Users returns three users.
func (SampleSource) Users(context.Context) ([]string, error) {
	return []string{"ada", "grace", "ken"}, nil
}

// Orders returns one order per user for every whole hour in [from, to).
func (s SampleSource) Orders(ctx context.Context, from, to time.Time) ([]Order, error) {
	users, _ := s.Users(ctx)
	var out []Order
	for h := from.Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
		if h.Before(from) {
			continue
		}
		for i, u := range users {
			out = append(out, Order{
				ID:     fmt.Sprintf("%d-%s", h.Unix(), u),
				User:   u,
				Amount: int64(1000 * (i + 1)),
				Placed: h,
			})
		}
	}
	return out, nil
}
