package console_test

import (
	"net/http"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/console"
)

// The console mounted under /ops/chronos/ of a service's mux, behind the
// service's own authentication, recording the service's idea of the
// operator with every pause and request.
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	insp := chronos.NewInspector(rdb)

	staffOnly := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Staff-User") == "" { // set by the service's SSO proxy
				http.Error(w, "staff only", http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	c := console.New(insp, console.Options{
		Prefix: "/ops/chronos",
		Who:    func(r *http.Request) string { return r.Header.Get("X-Staff-User") },
	})
	mux := http.NewServeMux()
	mux.Handle("/ops/chronos/", staffOnly(c))
	_ = http.ListenAndServe // e.g. http.ListenAndServe("127.0.0.1:8080", mux)
}
