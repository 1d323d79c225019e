package console

import (
	"context"
	"fmt"

	chronos "github.com/chronos-go/chronos/runtime"
)

// InspectorHealth is the HealthSource of an Inspector: its ScheduleHealth
// (see chronos.Health for what each state means). It is the default of
// Options.Health; a wrapper around it (to cache, or to add states of the
// service's own) can start from it.
func InspectorHealth(insp *chronos.Inspector) HealthSource { return inspectorHealth{insp} }

type inspectorHealth struct{ insp *chronos.Inspector }

func (h inspectorHealth) ScheduleHealth(ctx context.Context, ids []string) (map[string]Health, error) {
	out := make(map[string]Health, len(ids))
	if len(ids) == 0 {
		return out, nil // without IDs the Inspector would read every schedule
	}
	hs, err := h.insp.ScheduleHealth(ctx, ids...)
	if err != nil {
		return nil, fmt.Errorf("console: schedule health: %w", err)
	}
	for id, sh := range hs {
		out[id] = Health{State: HealthState(sh.State), Reason: sh.Reason, Since: sh.Since}
	}
	return out, nil
}
