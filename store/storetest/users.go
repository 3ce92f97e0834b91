package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testUsers: an invite makes the user (email lowercased) a member with a
// one-time ticket; a second invite to the same tenant is EConflict, one to
// another tenant adds a membership; the ticket sets the password once
// (EGone after, and after it expires); the last owner cannot be removed;
// sessions are found until they end or idle out, one by one or all of a
// user's at once.
func testUsers(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme, globex := mustTenant(t, s, "u-acme"), mustTenant(t, s, "u-globex")
	exp := time.Now().Add(24 * time.Hour)
	ticket := linkforge.UserTicket{Hash: linkforge.HashToken("ticket-1"), Kind: linkforge.TicketInvite, ExpiresAt: exp}
	res, err := s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "Ann@Example.COM", Role: linkforge.RoleOwner, Ticket: ticket})
	ann := res.User
	if err != nil || !res.Created || res.Pending || ann.Email != "ann@example.com" || ann.PasswordHash != "" || ann.ID == 0 {
		t.Fatalf("InviteUser = %+v, %v", res, err)
	}
	_, err = s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "ann@example.com", Role: linkforge.RoleViewer})
	wantCode(t, err, linkforge.EConflict, "second invite to the same tenant")
	// Without Consent (the CLI, single sign-on) an existing user joins at
	// once, and gets no ticket though they have no password yet.
	if res, err := s.InviteUser(ctx, linkforge.Invite{TenantID: globex.ID, Email: "ann@example.com", Role: linkforge.RoleViewer,
		Ticket: linkforge.UserTicket{Hash: linkforge.HashToken("ticket-0"), Kind: linkforge.TicketInvite, ExpiresAt: exp}}); err != nil || res.Created || res.Pending {
		t.Fatalf("invite to another tenant = %+v, %v", res, err)
	}
	_, err = s.TicketUser(ctx, linkforge.HashToken("ticket-0"), time.Now())
	wantCode(t, err, linkforge.ENotFound, "a ticket for an existing user")
	ms, err := s.Memberships(ctx, ann.ID)
	if err != nil || len(ms) != 2 || ms[0].TenantName != "u-acme" || ms[0].Role != "owner" || ms[1].Role != "viewer" {
		t.Errorf("Memberships = %+v, %v", ms, err)
	}

	if u, err := s.TicketUser(ctx, ticket.Hash, time.Now()); err != nil || u.ID != ann.ID {
		t.Errorf("TicketUser = %+v, %v", u, err)
	}
	_, err = s.TicketUser(ctx, ticket.Hash, exp)
	wantCode(t, err, linkforge.EGone, "TicketUser at its expiry")
	_, err = s.TicketUser(ctx, linkforge.HashToken("nope"), time.Now())
	wantCode(t, err, linkforge.ENotFound, "TicketUser of an unknown ticket")
	// A password set ends the user's other open tickets.
	spare := linkforge.UserTicket{Hash: linkforge.HashToken("ticket-spare"), UserID: ann.ID, Kind: linkforge.TicketReset, ExpiresAt: exp}
	if err := s.CreateTicket(ctx, spare); err != nil {
		t.Fatal(err)
	}
	if u, err := s.UseTicket(ctx, ticket.Hash, time.Now(), "$argon2id$x"); err != nil || u.PasswordHash != "$argon2id$x" {
		t.Fatalf("UseTicket = %+v, %v", u, err)
	}
	_, err = s.TicketUser(ctx, spare.Hash, time.Now())
	wantCode(t, err, linkforge.EGone, "another ticket after a password was set")
	_, err = s.UseTicket(ctx, ticket.Hash, time.Now(), "$argon2id$y")
	wantCode(t, err, linkforge.EGone, "UseTicket twice")
	if u, err := s.UserByEmail(ctx, "ANN@example.com"); err != nil || u.PasswordHash != "$argon2id$x" {
		t.Errorf("UserByEmail after the ticket = %+v, %v", u, err)
	}
	// A reset ticket works the same way.
	reset := linkforge.UserTicket{Hash: linkforge.HashToken("ticket-2"), UserID: ann.ID, Kind: linkforge.TicketReset, ExpiresAt: exp}
	if err := s.CreateTicket(ctx, reset); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UseTicket(ctx, reset.Hash, time.Now(), "$argon2id$z"); err != nil {
		t.Errorf("UseTicket(reset): %v", err)
	}
	// An invite of a user with a password makes no ticket.
	if res, err := s.InviteUser(ctx, linkforge.Invite{TenantID: mustTenant(t, s, "u-third").ID, Email: "ann@example.com",
		Role: linkforge.RoleEditor, Ticket: linkforge.UserTicket{Hash: linkforge.HashToken("ticket-3"), Kind: linkforge.TicketInvite, ExpiresAt: exp}}); err != nil || res.Created {
		t.Errorf("invite of a user with a password = %+v, %v", res, err)
	}

	res, err = s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "bob@example.com", Role: linkforge.RoleEditor})
	if err != nil {
		t.Fatal(err)
	}
	bob := res.User
	members, err := s.ListMembers(ctx, acme.ID)
	if err != nil || len(members) != 2 || members[0].User.ID != ann.ID || members[1].Role != "editor" {
		t.Errorf("ListMembers = %+v, %v", members, err)
	}
	wantCode(t, s.RemoveMember(ctx, acme.ID, ann.ID), linkforge.EConflict, "removing the last owner")
	_, err = s.SetMemberRole(ctx, acme.ID, ann.ID, linkforge.RoleEditor)
	wantCode(t, err, linkforge.EConflict, "demoting the last owner")
	if m, err := s.SetMemberRole(ctx, acme.ID, bob.ID, linkforge.RoleOwner); err != nil || m.Role != "owner" || m.User.ID != bob.ID {
		t.Errorf("SetMemberRole(bob, owner) = %+v, %v", m, err)
	}
	if m, err := s.SetMemberRole(ctx, acme.ID, ann.ID, linkforge.RoleViewer); err != nil || m.Role != "viewer" {
		t.Errorf("demoting one of two owners = %+v, %v", m, err)
	}
	_, err = s.SetMemberRole(ctx, acme.ID, bob.ID, linkforge.RoleEditor)
	wantCode(t, err, linkforge.EConflict, "demoting the last owner again")
	_, err = s.SetMemberRole(ctx, globex.ID+1000, bob.ID, linkforge.RoleEditor)
	wantCode(t, err, linkforge.ENotFound, "SetMemberRole of a non-member")
	if _, err := s.SetMemberRole(ctx, acme.ID, ann.ID, linkforge.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveMember(ctx, acme.ID, bob.ID); err != nil {
		t.Errorf("RemoveMember(bob): %v", err)
	}
	wantCode(t, s.RemoveMember(ctx, acme.ID, bob.ID), linkforge.ENotFound, "removing a non-member")

	// Sessions.
	mk := func(secret string) linkforge.Session {
		t.Helper()
		sess, err := s.CreateSession(ctx, linkforge.Session{Hash: linkforge.HashToken(secret), UserID: ann.ID, CSRF: "c-" + secret, UserAgent: "ua"})
		if err != nil || sess.ID == 0 {
			t.Fatalf("CreateSession = %+v, %v", sess, err)
		}
		return sess
	}
	a, b, c := mk("s-a"), mk("s-b"), mk("s-c")
	if u, _ := s.UserByID(ctx, ann.ID); u.LastSignInAt == nil {
		t.Error("no last_sign_in_at after a session")
	}
	past := time.Now().Add(-time.Hour)
	got, err := s.SessionByHash(ctx, a.Hash, past)
	if err != nil || got.ID != a.ID || got.CSRF != "c-s-a" || got.UserID != ann.ID {
		t.Errorf("SessionByHash = %+v, %v", got, err)
	}
	_, err = s.SessionByHash(ctx, a.Hash, time.Now().Add(time.Hour))
	wantCode(t, err, linkforge.ENotFound, "SessionByHash of an idle session")
	if err := s.TouchSession(ctx, a.ID, time.Now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionByHash(ctx, a.Hash, time.Now().Add(time.Hour)); err != nil {
		t.Errorf("SessionByHash after a touch: %v", err)
	}
	if err := s.EndSession(ctx, a.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = s.SessionByHash(ctx, a.Hash, past)
	wantCode(t, err, linkforge.ENotFound, "SessionByHash of an ended session")
	if got, err := s.UserSessions(ctx, ann.ID, past); err != nil || len(got) != 2 || got[0].ID != c.ID || got[1].ID != b.ID || got[0].UserAgent != "ua" {
		t.Errorf("UserSessions = %+v, %v; want c then b", got, err)
	}
	if got, err := s.ActiveSessions(ctx, creds(acme.ID, a.ID, b.ID, c.ID, c.ID+1000)); err != nil || len(got) != 2 {
		t.Errorf("ActiveSessions after ending one = %v, %v; want the other two", got, err)
	}
	if n, err := s.EndUserSessions(ctx, ann.ID, time.Now()); err != nil || n != 2 {
		t.Errorf("EndUserSessions = %d, %v; want 2", n, err)
	}
	for _, x := range []linkforge.Session{b, c} {
		_, err = s.SessionByHash(ctx, x.Hash, past)
		wantCode(t, err, linkforge.ENotFound, "SessionByHash after EndUserSessions")
	}
	if got, err := s.ActiveSessions(ctx, creds(acme.ID, a.ID, b.ID, c.ID)); err != nil || len(got) != 0 {
		t.Errorf("ActiveSessions after EndUserSessions = %v, %v", got, err)
	}

	// A role change or a removal ends no session: the next request reads
	// the membership. A removal ends the feeds of that tenant only.
	res, err = s.InviteUser(ctx, linkforge.Invite{TenantID: globex.ID, Email: "cara@example.com", Role: linkforge.RoleEditor})
	if err != nil {
		t.Fatal(err)
	}
	cara := res.User
	if _, err := s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "cara@example.com", Role: linkforge.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	x, err := s.CreateSession(ctx, linkforge.Session{Hash: linkforge.HashToken("cara-1"), UserID: cara.ID, CSRF: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetMemberRole(ctx, globex.ID, cara.ID, linkforge.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionByHash(ctx, x.Hash, past); err != nil {
		t.Errorf("a role change ended the session: %v", err)
	}
	if got, _ := s.ActiveSessions(ctx, creds(globex.ID, x.ID)); len(got) != 1 || got[0] != (linkforge.FeedCredential{TenantID: globex.ID, ID: x.ID}) {
		t.Errorf("ActiveSessions after a role change = %v", got)
	}
	if err := s.RemoveMember(ctx, globex.ID, cara.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionByHash(ctx, x.Hash, past); err != nil {
		t.Errorf("a removal from one tenant ended the session: %v", err)
	}
	got2, _ := s.ActiveSessions(ctx, append(creds(globex.ID, x.ID), creds(acme.ID, x.ID)...))
	if len(got2) != 1 || got2[0] != (linkforge.FeedCredential{TenantID: acme.ID, ID: x.ID}) {
		t.Errorf("ActiveSessions after the removal from globex = %v; want acme's only", got2)
	}
}

// creds are the feed credentials of sessions ids in one tenant.
func creds(tenantID int64, ids ...int64) []linkforge.FeedCredential {
	out := make([]linkforge.FeedCredential, len(ids))
	for i, id := range ids {
		out[i] = linkforge.FeedCredential{TenantID: tenantID, ID: id}
	}
	return out
}

// testInvitations: an invitation of an existing account waits for its
// user's answer, gives the inviter no ticket and no account detail, is
// bounded per tenant, and its answer is audited in the user's tenants.
func testInvitations(t *testing.T, s linkforge.Store) {
	ctx := linkforge.WithActor(t.Context(), linkforge.Actor{Type: linkforge.ActorCLI, Name: "test"})
	acme, evil := mustTenant(t, s, "inv-acme"), mustTenant(t, s, "inv-evil")
	exp := time.Now().Add(24 * time.Hour)
	// dana is a member of acme who never set a password (an SSO user, or
	// an invitee who has not used the URL yet).
	res, err := s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "dana@example.com", Role: linkforge.RoleOwner})
	if err != nil || !res.Created {
		t.Fatalf("InviteUser(dana) = %+v, %v", res, err)
	}
	dana := res.User
	tk := linkforge.UserTicket{Hash: linkforge.HashToken("evil-ticket"), Kind: linkforge.TicketInvite, ExpiresAt: exp}
	res, err = s.InviteUser(ctx, linkforge.Invite{TenantID: evil.ID, Email: "DANA@example.com", Role: linkforge.RoleViewer, Ticket: tk, Consent: true})
	if err != nil || !res.Pending || res.Created || res.User.ID != dana.ID {
		t.Fatalf("invitation of an existing account = %+v, %v; want pending", res, err)
	}
	_, err = s.TicketUser(ctx, tk.Hash, time.Now())
	wantCode(t, err, linkforge.ENotFound, "the inviter's ticket for an existing account")
	if ms, _ := s.Memberships(ctx, dana.ID); len(ms) != 1 || ms[0].TenantID != acme.ID {
		t.Errorf("Memberships before the answer = %+v; want acme only", ms)
	}
	_, err = s.InviteUser(ctx, linkforge.Invite{TenantID: evil.ID, Email: "dana@example.com", Role: linkforge.RoleOwner, Consent: true})
	wantCode(t, err, linkforge.EConflict, "a second invitation")
	members, err := s.ListMembers(ctx, evil.ID)
	if err != nil || len(members) != 1 || !members[0].Pending || members[0].User.ID != dana.ID ||
		members[0].User.LastSignInAt != nil || !members[0].User.CreatedAt.IsZero() || members[0].Role != linkforge.RoleViewer {
		t.Errorf("ListMembers with a pending invitee = %+v, %v", members, err)
	}
	inv, err := s.Invitations(ctx, dana.ID)
	if err != nil || len(inv) != 1 || inv[0].TenantName != "inv-evil" || inv[0].Role != linkforge.RoleViewer {
		t.Errorf("Invitations = %+v, %v", inv, err)
	}
	// Declined: no membership, the invitation gone, audited in both.
	if _, err := s.AnswerInvitation(ctx, evil.ID, dana.ID, false); err != nil {
		t.Fatal(err)
	}
	_, err = s.AnswerInvitation(ctx, evil.ID, dana.ID, true)
	wantCode(t, err, linkforge.ENotFound, "accepting a declined invitation")
	if ms, _ := s.Memberships(ctx, dana.ID); len(ms) != 1 {
		t.Errorf("Memberships after a decline = %+v", ms)
	}
	// Invited again and accepted: a member with the invitation's role.
	if _, err := s.InviteUser(ctx, linkforge.Invite{TenantID: evil.ID, Email: "dana@example.com", Role: linkforge.RoleEditor, Consent: true}); err != nil {
		t.Fatal(err)
	}
	m, err := s.AnswerInvitation(ctx, evil.ID, dana.ID, true)
	if err != nil || m.TenantID != evil.ID || m.Role != linkforge.RoleEditor {
		t.Errorf("AnswerInvitation(accept) = %+v, %v", m, err)
	}
	if ms, _ := s.Memberships(ctx, dana.ID); len(ms) != 2 {
		t.Errorf("Memberships after an accept = %+v", ms)
	}
	for _, tn := range []int64{acme.ID, evil.ID} {
		evs, err := s.ListAudit(ctx, tn, linkforge.AuditQuery{Limit: 1000, Before: 0})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, e := range evs {
			if e.Target == "dana@example.com" {
				got[e.Action]++
			}
		}
		if got[linkforge.AuditUserAccept] != 1 || got[linkforge.AuditUserDecline] != 1 {
			t.Errorf("tenant %d's audit of dana = %v; want one accept and one decline", tn, got)
		}
	}
	// A withdrawn invitation is gone; the bound holds.
	if _, err := s.InviteUser(ctx, linkforge.Invite{TenantID: mustTenant(t, s, "inv-third").ID, Email: "dana@example.com",
		Role: linkforge.RoleViewer, Consent: true}); err != nil {
		t.Fatal(err)
	}
	third, _ := s.TenantByName(ctx, "inv-third")
	if err := s.RemoveMember(ctx, third.ID, dana.ID); err != nil {
		t.Errorf("withdrawing an invitation: %v", err)
	}
	if inv, _ := s.Invitations(ctx, dana.ID); len(inv) != 0 {
		t.Errorf("Invitations after a withdrawal = %+v", inv)
	}
	for i := range linkforge.MaxPendingInvitations {
		email := fmt.Sprintf("p%d@example.com", i)
		if _, err := s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: email, Role: linkforge.RoleViewer}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.InviteUser(ctx, linkforge.Invite{TenantID: evil.ID, Email: email, Role: linkforge.RoleViewer, Consent: true}); err != nil {
			t.Fatalf("invitation %d: %v", i, err)
		}
	}
	if _, err := s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "over@example.com", Role: linkforge.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	_, err = s.InviteUser(ctx, linkforge.Invite{TenantID: evil.ID, Email: "over@example.com", Role: linkforge.RoleViewer, Consent: true})
	wantCode(t, err, linkforge.EQuotaExceeded, "the invitation past the bound")
	// A new email is no invitation: it joins with its ticket, unbounded
	// by the pending ones.
	if res, err := s.InviteUser(ctx, linkforge.Invite{TenantID: evil.ID, Email: "fresh@example.com", Role: linkforge.RoleViewer, Consent: true}); err != nil || !res.Created {
		t.Errorf("a new email past the bound = %+v, %v", res, err)
	}
}
