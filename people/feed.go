package people

import (
	"context"
	"fmt"

	"github.com/linkforge/linkforge"
)

// FeedStore is what FeedChecker asks: the tokens and the sessions still
// valid among some ids (both stores implement it).
type FeedStore interface {
	ActiveTokens(ctx context.Context, ids []int64) ([]int64, error)
	ActiveSessions(ctx context.Context, creds []linkforge.FeedCredential) ([]linkforge.FeedCredential, error)
}

// FeedChecker is the live feed's revocation check (dashboard.TokenChecker)
// for both kinds of credential: a socket opened with a token carries the
// token's id, one opened with a session cookie the session's id negated
// (FeedID). The feed asks every few seconds and closes the sockets whose
// credential is gone (code 4001): a revoked token, or a session ended by
// sign-out, "sign out everywhere", or the user's removal from the feed's
// tenant (a role change keeps it: every role may watch the feed).
type FeedChecker struct{ Store FeedStore }

// FeedID is the live feed's id of a socket opened with session id.
func FeedID(sessionID int64) int64 { return -sessionID }

// ActiveTokens returns those of creds still valid in their tenant, in at
// most two queries: a token not revoked (a token belongs to one tenant),
// a session not ended whose user is still a member of the tenant (a
// removal from one tenant closes that tenant's feeds only).
func (f FeedChecker) ActiveTokens(ctx context.Context, creds []linkforge.FeedCredential) ([]linkforge.FeedCredential, error) {
	var (
		tokens   []int64
		sessions []linkforge.FeedCredential
		byToken  = map[int64][]linkforge.FeedCredential{}
	)
	for _, c := range creds {
		if c.ID < 0 {
			sessions = append(sessions, linkforge.FeedCredential{TenantID: c.TenantID, ID: -c.ID})
			continue
		}
		if _, ok := byToken[c.ID]; !ok {
			tokens = append(tokens, c.ID)
		}
		byToken[c.ID] = append(byToken[c.ID], c)
	}
	active := []linkforge.FeedCredential{}
	if len(tokens) > 0 {
		t, err := f.Store.ActiveTokens(ctx, tokens)
		if err != nil {
			return nil, fmt.Errorf("active tokens: %w", err)
		}
		for _, id := range t {
			active = append(active, byToken[id]...)
		}
	}
	if len(sessions) > 0 {
		s, err := f.Store.ActiveSessions(ctx, sessions)
		if err != nil {
			return nil, fmt.Errorf("active sessions: %w", err)
		}
		for _, c := range s {
			active = append(active, linkforge.FeedCredential{TenantID: c.TenantID, ID: FeedID(c.ID)})
		}
	}
	return active, nil
}
