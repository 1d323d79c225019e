package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/errtext"
	chronos "github.com/chronos-go/chronos/runtime"
)

// httpError is an error with the status and the words of its page.
type httpError struct {
	Status int
	Title  string
	Detail string
	Back   string // a link back, such as the page the form was on
	Err    error  // the cause, logged for 5xx
}

func (e *httpError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Title, e.Detail, e.Err)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Title, e.Detail)
}

func (e *httpError) Unwrap() error { return e.Err }

func badRequestf(format string, args ...any) *httpError {
	return &httpError{Status: http.StatusBadRequest, Title: "Bad request", Detail: fmt.Sprintf(format, args...)}
}

func notFoundf(format string, args ...any) *httpError {
	return &httpError{Status: http.StatusNotFound, Title: "Not found", Detail: fmt.Sprintf(format, args...)}
}

// classify turns the error of a handler into the page to show: not-found
// errors of the Inspector are 404, an unreachable or slow Redis, or one
// that refuses the console's user a command or key (NOPERM), is 503,
// anything else is 500. No page shows a stack.
func classify(err error) *httpError {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he
	case errors.Is(err, chronos.ErrScheduleNotFound):
		return &httpError{Status: http.StatusNotFound, Title: "No such schedule", Detail: cleanMessage(err), Err: err}
	case errors.Is(err, chronos.ErrTaskNotFound):
		return &httpError{Status: http.StatusNotFound, Title: "No such task", Detail: cleanMessage(err), Err: err}
	case errors.Is(err, chronos.ErrScheduleDeclared):
		return &httpError{Status: http.StatusConflict, Title: "Still declared", Detail: cleanMessage(err) +
			". Pause it instead, or remove it from the code: the leader retires it by itself once no live instance declares it.", Err: err}
	case errors.Is(err, chronos.ErrBackfillTooLarge), errors.Is(err, chronos.ErrIsolatedSchedule):
		return &httpError{Status: http.StatusUnprocessableEntity, Title: "Not done", Detail: cleanMessage(err), Err: err}
	case strings.Contains(err.Error(), "NOPERM "):
		return &httpError{Status: http.StatusServiceUnavailable, Title: "Redis refused the console's user",
			Detail: "The console's Redis user may not do what this page needs: " + cleanMessage(err) +
				". Give that user the rules of chronos.ACLRules for this namespace (docs/security.md).",
			Err: err}
	case isOutage(err):
		return &httpError{Status: http.StatusServiceUnavailable, Title: "Redis is unavailable",
			Detail: "The console could not read or write Redis: " + cleanMessage(err) +
				". Nothing was changed by this request unless it says otherwise; the page works again as soon as Redis answers.",
			Err: err}
	}
	return &httpError{Status: http.StatusInternalServerError, Title: "Internal error", Detail: cleanMessage(err), Err: err}
}

// isOutage reports whether err says that Redis could not be reached in
// time, rather than that the request was wrong.
func isOutage(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	for _, target := range []error{context.DeadlineExceeded, io.EOF, io.ErrUnexpectedEOF, redis.ErrClosed,
		redis.ErrPoolTimeout, redis.ErrPoolExhausted, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	msg := err.Error()
	for _, s := range []string{"LOADING ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN ", "NOAUTH ", "WRONGPASS ", "ERR AUTH ",
		"connection refused", "i/o timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// cleanMessage is err's text without chronos's call chain: its cause, and
// the schedules or tasks the operations named, without package prefixes
// and bare operation names (errtext.Clean).
func cleanMessage(err error) string { return errtext.Clean(err.Error()) }

// renderError writes the error page of err.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, err error) {
	he := classify(err)
	if he.Status >= 500 {
		c.log.Warn("chronos console: request failed", "method", r.Method, "path", r.URL.Path, "status", he.Status, "err", err)
	}
	if r.Header.Get(liveHeader) != "" || strings.Contains(r.Header.Get("Accept"), "application/json") && !strings.Contains(r.Header.Get("Accept"), "text/html") {
		// The live-update script shows the title in its status line.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(he.Status)
		fmt.Fprintf(w, "%s: %s\n", he.Title, he.Detail)
		return
	}
	c.render(w, r, he.Status, "error", he.Title, he)
}
