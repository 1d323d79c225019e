package console

import (
	"fmt"
	"net/http"
	"runtime/debug"
)

// contentSecurityPolicy allows the console's own script, style sheet and
// images, and nothing else: no inline script or style, no framing, no form
// posting to another origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secure sets the security headers on every response, and turns a panic
// into a 500 page without a stack (the stack goes to the log).
func (c *Console) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				c.log.Error("chronos console: handler panicked", "method", r.Method, "path", r.URL.Path,
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				c.renderError(w, r, &httpError{Status: http.StatusInternalServerError, Title: "Internal error",
					Detail: "The console failed to render this page. The details are in the service's log."})
			}
		}()
		next.ServeHTTP(w, r)
	})
}
