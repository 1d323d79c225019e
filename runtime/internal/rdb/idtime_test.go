package rdb

import (
	"testing"
	"time"
)

func TestIDTimeReadsTheTimeNewIDWrote(t *testing.T) {
	for _, at := range []time.Time{time.UnixMilli(0), time.UnixMilli(1796062228742), time.Date(2099, 12, 31, 23, 59, 59, 999e6, time.UTC)} {
		id := NewID(at)
		got, ok := IDTime(id)
		if !ok || !got.Equal(at.Truncate(time.Millisecond)) {
			t.Errorf("IDTime(NewID(%v) = %s) = %v, %v", at, id, got, ok)
		}
	}
}

func TestIDTimeRefusesForeignIDs(t *testing.T) {
	for _, id := range []string{"", "abc", "01M8PTDD629YQSSEH54S6ZHNP", "01M8PTDD629YQSSEH54S6ZHNPU", "order-42-aaaaaaaaaaaaaaaaaa"} {
		if _, ok := IDTime(id); ok {
			t.Errorf("IDTime(%q) reported a time", id)
		}
	}
}
