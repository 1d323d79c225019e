// Package upgrade holds a test of a rolling deploy from the version before
// partitions, for real: it builds that version from git (commit
// PreviousVersion, the last before partitions) into a temporary tree, runs
// two of its processes (scheduler and server) on one private redis-server,
// replaces them one at a time with processes of this version (the test
// binary re-executing itself), and checks that every trigger second of a
// per-second cron schedule and of a one-second interval schedule ran
// exactly once across the deploy. Without the git object (a shallow
// clone) it skips, except in CI (CI set), where it fails. The package has
// no API.
package upgrade
