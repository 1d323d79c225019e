package main

import (
	"context"
	"fmt"
	"os"
)

// A bad command line exits with status 2 and the command's usage, before
// any connection to Redis is made. (Here both streams go to stdout.)
func Example_usageError() {
	code := run(context.Background(), []string{"backfill", "reports.daily", "-from", "last week"}, os.Stdout, os.Stdout)
	fmt.Println("exit status", code)
	// Output:
	// chronos backfill: -from "last week": want an RFC 3339 time such as 2026-12-01T06:00:00Z
	// usage: chronos backfill ID -from RFC3339 -to RFC3339 [-max N] [-dry-run] [-who NAME]
	// exit status 2
}
