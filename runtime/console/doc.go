// Package console is the operator web console of chronos: an http.Handler
// that shows one namespace in a browser and acts on it through the public
// API of package chronos, the Inspector.
//
// Its pages are the overview (the leader, the live scheduler instances, the
// health summary), the schedules (searchable, with pause and resume of a
// schedule or one job of a group, trigger now, backfill after a dry run,
// retire), one schedule in full (definition in force, next fire times,
// firing history, run records and a chart of their durations), the queues
// (depth, running, delayed, dead, rates; pause and resume), and the tasks
// and dead letters (search by kind and ID, payload and attempt history,
// requeue, delete). Every page has a stable URL and works without
// JavaScript; a small embedded script refreshes the live parts of an open
// page.
//
// Mount it under the service's own authentication, at Options.Prefix:
//
//	insp := chronos.NewInspector(rdb)
//	mux.Handle("/ops/chronos/", auth(console.New(insp, console.Options{Prefix: "/ops/chronos"})))
//
// or run it with the CLI, "chronos web", which listens on 127.0.0.1:8080.
//
// Every mutating request is a POST that must carry a CSRF token; the
// console can be read-only, and can authenticate requests with basic auth
// or a bearer token itself. docs/console.md in the repository describes the
// pages, the flags, authentication and the security model.
package console
