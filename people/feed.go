package people

import (
	"context"
	"fmt"
)

// FeedStore is what FeedChecker asks: the tokens and the sessions still
// valid among some ids (both stores implement it).
type FeedStore interface {
	ActiveTokens(ctx context.Context, ids []int64) ([]int64, error)
	ActiveSessions(ctx context.Context, ids []int64) ([]int64, error)
}

// FeedChecker is the live feed's revocation check (dashboard.TokenChecker)
// for both kinds of credential: a socket opened with a token carries the
// token's id, one opened with a session cookie the session's id negated
// (FeedID). The feed asks every few seconds and closes the sockets whose
// credential is gone (code 4001): a revoked token, or a session ended by
// sign-out, "sign out everywhere", the user's removal or a role change.
type FeedChecker struct{ Store FeedStore }

// FeedID is the live feed's id of a socket opened with session id.
func FeedID(sessionID int64) int64 { return -sessionID }

// ActiveTokens returns those of ids whose credential is still valid, in
// at most two queries.
func (f FeedChecker) ActiveTokens(ctx context.Context, ids []int64) ([]int64, error) {
	var tokens, sessions []int64
	for _, id := range ids {
		if id < 0 {
			sessions = append(sessions, -id)
		} else {
			tokens = append(tokens, id)
		}
	}
	active := []int64{}
	if len(tokens) > 0 {
		t, err := f.Store.ActiveTokens(ctx, tokens)
		if err != nil {
			return nil, fmt.Errorf("active tokens: %w", err)
		}
		active = append(active, t...)
	}
	if len(sessions) > 0 {
		s, err := f.Store.ActiveSessions(ctx, sessions)
		if err != nil {
			return nil, fmt.Errorf("active sessions: %w", err)
		}
		for _, id := range s {
			active = append(active, -id)
		}
	}
	return active, nil
}
