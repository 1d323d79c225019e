package console

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	chronos "github.com/chronos-go/chronos/runtime"
)

// An error page says what went wrong and what it concerned, not the call
// chain inside chronos that the error came through.
func TestErrorPagesLeaveOutTheCallChain(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 6379}, Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		err    error
		status int
		detail string
	}{
		{fmt.Errorf("console: schedule health: %w", fmt.Errorf("chronos: list schedules: %w", fmt.Errorf("schedstore: list: %w", refused))),
			http.StatusServiceUnavailable, "The console could not read or write Redis: dial tcp 10.0.0.5:6379: connection refused."},
		{fmt.Errorf("chronos: schedule %q: %w", "nightly", chronos.ErrScheduleNotFound),
			http.StatusNotFound, `schedule "nightly": schedule not found`},
		{fmt.Errorf("chronos: backfill %q: %w", "local", chronos.ErrIsolatedSchedule),
			http.StatusUnprocessableEntity, `backfill "local": not supported for an isolated schedule`},
		{fmt.Errorf("chronos: list queues: %w", fmt.Errorf("rdb: scan: %w", errors.New("NOPERM this user has no permissions to access the 'x' key"))),
			http.StatusServiceUnavailable, "may not do what this page needs: NOPERM this user has no permissions to access the 'x' key."},
		{fmt.Errorf("chronos: list runs: %w", errors.New("rdb: decode: unexpected end of JSON input")),
			http.StatusInternalServerError, "unexpected end of JSON input"},
	} {
		he := classify(tc.err)
		if he.Status != tc.status || !strings.Contains(he.Detail, tc.detail) {
			t.Errorf("classify(%q) = %d %q, want %d and %q", tc.err, he.Status, he.Detail, tc.status, tc.detail)
		}
		for _, chain := range []string{"chronos: ", "console: ", "schedstore: ", "rdb: ", "list schedules", "schedule health: ", "list: "} {
			if strings.Contains(he.Detail, chain) {
				t.Errorf("classify(%q).Detail = %q shows %q", tc.err, he.Detail, chain)
			}
		}
	}
}
