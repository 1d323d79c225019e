package trigger

import "strconv"

// Kind tells the two trigger families apart. Misfire policies are specific to
// a kind, so [ParsePolicy] needs it.
type Kind int

const (
	// KindCron is a trigger driven by a cron expression ([Cron]).
	KindCron Kind = iota + 1
	// KindSimple is a fixed-interval trigger with an optional repeat count
	// ([Simple]).
	KindSimple
)

// String returns "cron" or "simple".
func (k Kind) String() string {
	switch k {
	case KindCron:
		return "cron"
	case KindSimple:
		return "simple"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}
