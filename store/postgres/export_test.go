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

// TopLinksRecent is TopLinks' step for a range with no whole day: its
// answer and whether its candidates settled it.
func (db *DB) TopLinksRecent(ctx context.Context, q linkforge.TopLinksQuery) (linkforge.TopLinks, bool, error) {
	return db.topLinksRecent(ctx, q, linkforge.TopLinksCandidates(q.Limit))
}

// ExplainTopLinksRecent returns the EXPLAIN (ANALYZE, FORMAT JSON) of the
// candidates statement of TopLinksRecent.
func (db *DB) ExplainTopLinksRecent(ctx context.Context, q linkforge.TopLinksQuery) ([]byte, error) {
	stmt, args := topRecentCandidates(q, linkforge.TopLinksCandidates(q.Limit))
	var plan []byte
	err := db.pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+stmt, args...).Scan(&plan)
	return plan, err
}

// DomainByIDQuery is DomainByID's statement, for the test of its plan.
const DomainByIDQuery = domainByIDQuery
