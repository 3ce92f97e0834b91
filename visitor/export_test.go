package visitor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"net/netip"
)

// Sum is the visitor hash under key, by its definition: the first 8 bytes
// of HMAC-SHA256(key, addr as 16 bytes ‖ userAgent), big-endian. The tests
// check Hash against it.
func Sum(key *Key, addr netip.Addr, userAgent string) uint64 {
	a := addr.As16()
	if !addr.IsValid() {
		a = [16]byte{}
	}
	m := hmac.New(sha256.New, key[:])
	m.Write(a[:])
	_, _ = io.WriteString(m, userAgent) // a hash.Hash's Write never fails
	return binary.BigEndian.Uint64(m.Sum(nil))
}
