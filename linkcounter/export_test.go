package linkcounter

// actorCount returns the number of live actors.
func (c *Counter) actorCount() int64 { return c.nActors.Load() }
