package storetest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// mustShare creates a share of a link (linkID) or a tag and returns it
// with its token.
func mustShare(t *testing.T, ctx context.Context, s linkforge.Store, sh linkforge.Share) (linkforge.Share, string) {
	t.Helper()
	token, prefix, hash := linkforge.NewShareToken()
	sh.Prefix, sh.Hash = prefix, hash
	got, err := s.CreateShare(ctx, sh)
	if err != nil {
		t.Fatalf("CreateShare: %v", err)
	}
	return got, token
}

// testShares: a share is found by its token's hash alone, with its link's
// slug; a link's and a tag's shares are listed apart and per tenant;
// delete takes the prefix, is audited and answers ENotFound for another
// tenant's; a link's shares go with the link.
func testShares(t *testing.T, s linkforge.Store) {
	ctx := linkforge.WithActor(t.Context(), linkforge.Actor{Type: linkforge.ActorToken, ID: 1, Name: "ci"})
	ten, other := mustTenant(t, s, "shares"), mustTenant(t, s, "shares-other")
	l := mustCreateLink(t, s, newLink(ten.ID, "shared"))
	exp := time.Date(2027, 1, 2, 3, 4, 5, 6000, time.UTC)
	a, token := mustShare(t, ctx, s, linkforge.Share{TenantID: ten.ID, LinkID: l.ID, Slug: l.Slug, ExpiresAt: &exp, PasswordHash: "h"})
	b, _ := mustShare(t, ctx, s, linkforge.Share{TenantID: ten.ID, Tag: "spring"})

	got, err := s.ShareByHash(ctx, linkforge.ShareHash(token))
	if err != nil || got.ID != a.ID || got.Slug != "shared" || got.LinkID != l.ID || got.Tag != "" ||
		got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) || got.PasswordHash != "h" || !bytes.Equal(got.Hash, a.Hash) {
		t.Fatalf("ShareByHash = %+v, %v; want share %d of link %d expiring %v", got, err, a.ID, l.ID, exp)
	}
	if _, err := s.ShareByHash(ctx, linkforge.ShareHash(token+"x")); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("ShareByHash of another token: %v, want not found", err)
	}
	if ls, err := s.ListShares(ctx, ten.ID, l.ID, ""); err != nil || len(ls) != 1 || ls[0].Prefix != a.Prefix {
		t.Errorf("link's shares = %+v, %v; want %s", ls, err, a.Prefix)
	}
	if ls, err := s.ListShares(ctx, ten.ID, 0, "spring"); err != nil || len(ls) != 1 || ls[0].Prefix != b.Prefix || ls[0].ExpiresAt != nil {
		t.Errorf("tag's shares = %+v, %v; want %s", ls, err, b.Prefix)
	}
	if ls, err := s.ListShares(ctx, other.ID, 0, "spring"); err != nil || len(ls) != 0 {
		t.Errorf("another tenant's tag shares = %+v, %v; want none", ls, err)
	}
	if err := s.DeleteShare(ctx, other.ID, 0, "", "spring", b.Prefix); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("DeleteShare by another tenant: %v, want not found", err)
	}
	if err := s.DeleteShare(ctx, ten.ID, l.ID, l.Slug, "", b.Prefix); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("DeleteShare of the tag's share under the link: %v, want not found", err)
	}
	if err := s.DeleteShare(ctx, ten.ID, 0, "", "spring", b.Prefix); err != nil {
		t.Fatalf("DeleteShare: %v", err)
	}
	events, err := s.ListAudit(ctx, ten.ID, linkforge.AuditQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var acts []string
	for _, ev := range events {
		if ev.Action == linkforge.AuditShareCreate || ev.Action == linkforge.AuditShareDelete {
			acts = append(acts, ev.Action+" "+ev.Target)
		}
	}
	want := []string{"share.delete tag:spring " + b.Prefix, "share.create tag:spring " + b.Prefix, "share.create shared " + a.Prefix}
	if len(acts) != 3 || acts[0] != want[0] || acts[1] != want[1] || acts[2] != want[2] {
		t.Errorf("audit %q, want %q", acts, want)
	}
	if _, err := s.DeleteLink(ctx, ten.ID, linkforge.PublicDomainID, l.Slug); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ShareByHash(ctx, linkforge.ShareHash(token)); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("a deleted link's share: %v, want not found", err)
	}
}

// testShareQuota: a link holds at most MaxSharesPerSubject shares.
func testShareQuota(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "share-quota")
	l := mustCreateLink(t, s, newLink(ten.ID, "many"))
	for range linkforge.MaxSharesPerSubject {
		mustShare(t, ctx, s, linkforge.Share{TenantID: ten.ID, LinkID: l.ID})
	}
	_, prefix, hash := linkforge.NewShareToken()
	_, err := s.CreateShare(ctx, linkforge.Share{TenantID: ten.ID, LinkID: l.ID, Prefix: prefix, Hash: hash})
	if linkforge.ErrorCode(err) != linkforge.EQuotaExceeded {
		t.Errorf("share %d: %v, want quota exceeded", linkforge.MaxSharesPerSubject+1, err)
	}
	// A tag's count is its own.
	mustShare(t, ctx, s, linkforge.Share{TenantID: ten.ID, Tag: "t"})
}

// SharesMigration: migration 00054 with data: down drops the shares and
// keeps the link; up brings the table back empty.
func SharesMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	ten := mustTenant(t, s, "share-migration")
	l := mustCreateLink(t, s, newLink(ten.ID, "share-migration"))
	_, token := mustShare(t, ctx, s, linkforge.Share{TenantID: ten.ID, LinkID: l.ID})
	if err := down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	if _, err := s.ShareByHash(ctx, linkforge.ShareHash(token)); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("after down and up: %v, want the share gone", err)
	}
	if got := mustTenantLink(t, s, ten.ID, l.Slug); got.ID != l.ID {
		t.Errorf("after down and up: link %d, want %d", got.ID, l.ID)
	}
}
