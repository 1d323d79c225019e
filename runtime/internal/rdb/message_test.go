package rdb

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// storedSeeds are messages as they sit in Redis: written by this version,
// by the versions before the hand-written codec (json.Marshal of Message),
// by hand or by other languages (other field order, white space, escapes,
// unknown fields, nulls), and broken ones.
var storedSeeds = []string{
	// As json.Marshal wrote them before the hand-written codec.
	`{"id":"01KB3V9C8S6Y2Q1M0F7H4J5N8R","kind":"greet","args":{"name":"ada"},"queue":"default","max_retry":25,"enqueued_at":1764600000000}`,
	`{"id":"01KB3V9C8S6Y2Q1M0F7H4J5N8R","kind":"report","args":{"day":"2026-11-30"},"queue":"critical","max_retry":3,"attempt":2,"timeout_ms":5000,"deadline":1764603600000,"enqueued_at":1764600000000,"schedule":"nightly","trigger":1764547200000,"dedup":"nightly:1764547200","overlap":"nightly:report","history":[{"at":1764600001000,"dur":12,"err":"boom"},{"at":1764600003000,"dur":7,"err":"panic: x\n\tgoroutine 1"}],"died_at":1764600009000,"reason":"chronos: skip retry"}`,
	`{"id":"x","kind":"k","args":null,"queue":"q","max_retry":0,"enqueued_at":0}`,
	`{"id":"\u003cb\u003e","kind":"a\u0026b","args":"\u003c","queue":"q\u2028","max_retry":1,"enqueued_at":1}`,
	// Written by hand or by another language.
	"{ \"kind\" : \"greet\" ,\n\t\"args\" : { \"name\" : \"ada\" } , \"id\":\"1\", \"queue\":\"default\", \"max_retry\": 25, \"enqueued_at\": 1764600000000 }",
	`{"ID":"a","Kind":"b","ARGS":[1, 2 ,3],"Queue":"c","MAX_RETRY":4}`,
	`{"id":"a","kind":"b","args":{"x":1},"extra":{"nested":[1,{"y":null}],"s":"\"\\"},"version":2,"flag":true}`,
	`{"id":null,"kind":null,"args":null,"max_retry":null,"history":null,"attempt":null}`,
	`{"id":"dup","id":"second","history":[{"at":1,"err":"a"}],"history":[{"at":2}]}`,
	`{"history":[{"at":1,"dur":2,"err":"a"},{"at":3}],"history":[{"dur":9}],"history":[{},{}]}`,
	`{"history":[]}`,
	`{"history":[null,{"at":1,"unknown":"x"}]}`,
	`{"id":"\ud83d\ude00 \ud800 \udc00x \u00e9 \\ \/ \b\f\n\r\t","kind":"\u212aind"}`,
	`{"\u212aind":"kelvin","ſchedule":"long s","id":"\u0069"}`,
	"{\"id\":\"bad utf8 \xff\xfe here\",\"kind\":\"\xc3\"}",
	`{"max_retry":-0,"timeout_ms":9223372036854775807,"deadline":-9223372036854775808}`,
	` null `,
	`{}`,
	// Not valid, or the wrong shape.
	`{"max_retry":1.0}`,
	`{"max_retry":1e2}`,
	`{"timeout_ms":9223372036854775808}`,
	`{"deadline":-9223372036854775809}`,
	`{"max_retry":"5"}`,
	`{"id":5}`,
	`{"history":{}}`,
	`{"history":[1]}`,
	`{"args":}`,
	`{"args":01}`,
	`{"id":"a",}`,
	`{"id":"a"} x`,
	`{"id":"a\u12"}`,
	`{"id":"a\x"}`,
	"{\"id\":\"tab\tinside\"}",
	`[]`,
	`"a string"`,
	`123`,
	`true`,
	``,
	`{`,
	`{"id"`,
	`{"id":"a"`,
	`nul`,
}

func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range storedSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := new(Message)
		wantErr := json.Unmarshal(b, want)
		got, err := Decode(b)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Decode(%q): error %v, encoding/json: %v", b, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q) =\n%#v\nencoding/json:\n%#v", b, got, want)
		}
	})
}

func TestDecodeStoredMessages(t *testing.T) {
	for _, s := range storedSeeds {
		want := new(Message)
		wantErr := json.Unmarshal([]byte(s), want)
		got, err := DecodeString(s)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("DecodeString(%q): error %v, encoding/json: %v", s, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeString(%q) =\n%#v\nencoding/json:\n%#v", s, got, want)
		}
	}
}

// The nesting limit is encoding/json's: 10,000 levels.
func TestDecodeNestingLimit(t *testing.T) {
	for _, depth := range []int{maxDepth - 1, maxDepth} {
		s := `{"args":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
		_, err := DecodeString(s)
		wantErr := json.Unmarshal([]byte(s), new(Message))
		if (err != nil) != (wantErr != nil) {
			t.Errorf("args nested %d deep: error %v, encoding/json: %v", depth, err, wantErr)
		}
	}
}

func FuzzEncodeMatchesEncodingJSON(f *testing.F) {
	f.Add("01KB3V9C8S6Y2Q1M0F7H4J5N8R", "greet", []byte(`{"name":"ada"}`), "default", 25, int64(1764600000000), "", "", "")
	f.Add("id", "k<>&", []byte(` [1, 2] `), "q\u2028\u2029", 0, int64(-1), "sched", "boom\n\x01\xff", "reason \"quoted\" \\")
	f.Add("", "", []byte(nil), "", -3, int64(math.MaxInt64), "", "", "")
	f.Add("a", "b", []byte(`{"a":`), "c", 1, int64(1), "", "", "")
	f.Add("a", "b", []byte(`"<html>"`), "c", 1, int64(1), "s", "e", "")
	f.Fuzz(func(t *testing.T, id, kind string, args []byte, queue string, maxRetry int, at int64, sched, errText, reason string) {
		m := &Message{
			ID: id, Kind: kind, Args: args, Queue: queue, MaxRetry: maxRetry, Attempt: maxRetry / 2,
			Timeout: at / 3, Deadline: at, EnqueuedAt: at, ScheduleID: sched, TriggerTime: at / 7,
			DedupKey: sched + id, Overlap: kind + sched, DiedAt: at % 1000, Reason: reason,
		}
		if errText != "" {
			m.History = []Attempt{{At: at, Duration: at % 77, Error: errText}, {At: 1, Error: reason}}
		}
		got, err := m.Encode()
		std, stdErr := json.Marshal(m)
		if len(args) == 0 {
			// json.Marshal writes nil args as null and fails on empty,
			// non-nil ones; Encode writes null for both.
			m.Args = nil
			std, stdErr = json.Marshal(m)
			m.Args = args
		}
		if (err != nil) != (stdErr != nil) {
			t.Fatalf("Encode: error %v, json.Marshal: %v (args %q)", err, stdErr, args)
		}
		if err != nil {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("Encode wrote invalid JSON: %s", got)
		}
		// The args are copied as they are; json.Marshal compacts and
		// HTML-escapes them. Where that changes nothing, the bytes are
		// identical.
		stdArgs, _ := json.Marshal(json.RawMessage(args))
		if len(args) == 0 || bytes.Equal(stdArgs, args) {
			if !bytes.Equal(got, std) {
				t.Fatalf("Encode:\n%s\njson.Marshal:\n%s", got, std)
			}
		}
		// Whatever the args, encoding/json reads back what it would have
		// read from json.Marshal's bytes, with the args as given.
		var fromGot, fromStd Message
		if err := json.Unmarshal(got, &fromGot); err != nil {
			t.Fatalf("encoding/json cannot read Encode's output %s: %v", got, err)
		}
		if err := json.Unmarshal(std, &fromStd); err != nil {
			t.Fatal(err)
		}
		if len(args) > 0 {
			fromStd.Args = json.RawMessage(bytes.Trim(args, " \t\r\n"))
		}
		if !reflect.DeepEqual(fromGot, fromStd) {
			t.Fatalf("encoding/json reads Encode's output as\n%#v\nand json.Marshal's as\n%#v", fromGot, fromStd)
		}
		// And Decode reads Encode's output as encoding/json does.
		dec, err := Decode(got)
		if err != nil {
			t.Fatalf("Decode(Encode(m)): %v", err)
		}
		if !reflect.DeepEqual(*dec, fromGot) {
			t.Fatalf("Decode(Encode(m)) =\n%#v\nencoding/json:\n%#v", dec, fromGot)
		}
		valid := true
		for _, s := range []string{id, kind, queue, sched, errText, reason, sched + id, kind + sched} {
			valid = valid && utf8.ValidString(s)
		}
		if valid && len(args) > 0 && bytes.Equal(bytes.Trim(args, " \t\r\n"), args) && !reflect.DeepEqual(dec, m) {
			t.Fatalf("Decode(Encode(m)) =\n%#v\nwant\n%#v", dec, m)
		}
	})
}

// Messages written by this version must stay readable by servers of the
// previous one during a rolling deploy, which decode with encoding/json:
// for args as json.Marshal writes them, the bytes are the same.
func TestEncodeIsWhatJSONMarshalWrote(t *testing.T) {
	m := &Message{
		ID: "01KB3V9C8S6Y2Q1M0F7H4J5N8R", Kind: "report", Args: json.RawMessage(`{"day":"2026-11-30","html":"\u003cb\u003e"}`),
		Queue: "critical", MaxRetry: 3, Attempt: 2, Timeout: 5000, Deadline: 1764603600000, EnqueuedAt: 1764600000000,
		ScheduleID: "nightly", TriggerTime: 1764547200000, DedupKey: "nightly:1764547200", Overlap: "nightly:report",
		History: []Attempt{{At: 1764600001000, Duration: 12, Error: "boom <&>"}}, DiedAt: 1764600009000, Reason: "dead",
	}
	got, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(m)
	if !bytes.Equal(got, want) {
		t.Errorf("Encode:\n%s\njson.Marshal:\n%s", got, want)
	}
}

func TestEncodeRejectsInvalidArgs(t *testing.T) {
	for _, args := range []string{`{`, `{"a":1}x`, `'a'`, `[1,]`} {
		if _, err := (&Message{ID: "x", Args: json.RawMessage(args)}).Encode(); err == nil {
			t.Errorf("Encode with args %q: no error", args)
		}
	}
}

var benchMsg = func() string {
	b, _ := json.Marshal(&Message{
		ID: "01KB3V9C8S6Y2Q1M0F7H4J5N8R", Kind: "bench", Queue: "default", MaxRetry: 25, EnqueuedAt: 1764600000000,
		Args: json.RawMessage(`{"seq":123456,"pad":"` + strings.Repeat("x", 105) + `"}`),
	})
	return string(b)
}()

func BenchmarkDecode(b *testing.B) {
	b.Run("hand-written", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeString(benchMsg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := json.Unmarshal([]byte(benchMsg), new(Message)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	m, _ := DecodeString(benchMsg)
	b.Run("hand-written", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Encode(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
