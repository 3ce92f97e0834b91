package web

import (
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/rules"
)

// The bodies of POST /api/v1/links and PATCH /api/v1/links/{slug}, read
// with the strict JSON reader of jsonbody.go.

// tags reads a link's tags: an array of strings, normalized and
// validated.
func (fe *fieldErrors) tags(m member) ([]string, bool) {
	var tags []string
	if err := json.Unmarshal(m.value, &tags); err != nil {
		fe.add(m.name, "must be an array of strings")
		return nil, false
	}
	// Stored as matched: trimmed and lower-cased, duplicates merged
	// (linkforge.NormalizeTag), so that "Launch" and "launch " are one tag.
	tags = linkforge.NormalizeTags(tags)
	if err := linkforge.ValidateTags(tags); err != nil {
		fe.addErr(err)
		return nil, false
	}
	return tags, true
}

// title reads a title: a string (empty: none), validated.
func (fe *fieldErrors) title(m member) (string, bool) {
	var s string
	if !fe.str(m, &s) {
		return "", false
	}
	if err := linkforge.ValidateTitle(s); err != nil {
		fe.addErr(err)
		return "", false
	}
	return s, true
}

// notes reads a link's notes: a string (empty: none), validated.
func (fe *fieldErrors) notes(m member) (string, bool) {
	var s string
	if !fe.str(m, &s) {
		return "", false
	}
	if err := linkforge.ValidateNotes(s); err != nil {
		fe.addErr(err)
		return "", false
	}
	return s, true
}

// password reads a plain password, validated; the caller hashes it.
func (fe *fieldErrors) password(m member) (string, bool) {
	var s string
	if !fe.str(m, &s) {
		return "", false
	}
	if err := linkforge.ValidatePassword(s); err != nil {
		fe.addErr(err)
		return "", false
	}
	return s, true
}

// deviceURLs reads the device_urls object: keys ios, android and desktop,
// each a string or null (null or "": not set). With selfHosts the URLs are
// validated here; a PATCH validates them with the merged link instead.
func (fe *fieldErrors) deviceURLs(m member, selfHosts, schemes []string, validate bool) (linkforge.DeviceURLs, bool) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(m.value, &raw); err != nil || raw == nil {
		fe.add(m.name, `must be an object with the keys "ios", "android" and "desktop"`)
		return linkforge.DeviceURLs{}, false
	}
	var (
		d  linkforge.DeviceURLs
		ok = true
	)
	// Sorted keys: the errors come in a stable order.
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := raw[k]
		var dst *string
		switch k {
		case "ios":
			dst = &d.IOS
		case "android":
			dst = &d.Android
		case "desktop":
			dst = &d.Desktop
		default:
			fe.add(m.name+"."+fieldName(k), `unknown key; device_urls takes "ios", "android" and "desktop"`)
			ok = false
			continue
		}
		if isNull(v) {
			continue
		}
		if !fe.str(member{name: m.name + "." + k, value: v}, dst) {
			ok = false
		}
	}
	if ok && validate {
		if err := linkforge.ValidateDeviceURLsFor(d, selfHosts, schemes); err != nil {
			fe.addErr(err)
			ok = false
		}
	}
	return d, ok
}

const createFields = "slug, url, domain, find_if_exists, title, notes, archived, valid_since, password, device_urls, expires_at, max_clicks, fallback_url, tags, " + routingFields

// newLink is a decoded POST /api/v1/links body: the link, and the plain
// password (empty: none) that the handler hashes into it.
type newLink struct {
	link     linkforge.Link
	password string
	// domain is the host the body names ("": the tenant's default); the
	// handler resolves it to the link's DomainID.
	domain string
	// findIfExists: answer the tenant's link of the same URL and domain
	// when no field the body sets differs (find.go), else create.
	findIfExists bool
}

// decodeCreateLink reads and validates the body of POST /api/v1/links. The
// returned link has no tenant, and no slug when the client did not choose
// one (the handler generates it). Every error is an *linkforge.Error: EInvalid
// naming the fields, or ETooLarge when r is an exhausted
// http.MaxBytesReader; or a wrapped read error.
func decodeCreateLink(r io.Reader, selfHosts []string) (newLink, error) {
	return decodeCreateLinkFor(r, selfHosts, nil)
}

// decodeCreateLinkFor is decodeCreateLink for a tenant whose allowlist of
// extra target schemes is schemes (linkforge.ValidateTargetURLFor).
func decodeCreateLinkFor(r io.Reader, selfHosts, schemes []string) (newLink, error) {
	members, err := readObject(r)
	if err != nil {
		return newLink{}, err
	}
	var pw, host string
	l := linkforge.Link{Tags: []string{}}
	var (
		fe     fieldErrors
		hasURL bool
		find   bool
	)
	for _, m := range members {
		if isNull(m.value) && m.name != "url" {
			// null is absence for the optional fields (and an error for
			// unknown ones, below).
			if !isCreateField(m.name) {
				fe.add(fieldName(m.name), "unknown field; accepted fields are "+createFields)
			}
			continue
		}
		switch m.name {
		case "slug":
			if fe.str(m, &l.Slug) {
				if err := linkforge.ValidateSlug(l.Slug); err != nil {
					fe.addErr(err)
				}
			}
		case "url":
			hasURL = true
			if isNull(m.value) {
				fe.add("url", "is required")
			} else if fe.str(m, &l.URL) {
				if err := linkforge.ValidateTargetURLFor("url", l.URL, selfHosts, schemes); err != nil {
					fe.addErr(err)
				}
			}
		case "expires_at":
			l.ExpiresAt, _ = fe.time(m)
		case "max_clicks":
			l.MaxClicks, _ = fe.count(m)
		case "fallback_url":
			if fe.str(m, &l.FallbackURL) && l.FallbackURL != "" {
				if err := linkforge.ValidateTargetURLFor("fallback_url", l.FallbackURL, selfHosts, schemes); err != nil {
					fe.addErr(err)
				}
			}
		case "tags":
			if tags, ok := fe.tags(m); ok {
				l.Tags = tags
			}
		case "title":
			l.Title, _ = fe.title(m)
		case "notes":
			l.Notes, _ = fe.notes(m)
		case "archived":
			fe.boolean(m, &l.Archived)
		case "valid_since":
			l.ValidSince, _ = fe.time(m)
		case "find_if_exists":
			fe.boolean(m, &find)
		case "password":
			pw, _ = fe.password(m)
		case "device_urls":
			l.DeviceURLs, _ = fe.deviceURLs(m, selfHosts, schemes, true)
		case "domain":
			if fe.str(m, &host) && host == "" {
				fe.add("domain", "must be a host name; leave it out for the tenant's default domain")
			}
		default:
			if !fe.routing(m, &l) {
				fe.add(fieldName(m.name), "unknown field; accepted fields are "+createFields)
			}
		}
	}
	if !hasURL {
		fe.add("url", "is required")
	}
	fe.routingValues(&l, selfHosts, schemes)
	if err := linkforge.InvalidFields(fe); err != nil {
		return newLink{}, err
	}
	return newLink{link: l, password: pw, domain: host, findIfExists: find}, nil
}

func isCreateField(name string) bool {
	switch name {
	case "slug", "url", "domain", "expires_at", "max_clicks", "fallback_url", "tags", "title", "password", "device_urls",
		"notes", "archived", "valid_since", "find_if_exists":
		return true
	}
	return rules.IsField(name)
}

const patchFields = "slug (alone), url, title, notes, archived, valid_since, password, device_urls, expires_at, max_clicks, fallback_url, tags, disabled, " + routingFields

// linkPatch is a decoded PATCH body: only the fields that were present
// change; null clears expires_at, max_clicks, fallback_url, tags, title,
// password and device_urls. device_urls replaces the whole set: a key left
// out is cleared.
type linkPatch struct {
	setTitle    bool
	title       string
	setPassword bool
	// password is plain; empty with setPassword: remove the password.
	// links.Service hashes it before the update transaction (a slow hash
	// must not hold the write lock) and sets the hash after apply.
	password   string
	setDevices bool
	devices    linkforge.DeviceURLs

	setURL       bool
	url          string
	setExpiresAt bool
	expiresAt    *time.Time
	setMaxClicks bool
	maxClicks    *int64
	setFallback  bool
	fallback     string
	setTags      bool
	tags         []string
	// setDisabled: the tenant's switch (linkforge.Link.Disabled); the
	// store refuses a change of it under an operator's block.
	setDisabled bool
	disabled    bool
	// notes, archived and valid_since (linkfields.go); null clears notes
	// and valid_since.
	setNotes      bool
	notes         string
	setArchived   bool
	archived      bool
	setValidSince bool
	validSince    *time.Time
	// slug renames the link (links.Service.Rename); sent alone.
	setSlug bool
	slug    string
	// routing holds the routing members present, type-checked, applied in
	// order (routingbody.go).
	routing []member
}

// decodePatchLink reads the body of PATCH /api/v1/links/{slug}. It checks
// types only: the merged link is validated as a whole inside the update
// transaction.
func decodePatchLink(r io.Reader) (linkPatch, error) {
	members, err := readObject(r)
	if err != nil {
		return linkPatch{}, err
	}
	var (
		p  linkPatch
		fe fieldErrors
	)
	for _, m := range members {
		null := isNull(m.value)
		switch m.name {
		case "url":
			if null {
				fe.add("url", "cannot be removed; it may only be replaced")
			} else {
				p.setURL = fe.str(m, &p.url)
			}
		case "expires_at":
			p.setExpiresAt = true
			if !null {
				p.expiresAt, p.setExpiresAt = fe.time(m)
			}
		case "max_clicks":
			p.setMaxClicks = true
			if !null {
				p.maxClicks, p.setMaxClicks = fe.count(m)
			}
		case "fallback_url":
			p.setFallback = true
			if !null {
				p.setFallback = fe.str(m, &p.fallback)
			}
		case "tags":
			p.setTags, p.tags = true, []string{}
			if !null {
				p.tags, p.setTags = fe.tags(m)
			}
		case "title":
			p.setTitle = true
			if !null {
				p.title, p.setTitle = fe.title(m)
			}
		case "password":
			p.setPassword = true
			if !null {
				p.password, p.setPassword = fe.password(m)
			}
		case "device_urls":
			p.setDevices = true
			if !null {
				// Checked with the merged link, like url.
				p.devices, p.setDevices = fe.deviceURLs(m, nil, nil, false)
			}
		case "disabled":
			if null {
				fe.add("disabled", "must be true or false")
			} else {
				p.setDisabled = fe.boolean(m, &p.disabled)
			}
		case "notes":
			p.setNotes = true
			if !null {
				p.notes, p.setNotes = fe.notes(m)
			}
		case "archived":
			if null {
				fe.add("archived", "must be true or false")
			} else {
				p.setArchived = fe.boolean(m, &p.archived)
			}
		case "valid_since":
			p.setValidSince = true
			if !null {
				p.validSince, p.setValidSince = fe.time(m)
			}
		case "state", "blocked_reason":
			fe.add(m.name, `cannot be changed: send "disabled": true or false; a block is the operator's`)
		case "slug":
			if null {
				fe.add("slug", "cannot be removed; send a new slug to rename the link")
			} else if p.setSlug = fe.str(m, &p.slug); p.setSlug {
				if err := linkforge.ValidateSlug(p.slug); err != nil {
					fe.addErr(err)
				}
			}
		case "domain", "id", "short_url", "created_at", "updated_at", "expired_at", "clicks",
			"password_protected", "imported_clicks", "aliases":
			fe.add(m.name, "cannot be changed; fields that can are "+patchFields)
		default:
			if !p.decodeRouting(&fe, m) {
				fe.add(fieldName(m.name), "unknown field; fields that can be changed are "+patchFields)
			}
		}
	}
	if p.setSlug && len(members) > 1 {
		// A rename is its own transaction: with other changes, a
		// refusal of one could leave the other done.
		fe.add("slug", "must be sent alone: rename the link, then change its other fields")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return linkPatch{}, err
	}
	return p, nil
}

// apply changes l's present fields, but the password (links.Patch).
func (p *linkPatch) apply(l *linkforge.Link) {
	if p.setURL {
		l.URL = p.url
	}
	if p.setExpiresAt {
		l.ExpiresAt = p.expiresAt
	}
	if p.setMaxClicks {
		l.MaxClicks = p.maxClicks
	}
	if p.setFallback {
		l.FallbackURL = p.fallback
	}
	if p.setTags {
		l.Tags = p.tags
	}
	if p.setTitle {
		l.Title = p.title
	}
	if p.setDevices {
		l.DeviceURLs = p.devices
	}
	if p.setDisabled {
		l.Disabled = p.disabled
	}
	if p.setNotes {
		l.Notes = p.notes
	}
	if p.setArchived {
		l.Archived = p.archived
	}
	if p.setValidSince {
		l.ValidSince = p.validSince
	}
	p.applyRouting(l)
}
