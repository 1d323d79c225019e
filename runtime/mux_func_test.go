package chronos_test

import (
	"context"
	"encoding/json"
	"testing"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Nightly is the kind of a job that takes no arguments.
type Nightly struct{}

func (Nightly) Kind() string { return "nightly" }

func TestAddFuncRunsAFunctionThatTakesOnlyAContext(t *testing.T) {
	e := newEnv(t)
	ran := make(chan struct{}, 1)
	mux := chronos.NewMux()
	chronos.AddFunc[Nightly](mux, func(ctx context.Context) error {
		ran <- struct{}{}
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	e.enqueue(t, Nightly{})
	recv(t, ran, "function")
}

func TestAddFuncWithResultStoresTheResult(t *testing.T) {
	e := newEnv(t)
	mux := chronos.NewMux()
	chronos.AddFuncWithResult[Nightly](mux, func(ctx context.Context) (map[string]int, error) {
		return map[string]int{"rows": 3}, nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	e.enqueue(t, Nightly{})

	var runs []*chronos.RunRecord
	eventually(t, "run record", func() bool {
		var err error
		runs, err = e.insp.ListRuns(context.Background(), "nightly", 10)
		return err == nil && len(runs) == 1
	})
	var got map[string]int
	if err := json.Unmarshal(runs[0].Result, &got); err != nil || got["rows"] != 3 {
		t.Fatalf("result = %s (%v)", runs[0].Result, err)
	}
}
