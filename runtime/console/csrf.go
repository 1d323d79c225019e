package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// CSRF protection is a signed double-submit cookie: the first page a
// browser gets sets a random cookie (HttpOnly, SameSite=Strict), and every
// form carries the HMAC of that cookie under the console's key. A mutating
// request must carry both, and the token must be the cookie's signature.
// Another site can neither read the cookie nor compute the token; a form
// rendered before the key changed (a restart without Options.CSRFKey) is
// refused as stale. http.CrossOriginProtection runs first, as a second,
// independent line.

const (
	csrfCookie = "chronos_csrf"
	csrfField  = "csrf_token"
	csrfHeader = "X-CSRF-Token"
)

type csrfSigner struct{ key []byte }

func (s csrfSigner) sign(secret string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("chronos console csrf\x00"))
	m.Write([]byte(secret))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// csrfToken returns the token for the forms of the page being rendered,
// setting the cookie first if the browser has none.
func (c *Console) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(csrfCookie); err == nil && len(ck.Value) >= 32 {
		return c.csrf.sign(ck.Value)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: secret, Path: c.cookiePath(), HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
	// Later reads in this request (a page that renders several forms) see it.
	r.AddCookie(&http.Cookie{Name: csrfCookie, Value: secret})
	return c.csrf.sign(secret)
}

func (c *Console) cookiePath() string {
	if c.prefix == "" {
		return "/"
	}
	return c.prefix + "/"
}

// checkCSRF refuses a mutating request without a valid token.
func (c *Console) checkCSRF(r *http.Request) error {
	tok := r.Header.Get(csrfHeader)
	if tok == "" {
		tok = r.PostFormValue(csrfField)
	}
	if tok == "" {
		return &httpError{Status: http.StatusForbidden, Title: "Missing CSRF token",
			Detail: "The request carries no CSRF token, so it was refused. Use the forms of the console's pages."}
	}
	ck, err := r.Cookie(csrfCookie)
	if err != nil || !hmac.Equal([]byte(tok), []byte(c.csrf.sign(ck.Value))) {
		return &httpError{Status: http.StatusForbidden, Title: "Stale form",
			Detail: "This form is stale: the console restarted or your session cookie expired since the page was loaded. Nothing was changed. Reload the page and try again."}
	}
	return nil
}
