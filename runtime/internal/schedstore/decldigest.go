package schedstore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
)

// fieldDeclDigest is the field of an instance hash that holds the digest of
// the instance's declarations. Register writes it in the same transaction
// as the declarations, so a sweep can tell whether an instance's
// declarations changed from its instance hash alone, without reading them.
const fieldDeclDigest = "decl_digest"

// emptyDeclDigest is the digest of no declarations. Heartbeat writes it for
// an instance that declares nothing, so its digest says what it declares.
var emptyDeclDigest = declDigest(nil)

// declDigest returns a digest of a declaration set, schedule ID → encoded
// definition, whatever order it was declared in. Any change of an ID or of
// a definition (Source included) changes it.
func declDigest(decls map[string][]byte) string {
	ids := make([]string, 0, len(decls))
	for id := range decls {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	h := sha256.New()
	var buf []byte
	for _, id := range ids {
		// Length-prefixed, so no two sets encode alike.
		buf = binary.AppendUvarint(buf[:0], uint64(len(id)))
		buf = append(buf, id...)
		buf = binary.AppendUvarint(buf, uint64(len(decls[id])))
		buf = append(buf, decls[id]...)
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
