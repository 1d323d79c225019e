package console

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// assetVersion changes whenever an embedded asset does; links to assets
// carry it, so browsers may cache them for long.
var assetVersion = func() string {
	h := sha256.New()
	_ = fs.WalkDir(staticFiles, "static", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := staticFiles.ReadFile(p)
			h.Write([]byte(p))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}()

// liveHeader marks the requests of the live-update script: they render the
// page as usual but consume no flash message.
const liveHeader = "X-Chronos-Live"

// page is what every template receives: the frame of the page and its Data.
type page struct {
	Title     string
	Section   string // the navigation entry to highlight
	CSRF      string
	ReadOnly  bool
	Flash     string
	Refresh   int64 // live-update interval in ms; 0: none
	Asset     string
	Now       time.Time
	Namespace string
	Data      any
}

// templates are the parsed pages by name; each includes the layout.
type templates struct{ byName map[string]*template.Template }

// sections maps a page to its navigation entry.
var sections = map[string]string{
	"overview": "overview", "schedules": "schedules", "schedule": "schedules", "backfill": "schedules",
	"confirm": "", "queues": "queues", "tasks": "tasks", "task": "tasks", "dead": "dead", "error": "",
}

func (c *Console) parseTemplates() *templates {
	funcs := template.FuncMap{
		"link":   func(elems ...string) string { return c.link(elems...) },
		"linkq":  linkQuery,
		"utc":    fmtUTC,
		"iso":    fmtISO,
		"inZone": inZone,
		"rel":    c.relative,
		"dur":    fmtDuration,
		"since":  roughly,
		"pretty": prettyJSON,
		"join":   strings.Join,
		"lines":  func(s string) []string { return strings.Split(s, "\n") },
		"firstLine": func(s string) string {
			l, _, _ := strings.Cut(s, "\n")
			return l
		},
		"list": func(s ...string) []string { return s },
		"dict": func(kv ...any) (map[string]any, error) {
			if len(kv)%2 != 0 {
				return nil, fmt.Errorf("dict: odd number of arguments")
			}
			m := make(map[string]any, len(kv)/2)
			for i := 0; i < len(kv); i += 2 {
				k, ok := kv[i].(string)
				if !ok {
					return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
				}
				m[k] = kv[i+1]
			}
			return m, nil
		},
		"lastError": func(h []chronos.AttemptRecord) string {
			if len(h) == 0 {
				return ""
			}
			return h[len(h)-1].Error
		},
		"plural": func(n int, one, many string) string {
			if n == 1 {
				return fmt.Sprintf("%d %s", n, one)
			}
			return fmt.Sprintf("%d %s", n, many)
		},
	}
	t := &templates{byName: map[string]*template.Template{}}
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".html")
		if base == "layout" || base == "partials" {
			continue
		}
		t.byName[base] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles,
			"templates/layout.html", "templates/partials.html", n))
	}
	return t
}

// render writes page name with data and status. The page is rendered in
// full before anything is written, so a template error is a clean 500.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	p := page{Title: title, Section: sections[name], ReadOnly: c.opts.ReadOnly, Asset: assetVersion,
		Now: c.now(), Namespace: c.opts.Namespace, Data: data}
	if !c.opts.ReadOnly {
		p.CSRF = c.csrfToken(w, r)
	}
	if c.opts.RefreshInterval > 0 && status == http.StatusOK {
		p.Refresh = c.opts.RefreshInterval.Milliseconds()
	}
	if r.Header.Get(liveHeader) == "" {
		p.Flash = c.takeFlash(w, r)
	}
	var buf bytes.Buffer
	if err := c.pages.byName[name].Execute(&buf, p); err != nil {
		c.log.Error("chronos console: render page", "page", name, "err", err)
		http.Error(w, "chronos console: internal error rendering the page; see the service's log", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// static serves the embedded style sheet and script.
func (c *Console) static(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("file")
	b, err := staticFiles.ReadFile("static/" + name)
	if err != nil || strings.Contains(name, "/") {
		return notFoundf("No asset %q.", name)
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".png":
		w.Header().Set("Content-Type", "image/png")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	if r.URL.Query().Get("v") == assetVersion {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	return nil
}

// redirect answers a successful action: back to the page the form was on
// (POST, redirect, GET), with a flash message that page shows once.
func (c *Console) redirect(w http.ResponseWriter, r *http.Request, to, flash string) error {
	c.setFlash(w, r, flash)
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

const flashCookie = "chronos_flash"

func (c *Console) setFlash(w http.ResponseWriter, r *http.Request, msg string) {
	v := base64.RawURLEncoding.EncodeToString([]byte(msg))
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: v + "." + c.csrf.sign("flash:"+v), Path: c.cookiePath(),
		MaxAge: 60, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

func (c *Console) takeFlash(w http.ResponseWriter, r *http.Request) string {
	ck, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Path: c.cookiePath(), MaxAge: -1, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	v, sig, ok := strings.Cut(ck.Value, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(c.csrf.sign("flash:"+v))) {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// linkQuery appends key/value pairs to a path as a query, leaving out
// empty values.
func linkQuery(p string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return p
	}
	return p + "?" + q.Encode()
}

func pathEscape(s string) string { return url.PathEscape(s) }

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}
