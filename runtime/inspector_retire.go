package chronos

import (
	"context"
	"errors"
	"fmt"

	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// ErrScheduleDeclared is returned (wrapped, with the instances named) by
// RetireSchedule and DeleteSchedule for a schedule that a live instance
// still declares: it would be back in force at once. Pause it instead, or
// remove it from the code: once no live instance declares it, the leader
// retires it by itself within a heartbeat or two.
var ErrScheduleDeclared = errors.New("chronos: schedule is still declared by a live instance")

// RetireSchedule stops schedule id now, cluster-wide, as the leader does by
// itself once no live instance declares a schedule: it no longer fires,
// and its state is kept until SchedulerConfig's retirement grace (24 h
// after its last declaration) deletes it, so that an instance declaring
// it again resumes it from its last firing. who is recorded
// (ScheduleInfo.RetiredBy). Retiring a retired schedule does nothing. It
// returns an error wrapping ErrScheduleNotFound or ErrScheduleDeclared.
func (i *Inspector) RetireSchedule(ctx context.Context, id, who string) error {
	st, err := i.registry(ctx)
	if err != nil {
		return fmt.Errorf("chronos: retire %q: %w", id, err)
	}
	if _, err := st.Retire(ctx, id, who); err != nil {
		return fmt.Errorf("chronos: retire %q: %w", id, scheduleErr(err))
	}
	return nil
}

// DeleteSchedule deletes schedule id now with its state and history. It
// returns an error wrapping ErrScheduleNotFound or ErrScheduleDeclared.
func (i *Inspector) DeleteSchedule(ctx context.Context, id string) error {
	st, err := i.registry(ctx)
	if err != nil {
		return fmt.Errorf("chronos: delete %q: %w", id, err)
	}
	if err := st.Delete(ctx, id); err != nil {
		return fmt.Errorf("chronos: delete %q: %w", id, scheduleErr(err))
	}
	return nil
}

// scheduleErr adds the public sentinel to a store error.
func scheduleErr(err error) error {
	switch {
	case errors.Is(err, schedstore.ErrNotFound):
		return fmt.Errorf("%w: %w", ErrScheduleNotFound, err)
	case errors.Is(err, schedstore.ErrDeclared):
		return fmt.Errorf("%w: %w", ErrScheduleDeclared, err)
	}
	return err
}
