package postgres

import (
	"context"

	"github.com/linkforge/linkforge"
)

// SearchText is the expression searched by QueryLinks, for the test that
// checks the trigram index serves it.
const SearchText = searchText

// TopLinksAll is TopLinks without its candidates step, for the test that
// the step never changes an answer.
func (db *DB) TopLinksAll(ctx context.Context, q linkforge.TopLinksQuery) (linkforge.TopLinks, error) {
	return db.topLinksAll(ctx, q, linkforge.SplitDays(q.From, q.To))
}
