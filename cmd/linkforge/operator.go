package main

import (
	"fmt"
	"strconv"

	"github.com/linkforge/linkforge"
)

// operatorTokenCreate prints a new operator token: the credential of the
// role above tenants (web/operator.go). As token create, stdout gets the
// token and nothing else, and the secret is never logged.
func (a *app) operatorTokenCreate(inv invocation) int {
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot create operator token", err)
	}
	defer st.Close()
	secret, hash, display := linkforge.NewToken()
	tok, err := st.CreateOperatorToken(a.ctx, linkforge.OperatorToken{Name: inv.name, Hash: hash, Display: display})
	if err != nil {
		return a.fail("cannot create operator token", fmt.Errorf("create operator token: %w", err))
	}
	a.log.Info("operator token created", "token_id", tok.ID, "display", tok.Display)
	if _, err := fmt.Fprintln(a.stdout, secret); err != nil {
		return a.fail("cannot print token", err)
	}
	return exitOK
}

// operatorTokenRevoke revokes an operator token by id.
func (a *app) operatorTokenRevoke(inv invocation) int {
	id, err := strconv.ParseInt(inv.args[0], 10, 64)
	if err != nil || id <= 0 {
		fmt.Fprintf(a.stderr, "linkforge: operator token revoke: %q is not a token id\n", inv.args[0])
		return exitUsage
	}
	st, err := a.openStore()
	if err != nil {
		return a.fail("cannot revoke operator token", err)
	}
	defer st.Close()
	err = st.RevokeOperatorToken(a.ctx, id)
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		fmt.Fprintf(a.stderr, "linkforge: no operator token with id %d\n", id)
		return exitFailure
	}
	if err != nil {
		return a.fail("cannot revoke operator token", fmt.Errorf("revoke operator token %d: %w", id, err))
	}
	a.log.Info("operator token revoked", "token_id", id)
	fmt.Fprintf(a.stdout, "operator token %d revoked\n", id)
	return exitOK
}
