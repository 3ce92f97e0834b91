package linkforge

import (
	"context"
	"fmt"
	"time"
)

// TargetPolicy decides whether links may point to a host: the operator's
// target blocklist and allowlist (package blocklist). host is in
// CanonicalHost's form. entry is the blocklist entry that matched, as the
// 422 answer names it.
type TargetPolicy interface {
	BlockedHost(host string) (entry string, blocked bool)
}

// TargetURLs calls fn with every target URL of l and the API field that
// holds it: url, fallback_url, the device URLs, each rule's and each
// variant's. Empty ones are skipped.
func (l *Link) TargetURLs(fn func(field, url string)) {
	for _, f := range []struct{ name, url string }{
		{"url", l.URL}, {"fallback_url", l.FallbackURL},
		{"device_urls.ios", l.DeviceURLs.IOS}, {"device_urls.android", l.DeviceURLs.Android},
		{"device_urls.desktop", l.DeviceURLs.Desktop},
	} {
		if f.url != "" {
			fn(f.name, f.url)
		}
	}
	r := l.Routes()
	for i, rl := range r.Rules {
		if rl.URL != "" {
			fn(fmt.Sprintf("rules[%d].url", i), rl.URL)
		}
	}
	for i, v := range r.Variants {
		if v.URL != "" {
			fn(fmt.Sprintf("variants[%d].url", i), v.URL)
		}
	}
}

// CheckTargets returns an EBlockedTarget error naming every target URL of
// l (validated already) whose host p blocks, each with the entry that
// matched; nil when none is, or p is nil.
func CheckTargets(l *Link, p TargetPolicy) error {
	return checkTargets(l, p, nil)
}

// TargetURLSet is the set of l's target URLs, for CheckNewTargets: taken
// before an update changes l (its routing is shared, not copied).
func TargetURLSet(l *Link) map[string]bool {
	set := make(map[string]bool)
	l.TargetURLs(func(_, u string) { set[u] = true })
	return set
}

// CheckNewTargets is CheckTargets of the target URLs of l that are not in
// kept (TargetURLSet of the link before an update): a tenant may still
// edit, disable or repoint a link whose target was blocked after it was
// made.
func CheckNewTargets(kept map[string]bool, l *Link, p TargetPolicy) error {
	return checkTargets(l, p, kept)
}

func checkTargets(l *Link, p TargetPolicy, kept map[string]bool) error {
	if p == nil {
		return nil
	}
	// Most servers block nothing: no URL is parsed for an empty policy.
	if e, ok := p.(interface{ Empty() bool }); ok && e.Empty() {
		return nil
	}
	var (
		fields []FieldError
		first  string
	)
	l.TargetURLs(func(field, raw string) {
		if kept[raw] {
			return
		}
		host, err := TargetURLHost(raw)
		if err != nil {
			return // the validation that ran before answers it
		}
		if entry, ok := p.BlockedHost(host); ok {
			if first == "" {
				first = entry
			}
			fields = append(fields, FieldError{Field: field, Detail: "its host " + host + " is blocked by the entry " + entry})
		}
	})
	if len(fields) == 0 {
		return nil
	}
	return &Error{Code: EBlockedTarget, Message: fmt.Sprintf("the target of %s is blocked by the operator's blocklist (entry %s)",
		fields[0].Field, first), Fields: fields}
}

// The lists of the operator's TargetEntry.
const (
	TargetBlock = "block" // GET|POST|DELETE /api/v1/operator/blocklist
	TargetAllow = "allow" // .../allowlist: wins over every blocklist entry
)

// MaxTargetNote bounds the note of a TargetEntry, in characters.
const MaxTargetNote = 500

// TargetEntry is one entry of the operator's blocklist or allowlist,
// stored in the database so that every node applies it (the --blocklist
// files are each node's own). Host is canonical (package blocklist's
// Normalize); it blocks or allows itself and every host under it.
type TargetEntry struct {
	ID        int64
	List      string // TargetBlock or TargetAllow
	Host      string
	Note      string
	CreatedAt time.Time
}

// TargetEntryStore keeps the operator's TargetEntry values. Each write
// made with an actor (WithActor) is audited in the operator's log.
type TargetEntryStore interface {
	// TargetEntries returns every entry of both lists, by list and host.
	TargetEntries(ctx context.Context) ([]TargetEntry, error)
	// AddTargetEntry stores e and returns it with its ID and CreatedAt.
	// EConflict: the list has the host already.
	AddTargetEntry(ctx context.Context, e TargetEntry) (TargetEntry, error)
	// DeleteTargetEntry deletes the host from the list and returns the
	// entry. ENotFound: the list has no such host.
	DeleteTargetEntry(ctx context.Context, list, host string) (TargetEntry, error)
}
