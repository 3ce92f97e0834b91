package web

import (
	"context"
	"time"
)

// loopHosts are the hosts a link's targets must not name (the
// redirect-loop check of linkforge.ValidateTargetURL): the public URL's
// host and every verified domain, of any tenant, since this deployment
// serves them all. A pending domain redirects nothing yet and is allowed.
// It reads the host table, reloaded first when stale, so that a domain
// verified through another node counts within the table's TTL.
func (s *Server) loopHosts(ctx context.Context) []string {
	snap := s.hosts.fresh(ctx, s.now())
	if snap == nil || len(snap.byHost) == 0 {
		return s.selfHosts
	}
	out := make([]string, len(s.selfHosts), len(s.selfHosts)+len(snap.byHost))
	copy(out, s.selfHosts)
	for host, e := range snap.byHost {
		if e.verified {
			out = append(out, host)
		}
	}
	return out
}

// fresh returns the table, reloading it first (in the caller's request:
// a link write, not a redirect) when there is none or it is stale; nil
// when the store never answered.
func (t *hostTable) fresh(ctx context.Context, now time.Time) *hostSnapshot {
	if snap := t.cur.Load(); snap != nil && now.UnixNano()-snap.loaded <= int64(hostTableTTL) {
		return snap
	}
	t.reload(ctx)
	return t.cur.Load()
}
