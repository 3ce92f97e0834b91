package linkforge

import (
	"encoding/base64"
	"strconv"
)

// EncodeCursor returns the opaque ListLinks cursor that resumes after the
// link with id. Both stores use this one format, so a cursor survives a move
// from SQLite to PostgreSQL and the conformance suite can treat it alike.
func EncodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString(strconv.AppendInt(nil, id, 10))
}

// DecodeCursor returns the link id a cursor resumes after, or an EInvalid
// error naming the field "cursor".
func DecodeCursor(cursor string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, InvalidField("cursor", "malformed cursor")
	}
	id, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || id <= 0 {
		return 0, InvalidField("cursor", "malformed cursor")
	}
	return id, nil
}
