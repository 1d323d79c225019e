package schedstore

import (
	"strings"
	"time"
)

// Declarer identifies the instance whose declaration of a schedule is in
// force, and ranks declarations against each other.
//
// The rolling-deploy rule: among the live instances that declare a schedule
// ID, the definition of the one with the highest rank is in force, where
// rank orders by Version (natural order: "v1.10" > "v1.9", empty lowest),
// then by Started (later wins), then by InstanceID. So a newer build's
// definition takes over as soon as its first instance registers; an old
// instance restarting in the middle of the deploy does not take it back;
// and a rollback takes effect once the newer instances are gone (they stop
// heartbeating and Sweep hands the schedule to the best remaining one).
type Declarer struct {
	InstanceID string
	Version    string
	Started    time.Time
}

// Outranks reports whether d's declaration beats o's.
func (d Declarer) Outranks(o Declarer) bool {
	if c := compareVersions(d.Version, o.Version); c != 0 {
		return c > 0
	}
	if a, b := ms(d.Started), ms(o.Started); a != b {
		return a > b // at the store's resolution, so ranks agree after a round trip
	}
	return d.InstanceID > o.InstanceID
}

// same reports whether d and o are the same declaration at the store's
// millisecond resolution.
func (d Declarer) same(o Declarer) bool {
	return d.InstanceID == o.InstanceID && d.Version == o.Version && ms(d.Started) == ms(o.Started)
}

// compareVersions compares a and b in natural order: runs of digits compare
// as numbers, everything else byte by byte.
func compareVersions(a, b string) int {
	for a != "" && b != "" {
		ra, restA := chunk(a)
		rb, restB := chunk(b)
		if c := compareChunk(ra, rb); c != 0 {
			return c
		}
		a, b = restA, restB
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// chunk splits off the leading run of digits or of non-digits.
func chunk(s string) (string, string) {
	d := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == d {
		i++
	}
	return s[:i], s[i:]
}

func compareChunk(a, b string) int {
	if isDigit(a[0]) && isDigit(b[0]) {
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}
