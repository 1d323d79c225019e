package rdb

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The envelope is read and written by hand rather than by encoding/json's
// reflection, which cost about 6 µs and 10 allocations per decode of a
// small task: more than the rest of a server's work on a no-op task. The
// code below accepts exactly what json.Unmarshal into a Message accepts and
// yields the same Message (FuzzDecodeMatchesEncodingJSON), so messages
// written by other languages, by hand with redis-cli, or by earlier
// versions read as before: field names match case-insensitively, unknown
// fields are skipped, null leaves a field unset, strings are unescaped and
// invalid UTF-8 becomes U+FFFD, and the args are kept as the exact bytes
// of their JSON value.

// Decode parses a stored message.
func Decode(b []byte) (*Message, error) { return DecodeString(string(b)) }

// DecodeString parses a stored message held in a string, as Redis replies
// deliver it. The message's strings share s's memory.
func DecodeString(s string) (*Message, error) {
	m := new(Message)
	d := decoder{s: s}
	if err := d.top(m); err != nil {
		return nil, fmt.Errorf("rdb: decode task: %w", err)
	}
	return m, nil
}

// errSyntax and errType are what Decode wraps: the input is not JSON, or
// is JSON of the wrong shape for a task.
var (
	errSyntax = errors.New("invalid JSON")
	errType   = errors.New("JSON value of the wrong type")
)

// maxDepth is encoding/json's nesting limit, which Decode keeps so that
// both accept the same inputs.
const maxDepth = 10000

// decoder reads one JSON document from s, from offset i.
type decoder struct {
	s     string
	i     int
	depth int
}

func (d *decoder) syntax() error {
	return fmt.Errorf("%w at offset %d", errSyntax, d.i)
}

func (d *decoder) typeErr(field string) error {
	return fmt.Errorf("%w for %q at offset %d", errType, field, d.i)
}

// ws skips white space.
func (d *decoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// top reads the whole document into m: an object, or null (which leaves m
// zero, as json.Unmarshal does), and nothing but white space after it.
func (d *decoder) top(m *Message) error {
	d.ws()
	if d.i >= len(d.s) {
		return d.syntax()
	}
	var err error
	switch d.s[d.i] {
	case '{':
		err = d.message(m)
	case 'n':
		err = d.literal("null")
	default:
		if err = d.skip(); err == nil {
			err = d.typeErr("")
		}
	}
	if err != nil {
		return err
	}
	d.ws()
	if d.i != len(d.s) {
		return d.syntax()
	}
	return nil
}

// object reads an object, calling field with each key (unescaped) once the
// decoder stands at the key's value; field must consume the value.
func (d *decoder) object(field func(key string) error) error {
	d.i++ // '{'
	if d.depth++; d.depth > maxDepth {
		return d.syntax()
	}
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		d.depth--
		return nil
	}
	for {
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return d.syntax()
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return d.syntax()
		}
		d.i++
		d.ws()
		if err := field(key); err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.s) {
			return d.syntax()
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.ws()
		case '}':
			d.i++
			d.depth--
			return nil
		default:
			return d.syntax()
		}
	}
}

// is reports whether key names the field name, as encoding/json matches
// them: exactly, or else under Unicode case folding.
func is(key, name string) bool {
	return key == name || strings.EqualFold(key, name)
}

func (d *decoder) message(m *Message) error {
	return d.object(func(key string) error {
		switch {
		case is(key, "id"):
			return d.stringField(&m.ID, key)
		case is(key, "kind"):
			return d.stringField(&m.Kind, key)
		case is(key, "args"):
			start := d.i
			if err := d.skip(); err != nil {
				return err
			}
			m.Args = append(m.Args[:0], d.s[start:d.i]...)
			return nil
		case is(key, "queue"):
			return d.stringField(&m.Queue, key)
		case is(key, "max_retry"):
			return d.intField(&m.MaxRetry, key)
		case is(key, "attempt"):
			return d.intField(&m.Attempt, key)
		case is(key, "timeout_ms"):
			return d.int64Field(&m.Timeout, key)
		case is(key, "deadline"):
			return d.int64Field(&m.Deadline, key)
		case is(key, "enqueued_at"):
			return d.int64Field(&m.EnqueuedAt, key)
		case is(key, "schedule"):
			return d.stringField(&m.ScheduleID, key)
		case is(key, "trigger"):
			return d.int64Field(&m.TriggerTime, key)
		case is(key, "dedup"):
			return d.stringField(&m.DedupKey, key)
		case is(key, "overlap"):
			return d.stringField(&m.Overlap, key)
		case is(key, "history"):
			return d.history(&m.History, key)
		case is(key, "died_at"):
			return d.int64Field(&m.DiedAt, key)
		case is(key, "reason"):
			return d.stringField(&m.Reason, key)
		}
		return d.skip()
	})
}

// history reads the attempts array into *h the way encoding/json decodes
// into a slice: elements are decoded into the existing ones (which only
// matters for a document with two "history" keys), the slice is cut to
// the array's length, and an empty array gives an empty, non-nil slice.
func (d *decoder) history(h *[]Attempt, key string) error {
	if d.i >= len(d.s) {
		return d.syntax()
	}
	switch d.s[d.i] {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		if err := d.skip(); err != nil {
			return err
		}
		return d.typeErr(key)
	}
	d.i++
	if d.depth++; d.depth > maxDepth {
		return d.syntax()
	}
	v := *h
	n := 0
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
	} else {
		for {
			if n >= cap(v) {
				v = append(v[:cap(v)], Attempt{})[:n]
			}
			if n >= len(v) {
				v = v[:n+1]
			}
			if err := d.attempt(&v[n], key); err != nil {
				return err
			}
			n++
			d.ws()
			if d.i >= len(d.s) {
				return d.syntax()
			}
			if d.s[d.i] == ']' {
				d.i++
				break
			}
			if d.s[d.i] != ',' {
				return d.syntax()
			}
			d.i++
			d.ws()
		}
	}
	d.depth--
	if n < len(v) {
		v = v[:n]
	}
	if n == 0 {
		v = []Attempt{}
	}
	*h = v
	return nil
}

func (d *decoder) attempt(a *Attempt, key string) error {
	if d.i >= len(d.s) {
		return d.syntax()
	}
	switch d.s[d.i] {
	case 'n':
		return d.literal("null")
	case '{':
	default:
		if err := d.skip(); err != nil {
			return err
		}
		return d.typeErr(key)
	}
	return d.object(func(k string) error {
		switch {
		case is(k, "at"):
			return d.int64Field(&a.At, k)
		case is(k, "dur"):
			return d.int64Field(&a.Duration, k)
		case is(k, "err"):
			return d.stringField(&a.Error, k)
		}
		return d.skip()
	})
}

// stringField reads a string into *p; null leaves *p as it is.
func (d *decoder) stringField(p *string, key string) error {
	if d.i >= len(d.s) {
		return d.syntax()
	}
	switch d.s[d.i] {
	case '"':
		s, err := d.str()
		if err != nil {
			return err
		}
		*p = s
		return nil
	case 'n':
		return d.literal("null")
	}
	if err := d.skip(); err != nil {
		return err
	}
	return d.typeErr(key)
}

func (d *decoder) intField(p *int, key string) error {
	var n int64
	set, err := d.integer(&n, key)
	if set && int64(int(n)) != n {
		return d.typeErr(key)
	}
	if set {
		*p = int(n)
	}
	return err
}

func (d *decoder) int64Field(p *int64, key string) error {
	var n int64
	set, err := d.integer(&n, key)
	if set {
		*p = n
	}
	return err
}

// integer reads an integer that fits in an int64 into *n and reports
// whether it did; null leaves *n alone. Any other value is an error, as is
// a number with a fraction or exponent (json.Unmarshal does not put 1.0
// into an int either).
func (d *decoder) integer(n *int64, key string) (bool, error) {
	if d.i >= len(d.s) {
		return false, d.syntax()
	}
	c := d.s[d.i]
	if c == 'n' {
		return false, d.literal("null")
	}
	if c != '-' && (c < '0' || c > '9') {
		if err := d.skip(); err != nil {
			return false, err
		}
		return false, d.typeErr(key)
	}
	start := d.i
	if err := d.number(); err != nil {
		return false, err
	}
	t := d.s[start:d.i]
	neg := t[0] == '-'
	if neg {
		t = t[1:]
	}
	var u uint64
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < '0' || c > '9' { // '.', 'e' or 'E'
			return false, d.typeErr(key)
		}
		if u > (1<<63)/10 {
			return false, d.typeErr(key)
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return false, d.typeErr(key)
		}
	}
	if !neg && u > 1<<63-1 {
		return false, d.typeErr(key)
	}
	if neg {
		*n = -int64(u) // u == 1<<63 wraps to the smallest int64, as wanted
	} else {
		*n = int64(u)
	}
	return true, nil
}

// skip reads any JSON value, checking its syntax.
func (d *decoder) skip() error {
	if d.i >= len(d.s) {
		return d.syntax()
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object(func(string) error { return d.skip() })
	case c == '[':
		d.i++
		if d.depth++; d.depth > maxDepth {
			return d.syntax()
		}
		d.ws()
		if d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			d.depth--
			return nil
		}
		for {
			if err := d.skip(); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.s) {
				return d.syntax()
			}
			switch d.s[d.i] {
			case ',':
				d.i++
				d.ws()
			case ']':
				d.i++
				d.depth--
				return nil
			default:
				return d.syntax()
			}
		}
	case c == '"':
		return d.skipString()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return d.number()
	}
	return d.syntax()
}

func (d *decoder) literal(lit string) error {
	if !strings.HasPrefix(d.s[d.i:], lit) {
		return d.syntax()
	}
	d.i += len(lit)
	return nil
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) number() error {
	s, i := d.s, d.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		d.i = i
		return d.syntax()
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			d.i = i
			return d.syntax()
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			d.i = i
			return d.syntax()
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	d.i = i
	return nil
}

// str reads a string and returns its unescaped value: a substring of the
// input when it has no escapes and is valid UTF-8.
func (d *decoder) str() (string, error) {
	s := d.s
	start := d.i + 1
	for i := start; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			d.i = i + 1
			return s[start:i], nil
		case c == '\\':
			return d.unescape(start, i)
		case c < ' ':
			d.i = i
			return "", d.syntax()
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return d.unescape(start, i)
			}
			i += size
		}
	}
	d.i = len(s)
	return "", d.syntax()
}

// unescape reads the rest of the string that starts at start, its plain
// prefix ending at i, as encoding/json unquotes: escapes resolved, a lone
// or invalid surrogate and each byte of invalid UTF-8 replaced by U+FFFD.
func (d *decoder) unescape(start, i int) (string, error) {
	s := d.s
	b := make([]byte, 0, i-start+16)
	b = append(b, s[start:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			d.i = i + 1
			return string(b), nil
		case c < ' ':
			d.i = i
			return "", d.syntax()
		case c == '\\':
			if i+1 >= len(s) {
				d.i = i
				return "", d.syntax()
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
				i += 2
			case 'b':
				b = append(b, '\b')
				i += 2
			case 'f':
				b = append(b, '\f')
				i += 2
			case 'n':
				b = append(b, '\n')
				i += 2
			case 'r':
				b = append(b, '\r')
				i += 2
			case 't':
				b = append(b, '\t')
				i += 2
			case 'u':
				r := hex4(s[i:])
				if r < 0 {
					d.i = i
					return "", d.syntax()
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if dec := utf16.DecodeRune(r, hex4(s[i:])); dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						i += 6
						break
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				d.i = i
				return "", d.syntax()
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r) // RuneError for invalid bytes
			i += size
		}
	}
	d.i = len(s)
	return "", d.syntax()
}

// skipString reads a string without keeping it.
func (d *decoder) skipString() error {
	s := d.s
	for i := d.i + 1; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			d.i = i + 1
			return nil
		case c < ' ':
			d.i = i
			return d.syntax()
		case c == '\\':
			if i+1 >= len(s) {
				d.i = i
				return d.syntax()
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(s[i:]) < 0 {
					d.i = i
					return d.syntax()
				}
				i += 6
			default:
				d.i = i
				return d.syntax()
			}
		default:
			i++
		}
	}
	d.i = len(s)
	return d.syntax()
}

// hex4 returns the code unit of the escape \uXXXX at the start of s, or -1.
func hex4(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range []byte(s[2:6]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
