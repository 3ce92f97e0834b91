package clienttest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/blocklist"
	"github.com/linkforge/linkforge/client"
	"github.com/linkforge/linkforge/web"
)

// TestClientTargetEntries: the operator's blocklist and allowlist methods
// against a real server; a create whose target the operator blocked is an
// *Error with CodeBlockedTarget and status 422, and the allowlist wins.
func TestClientTargetEntries(t *testing.T) {
	files := blocklist.NewFiles(nil, nil)
	s := newServer(t, serverOpts{web: func(c *web.Config) { c.Targets = files }})
	files.UseStore(s.store)
	ctx := context.Background()
	secret, hash, display := linkforge.NewToken()
	if _, err := s.store.CreateOperatorToken(ctx, linkforge.OperatorToken{Name: "ops", Hash: hash, Display: display}); err != nil {
		t.Fatal(err)
	}
	op, err := client.New(s.URL, secret)
	if err != nil {
		t.Fatal(err)
	}
	c := mustClient(t, s)

	e, err := op.AddBlocklistEntry(ctx, "Evil.Example.", "phishing")
	if err != nil || e.Host != "evil.example" || e.Note != "phishing" || e.CreatedAt.IsZero() {
		t.Fatalf("AddBlocklistEntry = %+v, %v", e, err)
	}
	if _, err := op.AddAllowlistEntry(ctx, "good.evil.example", ""); err != nil {
		t.Fatal(err)
	}
	if bl, err := op.Blocklist(ctx); err != nil || len(bl) != 1 || bl[0].Host != "evil.example" {
		t.Errorf("Blocklist = %+v, %v", bl, err)
	}
	if al, err := op.Allowlist(ctx); err != nil || len(al) != 1 || al[0].Host != "good.evil.example" {
		t.Errorf("Allowlist = %+v, %v", al, err)
	}
	_, err = c.CreateLink(ctx, client.NewLink{URL: "https://x.evil.example/"})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Code != client.CodeBlockedTarget || ae.Status != 422 || len(ae.Fields) != 1 || ae.Fields[0].Field != "url" {
		t.Errorf("create of a blocked target: %v, want a 422 blocked_target naming url", err)
	}
	if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://good.evil.example/"}); err != nil {
		t.Errorf("create of an allowed target: %v", err)
	}
	if err := op.DeleteBlocklistEntry(ctx, "evil.example"); err != nil {
		t.Fatal(err)
	}
	if err := op.DeleteAllowlistEntry(ctx, "good.evil.example"); err != nil {
		t.Fatal(err)
	}
	if err := op.DeleteBlocklistEntry(ctx, "evil.example"); !errors.As(err, &ae) || ae.Code != client.CodeNotFound {
		t.Errorf("a second delete: %v, want not_found", err)
	}
	if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://x.evil.example/"}); err != nil {
		t.Errorf("create after the entry is removed: %v", err)
	}
	if _, err := c.Blocklist(ctx); !errors.As(err, &ae) || ae.Code != client.CodeForbidden {
		t.Errorf("a tenant token's Blocklist: %v, want forbidden", err)
	}
}
