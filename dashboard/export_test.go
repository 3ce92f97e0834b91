package dashboard

// tenantCount returns the number of live dashboards.
func (h *Hub) tenantCount() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.tenants)
}
