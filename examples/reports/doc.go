// Package reports is a chronos example: the nightly and month-end reports of
// a shop, declared with //chronos: directives beside their handlers.
//
// DailySales runs at 02:00 Seoul time once across the whole cluster and
// returns a summary, which the server logs and stores with the run (see
// Inspector.ListRuns). If the cluster was down at 02:00 the report is
// skipped (misfire=doNothing): tomorrow's report covers a fresh day, and an
// operator can trigger a missed one by hand.
//
// The month-end export group fires both of its jobs from one trigger at
// 01:00 on the last day of every month; each job is its own task, retried
// and paused on its own.
//
// Run `go generate` in this directory after changing a directive; the
// generated chronos_gen.go is committed.
//
//chronos:group id=month-end-export cron="0 0 1 L * ?" tz=Asia/Seoul misfire=fireOnceNow queue=batch
package reports

//go:generate go tool chronosgen
