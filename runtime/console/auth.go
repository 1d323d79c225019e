package console

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// authenticate admits a request that carries the configured basic-auth
// credentials or bearer token, and answers 401 to any other. Without
// either configured every request is admitted: the console then relies on
// the service that mounts it, or on listening on loopback only.
func (c *Console) authenticate(next http.Handler) http.Handler {
	basic, bearer := c.opts.BasicAuth.User != "", c.opts.BearerToken != ""
	if !basic && !bearer {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if basic {
			if u, p, ok := r.BasicAuth(); ok && equal(u, c.opts.BasicAuth.User) && equal(p, c.opts.BasicAuth.Password) {
				next.ServeHTTP(w, r)
				return
			}
		}
		if bearer {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(tok, c.opts.BearerToken) {
				next.ServeHTTP(w, r)
				return
			}
		}
		if basic {
			w.Header().Add("WWW-Authenticate", `Basic realm="chronos console", charset="UTF-8"`)
		}
		if bearer {
			w.Header().Add("WWW-Authenticate", `Bearer realm="chronos console"`)
		}
		c.renderError(w, r, &httpError{Status: http.StatusUnauthorized, Title: "Authentication required",
			Detail: "This console needs credentials."})
	})
}

// equal compares secrets in constant time, whatever their lengths.
func equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
