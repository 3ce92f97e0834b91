package linkforge

import (
	"context"
	"time"
)

// The states of a link's health (schema LinkHealth in web/openapi.json).
const (
	HealthUnchecked = "unchecked"
	HealthOK        = "ok"
	HealthBroken    = "broken"
)

// LinkHealth is the last check of a link's targets (package health); its
// zero value is a link never checked.
type LinkHealth struct {
	State     string    // HealthOK or HealthBroken; "": unchecked
	Status    int       // the HTTP status answered, 0: none
	CheckedAt time.Time // zero: never checked
	Error     string    // why it is broken
}

// Stated is h's State, HealthUnchecked when h is nil or has none.
func (h *LinkHealth) Stated() string {
	if h == nil || h.State == "" {
		return HealthUnchecked
	}
	return h.State
}

// MaxHealthError bounds a LinkHealth's Error, in bytes.
const MaxHealthError = 300

// HealthStore keeps the links' health.
type HealthStore interface {
	// SetLinkHealth records the check h of the link id and returns the
	// link: link.broken when it turns broken. ENotFound: no such link.
	SetLinkHealth(ctx context.Context, id int64, h LinkHealth) (Link, error)
}
