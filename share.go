package linkforge

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"
)

// SharesQuotaExceeded is the error of a share create past
// MaxSharesPerSubject.
func SharesQuotaExceeded() *Error {
	return &Error{Code: EQuotaExceeded, Message: fmt.Sprintf("this link or tag has %d shares, the most allowed", MaxSharesPerSubject)}
}

// Shares of stats (docs/analytics.md, "Shared stats"): a link's or a
// tag's read-only stats page at an unguessable URL, which anyone holding
// the URL may open (POST /api/v1/links/{slug}/shares,
// /api/v1/tags/{name}/shares).
const (
	// MaxSharesPerSubject bounds the shares of one link or one tag.
	MaxSharesPerSubject = 50
	// shareTokenBytes is the randomness of a share's URL: 256 bits.
	shareTokenBytes = 32
	// SharePrefixLen is how many characters of the token the API names
	// a share by (its id): 60 bits, unique, and leaving 196 secret.
	SharePrefixLen = 10
)

// Share is one shared stats page, as the store keeps it: the hash of its
// URL's token, never the token, so that a copy of the database does not
// open the pages; Prefix, the token's first characters, names it in the
// API.
type Share struct {
	ID       int64
	TenantID int64
	// LinkID is the link shared (0 for a tag's share), Slug its slug as
	// the list and the audit log name it, DomainID its domain (read,
	// never written).
	LinkID   int64
	Slug     string
	DomainID int64
	// Tag is the tag shared ("" for a link's share): the page sums the
	// links carrying it when it is opened.
	Tag    string
	Prefix string
	Hash   []byte
	// PasswordHash is the argon2id hash of the page's password (package
	// password); "": none.
	PasswordHash string
	// ExpiresAt: nil never expires.
	ExpiresAt *time.Time
	CreatedAt time.Time
}

// Expired reports whether the share has expired at now.
func (s Share) Expired(now time.Time) bool {
	return s.ExpiresAt != nil && !now.Before(*s.ExpiresAt)
}

// NewShareToken returns a new share token (URL-safe, 43 characters), its
// prefix and its hash.
func NewShareToken() (token, prefix string, hash []byte) {
	b := make([]byte, shareTokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, token[:SharePrefixLen], ShareHash(token)
}

// ShareHash is the stored hash of a share token.
func ShareHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// ShareStore keeps the shares. Creates and deletes are audited
// (AuditShareCreate, AuditShareDelete) in their transaction.
type ShareStore interface {
	// CreateShare stores s (ID and CreatedAt filled in); EQuotaExceeded
	// past MaxSharesPerSubject shares of its link or tag.
	CreateShare(ctx context.Context, s Share) (Share, error)
	// ListShares returns the shares of the tenant's link linkID, or of
	// tag when linkID is 0, oldest first.
	ListShares(ctx context.Context, tenantID, linkID int64, tag string) ([]Share, error)
	// DeleteShare deletes the share of that link (or tag) named by
	// prefix; ENotFound when there is none. slug names the link in the
	// audit event.
	DeleteShare(ctx context.Context, tenantID, linkID int64, slug, tag, prefix string) error
	// ShareByHash returns the share of a token's hash, with its link's
	// slug, or ENotFound.
	ShareByHash(ctx context.Context, hash []byte) (Share, error)
}

// ShareAuditTarget is the audit target of a share: "SLUG PREFIX" for a
// link's, "tag:NAME PREFIX" for a tag's.
func ShareAuditTarget(slug, tag, prefix string) string {
	if tag != "" {
		return "tag:" + tag + " " + prefix
	}
	return slug + " " + prefix
}
