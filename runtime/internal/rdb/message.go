package rdb

import (
	"encoding/json"
	"fmt"
)

// Message is a task as stored in Redis: in a queue stream (field "m"), in a
// delayed set (as the member) and in the dead-letter hash. It is encoded as
// JSON so that operators can read it with redis-cli and other languages can
// enqueue. Times are unix milliseconds; zero means unset.
type Message struct {
	ID          string          `json:"id"`
	Kind        string          `json:"kind"`
	Args        json.RawMessage `json:"args"`
	Queue       string          `json:"queue"`
	MaxRetry    int             `json:"max_retry"`
	Attempt     int             `json:"attempt,omitempty"`    // runs already made; the next run is Attempt+1
	Timeout     int64           `json:"timeout_ms,omitempty"` // per-run timeout
	Deadline    int64           `json:"deadline,omitempty"`   // no run starts or continues after it
	EnqueuedAt  int64           `json:"enqueued_at"`
	ScheduleID  string          `json:"schedule,omitempty"`
	TriggerTime int64           `json:"trigger,omitempty"`
	DedupKey    string          `json:"dedup,omitempty"`
	Overlap     string          `json:"overlap,omitempty"` // overlap marker of a scheduled run (overlap.go)
	History     []Attempt       `json:"history,omitempty"`
	// Set on dead letters only.
	DiedAt int64  `json:"died_at,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Attempt records one run of a task that did not succeed.
type Attempt struct {
	At       int64  `json:"at"`  // start, unix ms
	Duration int64  `json:"dur"` // milliseconds
	Error    string `json:"err"`
}

// MaxHistory bounds the attempts kept in a message, so that a task retried
// many times stays small; the oldest are dropped first.
const MaxHistory = 20

// Encode returns the stored form of m.
func (m *Message) Encode() ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("rdb: encode task %s: %w", m.ID, err)
	}
	return b, nil
}

// Decode parses a stored message.
func Decode(b []byte) (*Message, error) {
	m := new(Message)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("rdb: decode task: %w", err)
	}
	return m, nil
}

// AddAttempt appends a to the history, dropping the oldest entries beyond
// MaxHistory.
func (m *Message) AddAttempt(a Attempt) {
	if len(m.History) >= MaxHistory {
		m.History = append(m.History[:0], m.History[len(m.History)-MaxHistory+1:]...)
	}
	m.History = append(m.History, a)
}
