package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// The TLS storage of --tls auto (migration 00014). The keys under a prefix
// are the range [prefix+"/", prefix+"0"): '0' is the byte after '/', and
// the key column's "C" collation compares bytewise, so the primary key's
// index answers it.

var _ linkforge.TLSStore = (*DB)(nil)

// TLSAsset returns the asset at key.
func (db *DB) TLSAsset(ctx context.Context, key string) (linkforge.TLSAsset, error) {
	a := linkforge.TLSAsset{Key: key}
	err := db.pool.QueryRow(ctx, `SELECT value, modified_at FROM tls_assets WHERE key = $1`, key).
		Scan(&a.Value, &a.Modified)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.TLSAsset{}, notFound("tls asset")
	}
	if err != nil {
		return linkforge.TLSAsset{}, fmt.Errorf("postgres: tls asset: %w", err)
	}
	a.Modified = a.Modified.UTC()
	return a, nil
}

// PutTLSAssets writes the assets in one transaction.
func (db *DB) PutTLSAssets(ctx context.Context, assets []linkforge.TLSAsset) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		for _, a := range assets {
			if _, err := tx.Exec(ctx, `INSERT INTO tls_assets (key, value, modified_at) VALUES ($1, $2, $3)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value, modified_at = excluded.modified_at`,
				a.Key, a.Value, a.Modified); err != nil {
				return fmt.Errorf("%s: %w", a.Key, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: put tls assets: %w", err)
	}
	return nil
}

// DeleteTLSAssets removes key and everything under it.
func (db *DB) DeleteTLSAssets(ctx context.Context, key string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM tls_assets WHERE key = $1 OR (key >= $2 AND key < $3)`,
		key, key+"/", key+"0"); err != nil {
		return fmt.Errorf("postgres: delete tls assets: %w", err)
	}
	return nil
}

// TLSAssetKeys returns the keys under prefix, sorted.
func (db *DB) TLSAssetKeys(ctx context.Context, prefix string) ([]string, error) {
	query, args := `SELECT key FROM tls_assets ORDER BY key`, []any(nil)
	if prefix != "" {
		query, args = `SELECT key FROM tls_assets WHERE key >= $1 AND key < $2 ORDER BY key`, []any{prefix + "/", prefix + "0"}
	}
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: tls asset keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: tls asset keys: %w", err)
	}
	if keys == nil {
		keys = []string{}
	}
	return keys, nil
}

// AcquireTLSLock takes the lock if it is free, expired or owner's already.
func (db *DB) AcquireTLSLock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	tag, err := db.pool.Exec(ctx, `INSERT INTO tls_locks (name, owner, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE tls_locks.expires_at <= $4 OR tls_locks.owner = excluded.owner`,
		name, owner, now.Add(ttl), now)
	if err != nil {
		return false, fmt.Errorf("postgres: acquire tls lock: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ExtendTLSLock moves owner's expiry.
func (db *DB) ExtendTLSLock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE tls_locks SET expires_at = $1 WHERE name = $2 AND owner = $3`,
		now.Add(ttl), name, owner)
	if err != nil {
		return false, fmt.Errorf("postgres: extend tls lock: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseTLSLock deletes owner's lock.
func (db *DB) ReleaseTLSLock(ctx context.Context, name, owner string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM tls_locks WHERE name = $1 AND owner = $2`, name, owner); err != nil {
		return fmt.Errorf("postgres: release tls lock: %w", err)
	}
	return nil
}
