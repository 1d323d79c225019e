package rdb

import (
	"fmt"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Encode returns the stored form of m: the bytes json.Marshal(m) gives,
// except that the args are copied as they are rather than re-compacted
// (they are already JSON, from json.Marshal or from a stored message). It
// fails only if the args are not valid JSON.
func (m *Message) Encode() ([]byte, error) {
	if len(m.Args) > 0 && !validJSON(m.Args) {
		return nil, fmt.Errorf("rdb: encode task %s: args are not valid JSON", m.ID)
	}
	n := 100 + len(m.ID) + len(m.Kind) + len(m.Args) + len(m.Queue) + len(m.ScheduleID) + len(m.DedupKey) + len(m.Overlap) + len(m.Reason)
	for _, a := range m.History {
		n += 48 + len(a.Error)
	}
	b := make([]byte, 0, n)
	b = append(b, `{"id":`...)
	b = appendString(b, m.ID)
	b = append(b, `,"kind":`...)
	b = appendString(b, m.Kind)
	b = append(b, `,"args":`...)
	if len(m.Args) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, m.Args...)
	}
	b = append(b, `,"queue":`...)
	b = appendString(b, m.Queue)
	b = append(b, `,"max_retry":`...)
	b = strconv.AppendInt(b, int64(m.MaxRetry), 10)
	b = appendInt(b, `,"attempt":`, int64(m.Attempt))
	b = appendInt(b, `,"timeout_ms":`, m.Timeout)
	b = appendInt(b, `,"deadline":`, m.Deadline)
	b = append(b, `,"enqueued_at":`...)
	b = strconv.AppendInt(b, m.EnqueuedAt, 10)
	b = appendOptString(b, `,"schedule":`, m.ScheduleID)
	b = appendInt(b, `,"trigger":`, m.TriggerTime)
	b = appendOptString(b, `,"dedup":`, m.DedupKey)
	b = appendOptString(b, `,"overlap":`, m.Overlap)
	if len(m.History) > 0 {
		b = append(b, `,"history":[`...)
		for i, a := range m.History {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"at":`...)
			b = strconv.AppendInt(b, a.At, 10)
			b = append(b, `,"dur":`...)
			b = strconv.AppendInt(b, a.Duration, 10)
			b = append(b, `,"err":`...)
			b = appendString(b, a.Error)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendInt(b, `,"died_at":`, m.DiedAt)
	b = appendOptString(b, `,"reason":`, m.Reason)
	b = append(b, '}')
	return b, nil
}

// appendInt appends the member name:v unless v is zero (omitempty).
func appendInt(b []byte, name string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, name...), v, 10)
}

// appendOptString appends the member name:s unless s is empty (omitempty).
func appendOptString(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, name...), s)
}

// appendString appends s as a JSON string, escaped as json.Marshal escapes
// it: with the HTML characters <, > and & escaped, U+2028 and U+2029
// escaped, and invalid UTF-8 replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// htmlSafe holds the ASCII characters json.Marshal writes unescaped.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// validJSON reports whether b is one JSON value, with white space around
// it allowed, as json.Valid does.
func validJSON(b []byte) bool {
	d := decoder{s: unsafe.String(unsafe.SliceData(b), len(b))} // read only, not kept

	d.ws()
	if d.skip() != nil {
		return false
	}
	d.ws()
	return d.i == len(d.s)
}
