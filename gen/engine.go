package gen

import (
	"errors"
	"fmt"

	"github.com/chronos-go/chronos/runtime/trigger"
)

// This file is the generator's view of the runtime's time engine. Every
// check here calls the runtime's own code, so go generate and the running
// scheduler cannot disagree about what a schedule means.

func triggerKindOf(k triggerKind) trigger.Kind {
	if k == cronTrigger {
		return trigger.KindCron
	}
	return trigger.KindSimple
}

// checkPolicy reports whether name is a misfire policy of trigger kind k.
// The error text lists the names valid for k and, for a near miss such as
// DoNothing, names the one meant.
func checkPolicy(name string, k triggerKind) error {
	_, err := trigger.ParsePolicy(name, triggerKindOf(k))
	if errors.Is(err, trigger.ErrUnknownPolicy) {
		if sug := suggest(name, policyNames(triggerKindOf(k))); sug != "" {
			return fmt.Errorf("%w; did you mean %s?", err, sug)
		}
	}
	return err
}

// policyNames are the names of the misfire policies of kind k, as the
// runtime lists them.
func policyNames(k trigger.Kind) []string {
	var names []string
	for _, p := range trigger.Policies(k) {
		names = append(names, p.String())
	}
	return names
}

// checkSimple validates a simple trigger the way the scheduler will.
func checkSimple(t Trigger) error {
	return trigger.Simple{
		Start:       t.Start,
		Interval:    t.Every,
		RepeatCount: t.Repeat,
		End:         t.End,
	}.Validate()
}

// repeatForever is the Repeat value of a simple trigger without end.
const repeatForever = trigger.RepeatForever
