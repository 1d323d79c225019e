package rdb

import (
	"strings"
	"time"
)

// IDTime returns the creation time that NewID put in a task ID: its first
// ten characters hold the 48-bit millisecond timestamp. It reports false
// for IDs that NewID did not make (tasks enqueued by other tools may carry
// any ID). Listings use it to start a search where the task can first
// appear instead of at the beginning of a stream.
func IDTime(id string) (time.Time, bool) {
	if len(id) != 26 {
		return time.Time{}, false
	}
	var ms uint64
	for i := 0; i < len(id); i++ {
		v := strings.IndexByte(crockford, id[i])
		if v < 0 {
			return time.Time{}, false
		}
		if i < 10 {
			ms = ms<<5 | uint64(v)
		}
	}
	return time.UnixMilli(int64(ms)), true
}
