package console

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"strings"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Defaults of Options.
const (
	DefaultTimeout         = 5 * time.Second
	DefaultRefreshInterval = 2 * time.Second
	DefaultStaleAfter      = 10 * time.Second
)

// Options configure a Console. The zero value is a working configuration:
// mounted at the root, read-write, without authentication of its own (mount
// it behind the service's auth, or set BasicAuth or BearerToken).
type Options struct {
	// Prefix is the path the console is mounted under, such as "/chronos"
	// (default: the root). Every link, form and redirect starts with it.
	// Mount the console at Prefix+"/" without http.StripPrefix:
	//
	//	mux.Handle("/chronos/", console.New(insp, console.Options{Prefix: "/chronos"}))
	Prefix string

	// ReadOnly hides every action and refuses every mutating request with
	// 403 Forbidden.
	ReadOnly bool

	// BasicAuth, if its User is set, makes every request authenticate with
	// HTTP basic auth. BearerToken, if set, accepts "Authorization: Bearer
	// <token>". With both set either is accepted. Credentials are compared
	// in constant time and never logged.
	BasicAuth   BasicAuth
	BearerToken string

	// Who names the operator of a request, recorded with pauses, triggers
	// and backfills. Default: the basic-auth user, else "console". Set it
	// when the service authenticates requests before the console.
	Who func(*http.Request) string

	// CSRFKey signs the CSRF tokens of forms (at least 32 bytes). Default:
	// random for each Console, so forms rendered before a restart are
	// refused afterwards as stale. Give every replica the same key when
	// several serve the console behind one load balancer.
	CSRFKey []byte

	// Namespace is shown in the page header; it does not select anything
	// (the Inspector's namespace does).
	Namespace string

	// Timeout bounds the Redis work of one request (default 5s); a slower
	// Redis gets a 503 page.
	Timeout time.Duration

	// RefreshInterval is how often an open page refreshes its live parts
	// (default 2s; negative: never).
	RefreshInterval time.Duration

	// StaleAfter is how old a scheduler instance's last heartbeat may be
	// before the overview calls it stale (default 10s: two heartbeats at
	// the default LeaderTTL).
	StaleAfter time.Duration

	// Health computes schedule health. Default: the Inspector's
	// ScheduleHealth (InspectorHealth).
	Health HealthSource
	// Retire retires schedules. Default: the Inspector
	// (Inspector.RetireSchedule); set it only to wrap or replace it.
	Retire Retirer
	// LeaderSince tells when the leader's term began. Default: the
	// Inspector, if it implements LeaderSincer; otherwise "since" shows as
	// not recorded.
	LeaderSince LeaderSincer

	// Logger receives operator actions (who did what) and failed requests
	// (default slog.Default()). Credentials, cookies and tokens are never
	// logged.
	Logger *slog.Logger

	// Now returns the current time (default time.Now). Tests set it.
	Now func() time.Time
}

// BasicAuth is a user name and password for HTTP basic auth.
type BasicAuth struct {
	User, Password string
}

// Console is the operator web console of one chronos namespace: an
// http.Handler that renders server-side HTML pages over an Inspector.
type Console struct {
	insp    *chronos.Inspector
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	prefix  string
	csrf    csrfSigner
	xorigin *http.CrossOriginProtection
	pages   *templates
	handler http.Handler

	queueNames cached[[]string]
	runKinds   cached[[]string]
	deadCounts cached[map[string]int]
}

// New returns the console over insp. It does not contact Redis until a
// request arrives.
func New(insp *chronos.Inspector, opts Options) *Console {
	c := &Console{insp: insp, opts: opts, log: opts.Logger, now: opts.Now}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.opts.Timeout <= 0 {
		c.opts.Timeout = DefaultTimeout
	}
	if c.opts.RefreshInterval == 0 {
		c.opts.RefreshInterval = DefaultRefreshInterval
	}
	if c.opts.StaleAfter <= 0 {
		c.opts.StaleAfter = DefaultStaleAfter
	}
	if c.opts.Who == nil {
		c.opts.Who = defaultWho
	}
	if c.opts.Health == nil {
		c.opts.Health = InspectorHealth(insp)
	}
	if c.opts.Retire == nil {
		c.opts.Retire, _ = any(insp).(Retirer)
	}
	if c.opts.LeaderSince == nil {
		c.opts.LeaderSince, _ = any(insp).(LeaderSincer)
	}
	c.prefix = strings.TrimRight(opts.Prefix, "/")
	if c.prefix != "" && !strings.HasPrefix(c.prefix, "/") {
		c.prefix = "/" + c.prefix
	}
	key := opts.CSRFKey
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	c.csrf = csrfSigner{key: key}
	c.xorigin = http.NewCrossOriginProtection()
	c.pages = c.parseTemplates()
	c.queueNames.ttl, c.runKinds.ttl, c.deadCounts.ttl = 5*time.Second, 5*time.Second, 5*time.Second

	mux := http.NewServeMux()
	c.routes(mux)
	c.handler = c.secure(c.authenticate(mux))
	return c
}

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) { c.handler.ServeHTTP(w, r) }

// route is one path of the console with its handlers by method.
type route struct {
	path      string
	get, post handlerFunc
}

// handlerFunc handles a request and returns the error the console turns
// into an error page.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// routes registers every page and action. Paths are registered without a
// method so that a wrong method gets the console's 405 page, not the
// mux's plain-text one.
func (c *Console) routes(mux *http.ServeMux) {
	for _, rt := range []route{
		{path: "/{$}", get: c.overviewPage},
		{path: "/schedules", get: c.schedulesPage},
		{path: "/schedules/{id}", get: c.schedulePage},
		{path: "/schedules/{id}/pause", post: c.pauseSchedule},
		{path: "/schedules/{id}/resume", post: c.resumeSchedule},
		{path: "/schedules/{id}/trigger", post: c.triggerSchedule},
		{path: "/schedules/{id}/backfill", get: c.backfillPage, post: c.backfillSchedule},
		{path: "/schedules/{id}/retire", get: c.retirePage, post: c.retireSchedule},
		{path: "/queues", get: c.queuesPage},
		{path: "/queues/{queue}/pause", post: c.pauseQueue},
		{path: "/queues/{queue}/resume", post: c.resumeQueue},
		{path: "/tasks", get: c.tasksPage},
		{path: "/tasks/{id}", get: c.taskPage},
		{path: "/dead", get: c.deadPage},
		{path: "/dead/{id}/requeue", post: c.requeueDead},
		{path: "/dead/{id}/delete", get: c.deletePage, post: c.deleteDead},
		{path: "/static/{file}", get: c.static},
	} {
		mux.Handle(c.prefix+rt.path, c.dispatch(rt))
	}
	mux.Handle(c.prefix+"/", c.dispatch(route{get: func(w http.ResponseWriter, r *http.Request) error {
		return notFoundf("No page at %s.", r.URL.Path)
	}}))
	if c.prefix != "" {
		mux.Handle(c.prefix, http.RedirectHandler(c.prefix+"/", http.StatusMovedPermanently))
	}
}

// dispatch runs the handler of rt for the request's method inside the
// console's per-request budget, and renders any error as a page.
func (c *Console) dispatch(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var h handlerFunc
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h = rt.get
		case http.MethodPost:
			if rt.post != nil {
				h = c.mutating(rt.post)
			}
		}
		if h == nil {
			var allow []string
			if rt.get != nil {
				allow = append(allow, "GET", "HEAD")
			}
			if rt.post != nil {
				allow = append(allow, "POST")
			}
			w.Header().Set("Allow", strings.Join(allow, ", "))
			c.renderError(w, r, &httpError{Status: http.StatusMethodNotAllowed, Title: "Method not allowed",
				Detail: r.Method + " is not allowed here; this address accepts " + strings.Join(allow, ", ") + "."})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), c.opts.Timeout)
		defer cancel()
		if err := h(w, r.WithContext(ctx)); err != nil {
			c.renderError(w, r, err)
		}
	})
}

// mutating guards a POST handler: the console must not be read-only, and
// the request must come from the console's own pages (same origin, with a
// valid CSRF token).
func (c *Console) mutating(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if c.opts.ReadOnly {
			return &httpError{Status: http.StatusForbidden, Title: "Read-only console",
				Detail: "This console is read-only: it shows the state of the cluster but changes nothing."}
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := c.xorigin.Check(r); err != nil {
			return &httpError{Status: http.StatusForbidden, Title: "Cross-origin request refused",
				Detail: "The request came from another site. Use the console's own pages to change anything."}
		}
		if err := c.checkCSRF(r); err != nil {
			return err
		}
		return h(w, r)
	}
}

func defaultWho(r *http.Request) string {
	if u, _, ok := r.BasicAuth(); ok && u != "" {
		return u
	}
	return "console"
}

// link is the console path of elems, each escaped as one path segment.
func (c *Console) link(elems ...string) string {
	var b strings.Builder
	b.WriteString(c.prefix)
	for _, e := range elems {
		b.WriteByte('/')
		b.WriteString(pathEscape(e))
	}
	if len(elems) == 0 {
		b.WriteByte('/')
	}
	return b.String()
}
