package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/linkforge/linkforge/visitor"
)

// DayKey implements visitor.KeyStore: the first candidate stored for day
// is every caller's key. The single writer serializes the insert.
func (db *DB) DayKey(ctx context.Context, day time.Time, candidate visitor.Key) (visitor.Key, error) {
	var key []byte
	err := db.writer.QueryRowContext(ctx,
		`INSERT INTO visitor_keys (day, key) VALUES (?, ?)
		 ON CONFLICT (day) DO UPDATE SET key = key RETURNING key`,
		day.UTC().Unix(), candidate[:]).Scan(&key)
	if err != nil {
		return visitor.Key{}, fmt.Errorf("sqlite: visitor day key: %w", err)
	}
	if len(key) != visitor.KeySize {
		return visitor.Key{}, fmt.Errorf("sqlite: visitor day key of %d bytes", len(key))
	}
	return visitor.Key(key), nil
}

// DeleteKeysBefore implements visitor.KeyStore.
func (db *DB) DeleteKeysBefore(ctx context.Context, day time.Time) error {
	if _, err := db.writer.ExecContext(ctx, `DELETE FROM visitor_keys WHERE day < ?`, day.UTC().Unix()); err != nil {
		return fmt.Errorf("sqlite: delete visitor keys: %w", err)
	}
	return nil
}
