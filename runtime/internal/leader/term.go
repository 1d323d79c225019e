package leader

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Term is one tenure of leadership. Token is what a fenced script compares
// with the lease; Epoch is the strictly increasing number in the token.
type Term struct {
	// Token is the lease value "<epoch>:<instance>:<nonce>".
	Token string
	// Epoch is the fencing epoch of this term; later terms have larger ones.
	Epoch int64
	// Acquired is when the acquire script's reply arrived.
	Acquired time.Time
	// TrustedUntil is the start of the last successful acquire or renew plus
	// TTL minus the drift margin, on the monotonic clock when the elector
	// uses the real clock.
	TrustedUntil time.Time
}

// Trusted reports whether the holder of t may still act as leader at now.
// It is false for the zero Term. It is a local check only: writes to Redis
// must also pass the fence in their own script.
func (t Term) Trusted(now time.Time) bool {
	return t.Token != "" && now.Before(t.TrustedUntil)
}

// Instance returns the instance ID carried by the token.
func (t Term) Instance() string {
	_, inst, _, _ := parseToken(t.Token)
	return inst
}

func (t Term) String() string {
	if t.Token == "" {
		return "term(none)"
	}
	return fmt.Sprintf("term(epoch=%d token=%s)", t.Epoch, t.Token)
}

// parseToken splits "<epoch>:<instance>:<nonce>". Instance IDs may contain
// colons; the nonce never does.
func parseToken(tok string) (epoch int64, instance, nonce string, ok bool) {
	first := strings.IndexByte(tok, ':')
	last := strings.LastIndexByte(tok, ':')
	if first <= 0 || last <= first {
		return 0, "", "", false
	}
	e, err := strconv.ParseInt(tok[:first], 10, 64)
	if err != nil {
		return 0, "", "", false
	}
	return e, tok[first+1 : last], tok[last+1:], true
}
