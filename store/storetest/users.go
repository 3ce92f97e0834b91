package storetest

import (
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
	ann, made, err := s.InviteUser(ctx, acme.ID, "Ann@Example.COM", linkforge.RoleOwner, ticket)
	if err != nil || !made || ann.Email != "ann@example.com" || ann.PasswordHash != "" || ann.ID == 0 {
		t.Fatalf("InviteUser = %+v, %v, %v", ann, made, err)
	}
	_, _, err = s.InviteUser(ctx, acme.ID, "ann@example.com", linkforge.RoleViewer, linkforge.UserTicket{})
	wantCode(t, err, linkforge.EConflict, "second invite to the same tenant")
	if _, _, err := s.InviteUser(ctx, globex.ID, "ann@example.com", linkforge.RoleViewer, linkforge.UserTicket{}); err != nil {
		t.Fatalf("invite to another tenant: %v", err)
	}
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
	if u, err := s.UseTicket(ctx, ticket.Hash, time.Now(), "$argon2id$x"); err != nil || u.PasswordHash != "$argon2id$x" {
		t.Fatalf("UseTicket = %+v, %v", u, err)
	}
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
	if _, made, err := s.InviteUser(ctx, mustTenant(t, s, "u-third").ID, "ann@example.com", linkforge.RoleEditor,
		linkforge.UserTicket{Hash: linkforge.HashToken("ticket-3"), Kind: linkforge.TicketInvite, ExpiresAt: exp}); err != nil || made {
		t.Errorf("invite of a user with a password: ticket %v, %v", made, err)
	}

	bob, _, err := s.InviteUser(ctx, acme.ID, "bob@example.com", linkforge.RoleEditor, linkforge.UserTicket{})
	if err != nil {
		t.Fatal(err)
	}
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
	if got, err := s.ActiveSessions(ctx, []int64{a.ID, b.ID, c.ID, c.ID + 1000}); err != nil || len(got) != 2 {
		t.Errorf("ActiveSessions after ending one = %v, %v; want the other two", got, err)
	}
	if n, err := s.EndUserSessions(ctx, ann.ID, time.Now()); err != nil || n != 2 {
		t.Errorf("EndUserSessions = %d, %v; want 2", n, err)
	}
	for _, x := range []linkforge.Session{b, c} {
		_, err = s.SessionByHash(ctx, x.Hash, past)
		wantCode(t, err, linkforge.ENotFound, "SessionByHash after EndUserSessions")
	}
	if got, err := s.ActiveSessions(ctx, []int64{a.ID, b.ID, c.ID}); err != nil || len(got) != 0 {
		t.Errorf("ActiveSessions after EndUserSessions = %v, %v", got, err)
	}

	// A removal or a role change ends the user's sessions; an unchanged
	// role does not.
	cara, _, err := s.InviteUser(ctx, globex.ID, "cara@example.com", linkforge.RoleEditor, linkforge.UserTicket{})
	if err != nil {
		t.Fatal(err)
	}
	sess := func(secret string) linkforge.Session {
		t.Helper()
		x, err := s.CreateSession(ctx, linkforge.Session{Hash: linkforge.HashToken(secret), UserID: cara.ID, CSRF: "c"})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	x := sess("cara-1")
	if _, err := s.SetMemberRole(ctx, globex.ID, cara.ID, linkforge.RoleEditor); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ActiveSessions(ctx, []int64{x.ID}); len(got) != 1 {
		t.Error("an unchanged role ended the session")
	}
	if _, err := s.SetMemberRole(ctx, globex.ID, cara.ID, linkforge.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ActiveSessions(ctx, []int64{x.ID}); len(got) != 0 {
		t.Error("a role change left the session open")
	}
	y := sess("cara-2")
	if err := s.RemoveMember(ctx, globex.ID, cara.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ActiveSessions(ctx, []int64{y.ID}); len(got) != 0 {
		t.Error("a removal left the session open")
	}
}
