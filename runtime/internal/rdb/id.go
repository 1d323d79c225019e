package rdb

import (
	"encoding/binary"
	"math/rand/v2"
	"time"
)

// crockford is Crockford's base32 alphabet: no I, L, O or U, so IDs survive
// being read aloud or retyped.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns a new task ID: 26 characters of Crockford base32 holding a
// 48-bit millisecond timestamp and 80 random bits. IDs sort by creation
// time, which keeps dead-letter and run listings readable.
func NewID(now time.Time) string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[0:8], uint64(now.UnixMilli())<<16)
	binary.BigEndian.PutUint64(raw[8:16], rand.Uint64())
	r := rand.Uint32()
	raw[6], raw[7] = byte(r>>8), byte(r)
	var out [26]byte
	// 128 bits as 26 groups of 5 bits, most significant first (the top group has 3 bits).
	hi := binary.BigEndian.Uint64(raw[0:8])
	lo := binary.BigEndian.Uint64(raw[8:16])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
