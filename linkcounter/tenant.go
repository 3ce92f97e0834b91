package linkcounter

// UnflushedByTenant returns this node's acknowledged clicks not flushed yet,
// per tenant: what the tenant quotas add to the rollup's monthly count
// (package quota). It walks the live actors: a clean actor counts nothing,
// and an actor with unflushed clicks is never evicted.
func (c *Counter) UnflushedByTenant() map[int64]int64 {
	out := make(map[int64]int64)
	c.actors.rangeActors(func(_ int64, a *actor) bool {
		a.mu.Lock()
		if n := a.unflushed - a.inflight; n > 0 {
			out[a.tenantID] += n
		}
		a.mu.Unlock()
		return true
	})
	return out
}
