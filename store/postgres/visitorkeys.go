package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/linkforge/linkforge/visitor"
)

// DayKey implements visitor.KeyStore: the first candidate stored for day
// is every node's key. The no-op update makes the row come back whether
// this call inserted it or another node did (it waits for a concurrent
// insert of the same day to commit, then returns that one's key).
func (db *DB) DayKey(ctx context.Context, day time.Time, candidate visitor.Key) (visitor.Key, error) {
	var key []byte
	err := db.pool.QueryRow(ctx,
		`INSERT INTO visitor_keys (day, key) VALUES ($1::date, $2)
		 ON CONFLICT (day) DO UPDATE SET key = visitor_keys.key RETURNING key`,
		day.UTC().Format(time.DateOnly), candidate[:]).Scan(&key)
	if err != nil {
		return visitor.Key{}, fmt.Errorf("postgres: visitor day key: %w", err)
	}
	if len(key) != visitor.KeySize {
		return visitor.Key{}, fmt.Errorf("postgres: visitor day key of %d bytes", len(key))
	}
	return visitor.Key(key), nil
}

// DeleteKeysBefore implements visitor.KeyStore.
func (db *DB) DeleteKeysBefore(ctx context.Context, day time.Time) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM visitor_keys WHERE day < $1::date`,
		day.UTC().Format(time.DateOnly)); err != nil {
		return fmt.Errorf("postgres: delete visitor keys: %w", err)
	}
	return nil
}
