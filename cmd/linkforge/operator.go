package main

import (
	"fmt"

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
