package trigger

import (
	"fmt"
	"strconv"
	"strings"
)

// Policy is a Quartz misfire instruction: what to do when a trigger's next
// fire time is more than the misfire threshold in the past. The names are
// Quartz's MISFIRE_INSTRUCTION_* constants in lowerCamel, exactly as
// directives write them (misfire=doNothing). See docs/misfire.md.
//
// The zero value is PolicySmart, the default for both kinds.
type Policy int

const (
	// PolicySmart ("smartPolicy") is the default. For cron triggers it is
	// fireOnceNow. For simple triggers it depends on RepeatCount: 0 →
	// fireNow, -1 → rescheduleNextWithRemainingCount, otherwise
	// rescheduleNowWithExistingRepeatCount.
	PolicySmart Policy = iota
	// PolicyIgnoreMisfires ("ignoreMisfires") never counts a fire as
	// misfired: every missed slot is replayed, oldest first, up to
	// Catchup.MaxFires.
	PolicyIgnoreMisfires
	// PolicyFireOnceNow ("fireOnceNow", cron) runs once now for all missed
	// slots, then continues with the first slot after now.
	PolicyFireOnceNow
	// PolicyDoNothing ("doNothing", cron) skips the missed slots and waits
	// for the first slot after now.
	PolicyDoNothing
	// PolicyFireNow ("fireNow", simple) runs a one-shot trigger now. With a
	// RepeatCount other than 0 Quartz turns it into
	// rescheduleNowWithRemainingRepeatCount.
	PolicyFireNow
	// PolicyRescheduleNowWithExistingRepeatCount
	// ("rescheduleNowWithExistingRepeatCount", simple) restarts the trigger
	// now with the repeats it had not fired yet; missed slots are not
	// counted, so the trigger ends later than planned.
	PolicyRescheduleNowWithExistingRepeatCount
	// PolicyRescheduleNowWithRemainingRepeatCount
	// ("rescheduleNowWithRemainingRepeatCount", simple) restarts the trigger
	// now and counts the missed slots as used, so the total number of runs
	// stays at most RepeatCount+1.
	PolicyRescheduleNowWithRemainingRepeatCount
	// PolicyRescheduleNextWithExistingCount
	// ("rescheduleNextWithExistingCount", simple) skips to the first slot
	// after now on the original grid. The last slot does not move, so the
	// missed runs are lost; a one-shot trigger is lost entirely.
	PolicyRescheduleNextWithExistingCount
	// PolicyRescheduleNextWithRemainingCount
	// ("rescheduleNextWithRemainingCount", simple) skips to the first slot
	// after now on the original grid and counts the missed slots as
	// triggered.
	PolicyRescheduleNextWithRemainingCount

	numPolicies = iota
)

var policyNames = [numPolicies]string{
	PolicySmart:          "smartPolicy",
	PolicyIgnoreMisfires: "ignoreMisfires",
	PolicyFireOnceNow:    "fireOnceNow",
	PolicyDoNothing:      "doNothing",
	PolicyFireNow:        "fireNow",
	PolicyRescheduleNowWithExistingRepeatCount:  "rescheduleNowWithExistingRepeatCount",
	PolicyRescheduleNowWithRemainingRepeatCount: "rescheduleNowWithRemainingRepeatCount",
	PolicyRescheduleNextWithExistingCount:       "rescheduleNextWithExistingCount",
	PolicyRescheduleNextWithRemainingCount:      "rescheduleNextWithRemainingCount",
}

// String returns the policy's directive name, for example "doNothing".
func (p Policy) String() string {
	if p >= 0 && p < numPolicies {
		return policyNames[p]
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// AppliesTo reports whether p is a valid policy for triggers of kind k.
// smartPolicy and ignoreMisfires apply to both kinds.
func (p Policy) AppliesTo(k Kind) bool {
	switch p {
	case PolicySmart, PolicyIgnoreMisfires:
		return k == KindCron || k == KindSimple
	case PolicyFireOnceNow, PolicyDoNothing:
		return k == KindCron
	case PolicyFireNow, PolicyRescheduleNowWithExistingRepeatCount, PolicyRescheduleNowWithRemainingRepeatCount,
		PolicyRescheduleNextWithExistingCount, PolicyRescheduleNextWithRemainingCount:
		return k == KindSimple
	}
	return false
}

// Policies returns the policies valid for kind k, in the order the
// documentation lists them.
func Policies(k Kind) []Policy {
	var ps []Policy
	for _, p := range [...]Policy{
		PolicyIgnoreMisfires, PolicySmart, PolicyFireOnceNow, PolicyDoNothing, PolicyFireNow,
		PolicyRescheduleNowWithExistingRepeatCount, PolicyRescheduleNowWithRemainingRepeatCount,
		PolicyRescheduleNextWithExistingCount, PolicyRescheduleNextWithRemainingCount,
	} {
		if p.AppliesTo(k) {
			ps = append(ps, p)
		}
	}
	return ps
}

// ParsePolicy returns the policy named name for a trigger of kind k. The
// empty name is smartPolicy. A name of the other kind's policy wraps
// [ErrPolicyKind], any other unknown name [ErrUnknownPolicy]; both messages
// list the names valid for k, so the generator can show them as they are.
func ParsePolicy(name string, k Kind) (Policy, error) {
	if k != KindCron && k != KindSimple {
		return 0, fmt.Errorf("misfire policy %q: unknown trigger kind %v", name, k)
	}
	if name == "" {
		return PolicySmart, nil
	}
	for p, n := range policyNames {
		if n != name {
			continue
		}
		if p := Policy(p); p.AppliesTo(k) {
			return p, nil
		}
		return 0, &detailError{
			fmt.Sprintf("misfire policy %s applies to %v triggers; %v triggers accept %s", name, other(k), k, validNames(k)),
			ErrPolicyKind,
		}
	}
	return 0, &detailError{
		fmt.Sprintf("unknown misfire policy %q; %v triggers accept %s", name, k, validNames(k)),
		ErrUnknownPolicy,
	}
}

func other(k Kind) Kind {
	if k == KindCron {
		return KindSimple
	}
	return KindCron
}

func validNames(k Kind) string {
	var names []string
	for _, p := range Policies(k) {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}
