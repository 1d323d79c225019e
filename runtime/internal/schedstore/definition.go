package schedstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Definition is what the code declares about one schedule. The store keeps
// it opaque apart from validation: parsing Spec, Zone and Policy is the
// trigger engine's job.
type Definition struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"` // trigger kind: "cron", "simple", "interval"
	Spec     string `json:"spec"` // cron expression or encoded simple trigger
	Zone     string `json:"zone,omitempty"`
	Policy   string `json:"policy,omitempty"` // misfire policy name
	Isolated bool   `json:"isolated,omitempty"`
	Group    string `json:"group,omitempty"`
	Jobs     []Job  `json:"jobs"`
	Overlap  string `json:"overlap,omitempty"`
	// Source is "file:line" of the declaration, for operators. It is not
	// part of Hash, so moving code does not count as a change.
	Source string `json:"source,omitempty"`
	// LateAfter and FailingAfter are the schedule's health thresholds
	// (chronos.WithLateAfter, WithFailingAfter); zero means the default.
	// They tell operators when to worry and change nothing about firing,
	// so they are not part of Hash either: a release that only tunes them
	// is not a definition change, and an instance that declares other
	// thresholds is no conflict.
	LateAfter    time.Duration `json:"late_after,omitempty"`
	FailingAfter int           `json:"failing_after,omitempty"`
}

// Job is one task a firing enqueues. The payload is stored as given, so a
// leader can enqueue a job whose Go type its own binary does not have (a
// schedule added by a newer version during a rolling deploy).
type Job struct {
	Name    string            `json:"name"`
	Kind    string            `json:"kind"` // TaskArgs.Kind()
	Payload []byte            `json:"payload,omitempty"`
	Options map[string]string `json:"options,omitempty"` // queue, max retry, … as the scheduler encodes them
}

// ErrInvalidDefinition is returned (wrapped) for a definition that cannot be
// stored.
var ErrInvalidDefinition = errors.New("schedstore: invalid definition")

// Validate reports whether d can be stored.
func (d Definition) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: schedule %q: %s", ErrInvalidDefinition, d.ID, fmt.Sprintf(format, args...))
	}
	switch {
	case d.ID == "":
		return bad("empty ID")
	case strings.ContainsAny(d.ID, "{}"):
		return bad("ID must not contain braces (they are Redis Cluster hash tags)")
	case d.Kind == "":
		return bad("empty kind")
	case d.Spec == "":
		return bad("empty spec")
	case len(d.Jobs) == 0:
		return bad("no jobs")
	case d.LateAfter < 0 || d.FailingAfter < 0:
		return bad("negative health threshold")
	}
	seen := make(map[string]bool, len(d.Jobs))
	for _, j := range d.Jobs {
		if j.Name == "" || j.Kind == "" {
			return bad("job %q: empty name or kind", j.Name)
		}
		if seen[j.Name] {
			return bad("duplicate job %q", j.Name)
		}
		seen[j.Name] = true
	}
	return nil
}

// Hash returns a short stable digest of everything in d that affects
// firing (all fields but Source, LateAfter and FailingAfter). Two
// instances that declare the same hash agree; different hashes for one ID
// are a conflict the rolling-deploy rule resolves.
func (d Definition) Hash() string {
	d.Source, d.LateAfter, d.FailingAfter = "", 0, 0
	b, _ := json.Marshal(d) // a struct of strings, bools, slices and maps always marshals
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}
