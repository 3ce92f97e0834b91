package linkforge

// LinkOp is what a write through the admin API did to a link, in the words of
// the live feed's link messages (operation liveFeed in web/openapi.json).
type LinkOp string

// The writes a live dashboard hears of.
const (
	LinkCreated LinkOp = "created"
	LinkUpdated LinkOp = "updated"
	LinkDeleted LinkOp = "deleted"
)

// Valid reports whether op is one of the three writes.
func (op LinkOp) Valid() bool {
	return op == LinkCreated || op == LinkUpdated || op == LinkDeleted
}

// LinkEvent is a link write made through one node's API, as the cluster bus
// carries it to the others: the link's identity only, not its fields. A
// link's JSON can be several times a notification's 7,800 bytes (url,
// fallback_url and three device URLs of up to MaxURLLength bytes each), so
// the receiving node reads the link from the store when the event arrives
// and renders it as its own API does.
type LinkEvent struct {
	Op       LinkOp
	TenantID int64
	// LinkID is 0 when the writer does not know it: an import's links.
	LinkID int64
	Slug   string
	// DomainID is the domain of the link (PublicDomainID: the public
	// host); the slug names the link on it.
	DomainID int64
}
