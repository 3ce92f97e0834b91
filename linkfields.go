package linkforge

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxNotesLength bounds a link's notes, in characters.
const MaxNotesLength = 2000

// ValidateNotes checks a link's notes: at most MaxNotesLength characters
// of valid UTF-8, several lines allowed (newlines and tabs), but no other
// control character nor the bidirectional controls ValidateTitle refuses.
// Empty is no notes.
func ValidateNotes(s string) error {
	if !utf8.ValidString(s) {
		return InvalidField("notes", "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > MaxNotesLength {
		return InvalidField("notes", fmt.Sprintf("must be at most %d characters long, not %d", MaxNotesLength, n))
	}
	for i, r := range s {
		if (unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r') || isBidiControl(r) {
			return InvalidField("notes", fmt.Sprintf("must be plain text without control characters other than newlines and tabs (found %U at byte %d)", r, i))
		}
	}
	return nil
}

// ArchivedFilter selects links by their archive flag in a listing
// (GET /api/v1/links?archived=).
type ArchivedFilter string

// The archived filters; "" is ArchivedFalse, the default listing.
const (
	ArchivedFalse ArchivedFilter = "false"
	ArchivedTrue  ArchivedFilter = "true"
	ArchivedAll   ArchivedFilter = "all"
)

// Valid reports whether a is one of the known filters.
func (a ArchivedFilter) Valid() bool {
	return a == ArchivedFalse || a == ArchivedTrue || a == ArchivedAll
}
