package schedstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrDeclared is returned (wrapped) by Retire and Delete for a schedule a
// live instance still declares: it would be put back in force at once.
var ErrDeclared = errors.New("schedstore: schedule is declared by a live instance")

// operatorRetireScript retires a schedule for an operator.
//
//	KEYS[1] schedule hash, KEYS[2] changed index; ARGV[1] now (ms), ARGV[2] who,
//	ARGV[3] id
//
// Returns 1 when retired, 2 when it was retired already, 0 when it does
// not exist.
var operatorRetireScript = redis.NewScript(changedLua + `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], '` + FieldRetired + `', ARGV[1]) == 0 then return 2 end
redis.call('HSET', KEYS[1], '` + FieldRetiredBy + `', ARGV[2])
chronos_changed(KEYS[2], ARGV[1], ARGV[3])
return 1
`)

// Retire retires schedule id now, for operator who: the leader stops
// firing it and its state is kept until RetireGrace after its last
// declaration, as when no live instance declares it. It reports whether
// it was retired already. It refuses, with an error wrapping ErrDeclared
// that names them, while a live instance declares the schedule (a pause
// is what stops a schedule the code still declares).
func (s *Store) Retire(ctx context.Context, id, who string) (bool, error) {
	if err := s.checkUndeclared(ctx, id); err != nil {
		return false, fmt.Errorf("schedstore: retire %q: %w", id, err)
	}
	n, err := operatorRetireScript.Run(ctx, s.client, []string{s.keys.sched(id), s.keys.of(id).changed}, s.cfg.Now().UnixMilli(), who, id).Int()
	switch {
	case err != nil:
		return false, fmt.Errorf("schedstore: retire %q: %w", id, err)
	case n == 0:
		return false, fmt.Errorf("schedstore: retire %q: %w", id, ErrNotFound)
	}
	return n == 2, s.NoteChangeOf(ctx, id)
}

// Delete deletes schedule id with its state and history now. It refuses,
// with an error wrapping ErrDeclared, while a live instance declares it.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.checkUndeclared(ctx, id); err != nil {
		return fmt.Errorf("schedstore: delete %q: %w", id, err)
	}
	var del *redis.IntCmd
	pk := s.keys.of(id)
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error { // one partition: one slot
		del = p.Del(ctx, s.keys.sched(id))
		p.Del(ctx, s.keys.history(id))
		p.ZRem(ctx, pk.schedules, id)
		p.ZRem(ctx, pk.changed, id)
		p.Incr(ctx, pk.version)
		return nil
	})
	if err != nil {
		return fmt.Errorf("schedstore: delete %q: %w", id, err)
	}
	if del.Val() == 0 {
		return fmt.Errorf("schedstore: delete %q: %w", id, ErrNotFound)
	}
	return nil
}

// checkUndeclared returns an error wrapping ErrDeclared, naming the
// instances, if a live instance declares id.
func (s *Store) checkUndeclared(ctx context.Context, id string) error {
	live, err := s.liveIDs(ctx, s.cfg.Now())
	if err != nil {
		return err
	}
	cmds := make([]*redis.BoolCmd, len(live))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, in := range live {
			cmds[i] = p.HExists(ctx, s.keys.decl(in), id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var by []string
	for i, c := range cmds {
		if c.Val() {
			by = append(by, live[i])
		}
	}
	if len(by) > 0 {
		return fmt.Errorf("%w: %s", ErrDeclared, strings.Join(by, ", "))
	}
	return nil
}
