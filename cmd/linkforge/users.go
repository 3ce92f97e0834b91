package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/people"
)

// cliHasher hashes with the default costs: the CLI's user commands set no
// password themselves (the one-time URLs do, on the server), but
// people.Service wants a Hasher.
type cliHasher struct{}

func (cliHasher) HashPassword(_ context.Context, pw string) (string, error) {
	return password.Hash(pw, password.DefaultParams)
}

// peopleService opens the people of the store, with URLs on the public URL.
func (a *app) peopleService(st linkforge.Store) (*people.Service, error) {
	return people.New(people.Config{Store: st, Hasher: cliHasher{}, PublicURL: a.cfg.PublicURL.String()})
}

// userAdd makes a user a member of a tenant and prints the invite URL on
// stdout (only the URL), or nothing when the user has a password already.
func (a *app) userAdd(inv invocation) int {
	if inv.email == "" {
		fmt.Fprintln(a.stderr, "linkforge: user add: --email is required")
		return exitUsage
	}
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot add user", err)
	}
	defer st.Close()
	tenant, err := st.EnsureTenant(a.ctx, inv.tenant)
	if err != nil {
		return a.fail("cannot add user", fmt.Errorf("ensure tenant %q: %w", inv.tenant, err))
	}
	svc, err := a.peopleService(st)
	if err != nil {
		return a.fail("cannot add user", err)
	}
	u, url, exp, err := svc.Invite(a.ctx, tenant.ID, inv.email, inv.role)
	if linkforge.ErrorCode(err) == linkforge.EConflict {
		fmt.Fprintf(a.stderr, "linkforge: %s is a member of tenant %q already\n", inv.email, inv.tenant)
		return exitFailure
	}
	if err != nil {
		return a.fail("cannot add user", err)
	}
	if inv.operator {
		if err := st.SetUserOperator(a.ctx, u.Email, true); err != nil {
			return a.fail("cannot make the user an operator", err)
		}
	}
	a.log.Info("user added", "tenant", tenant.Name, "user_id", u.ID, "role", string(inv.role), "invite", url != "", "operator", inv.operator)
	if url != "" {
		fmt.Fprintln(a.stdout, url)
		a.log.Info("the URL sets the user's password once", "expires_at", exp.Format(time.RFC3339))
	}
	return exitOK
}

// userList prints a tenant's users as a table.
func (a *app) userList(inv invocation) int {
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot list users", err)
	}
	defer st.Close()
	tenant, code := a.existingTenant(st, inv.tenant, "cannot list users")
	if code != exitOK {
		return code
	}
	members, err := st.ListMembers(a.ctx, tenant.ID)
	if err != nil {
		return a.fail("cannot list users", err)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEMAIL\tROLE\tLAST_SIGN_IN")
	for _, m := range members {
		last := "-"
		if m.User.LastSignInAt != nil {
			last = m.User.LastSignInAt.UTC().Format(time.RFC3339)
		} else if m.User.PasswordHash == "" {
			last = "invited"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", m.User.ID, m.User.Email, m.Role, last)
	}
	if err := tw.Flush(); err != nil {
		return a.fail("cannot print users", err)
	}
	return exitOK
}

// userRemove takes a user out of a tenant.
func (a *app) userRemove(inv invocation) int {
	if inv.email == "" {
		fmt.Fprintln(a.stderr, "linkforge: user remove: --email is required")
		return exitUsage
	}
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot remove user", err)
	}
	defer st.Close()
	tenant, code := a.existingTenant(st, inv.tenant, "cannot remove user")
	if code != exitOK {
		return code
	}
	u, err := st.UserByEmail(a.ctx, inv.email)
	if err == nil {
		err = st.RemoveMember(a.ctx, tenant.ID, u.ID)
	}
	switch linkforge.ErrorCode(err) {
	case "":
	case linkforge.ENotFound:
		fmt.Fprintf(a.stderr, "linkforge: %s is not a member of tenant %q\n", inv.email, inv.tenant)
		return exitFailure
	case linkforge.EConflict:
		fmt.Fprintf(a.stderr, "linkforge: %s\n", linkforge.ErrorMessage(err))
		return exitFailure
	default:
		return a.fail("cannot remove user", err)
	}
	a.log.Info("user removed", "tenant", tenant.Name, "user_id", u.ID)
	fmt.Fprintf(a.stdout, "%s removed from %s\n", inv.email, inv.tenant)
	return exitOK
}

// userResetPassword prints a one-time URL that sets the user's password.
func (a *app) userResetPassword(inv invocation) int {
	if inv.email == "" {
		fmt.Fprintln(a.stderr, "linkforge: user reset-password: --email is required")
		return exitUsage
	}
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot reset password", err)
	}
	defer st.Close()
	svc, err := a.peopleService(st)
	if err != nil {
		return a.fail("cannot reset password", err)
	}
	url, _, err := svc.ResetURL(a.ctx, inv.email)
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		fmt.Fprintf(a.stderr, "linkforge: no user with email %s\n", inv.email)
		return exitFailure
	}
	if err != nil {
		return a.fail("cannot reset password", err)
	}
	fmt.Fprintln(a.stdout, url)
	return exitOK
}
