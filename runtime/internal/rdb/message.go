package rdb

import "encoding/json"

// Message is a task as stored in Redis: in a queue stream (field "m"), in a
// delayed set (as the member) and in the dead-letter hash. It is encoded as
// JSON so that operators can read it with redis-cli and other languages can
// enqueue. Times are unix milliseconds; zero means unset.
//
// Encode and Decode (message_encode.go, message_decode.go) read and write
// this JSON by hand, exactly as encoding/json would with the struct tags
// below; the tags stay the reference the tests compare against.
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

// AddAttempt appends a to the history, dropping the oldest entries beyond
// MaxHistory.
func (m *Message) AddAttempt(a Attempt) {
	if len(m.History) >= MaxHistory {
		m.History = append(m.History[:0], m.History[len(m.History)-MaxHistory+1:]...)
	}
	m.History = append(m.History, a)
}
