package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
)

// The TLS storage of --tls auto (migration 00014). The keys under a prefix
// are the range [prefix+"/", prefix+"0"): '0' is the byte after '/', and
// SQLite compares TEXT bytewise, so the primary key's index answers it.

var _ linkforge.TLSStore = (*DB)(nil)

// TLSAsset returns the asset at key.
func (db *DB) TLSAsset(ctx context.Context, key string) (linkforge.TLSAsset, error) {
	a := linkforge.TLSAsset{Key: key}
	var modified int64
	err := db.reader.QueryRowContext(ctx, `SELECT value, modified_at FROM tls_assets WHERE key = ?`, key).
		Scan(&a.Value, &modified)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.TLSAsset{}, notFound("tls asset")
	}
	if err != nil {
		return linkforge.TLSAsset{}, fmt.Errorf("sqlite: tls asset: %w", err)
	}
	a.Modified = fromMicros(modified)
	return a, nil
}

// PutTLSAssets writes the assets in one transaction.
func (db *DB) PutTLSAssets(ctx context.Context, assets []linkforge.TLSAsset) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: put tls assets: %w", err)
	}
	defer tx.Rollback()
	for _, a := range assets {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tls_assets (key, value, modified_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, modified_at = excluded.modified_at`,
			a.Key, a.Value, toMicros(a.Modified)); err != nil {
			return fmt.Errorf("sqlite: put tls asset %s: %w", a.Key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: put tls assets: %w", err)
	}
	return nil
}

// DeleteTLSAssets removes key and everything under it.
func (db *DB) DeleteTLSAssets(ctx context.Context, key string) error {
	if _, err := db.writer.ExecContext(ctx, `DELETE FROM tls_assets WHERE key = ? OR (key >= ? AND key < ?)`,
		key, key+"/", key+"0"); err != nil {
		return fmt.Errorf("sqlite: delete tls assets: %w", err)
	}
	return nil
}

// TLSAssetKeys returns the keys under prefix, sorted.
func (db *DB) TLSAssetKeys(ctx context.Context, prefix string) ([]string, error) {
	query, args := `SELECT key FROM tls_assets ORDER BY key`, []any(nil)
	if prefix != "" {
		query, args = `SELECT key FROM tls_assets WHERE key >= ? AND key < ? ORDER BY key`, []any{prefix + "/", prefix + "0"}
	}
	rows, err := db.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tls asset keys: %w", err)
	}
	defer rows.Close()
	keys := []string{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("sqlite: tls asset keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: tls asset keys: %w", err)
	}
	return keys, nil
}

// AcquireTLSLock takes the lock if it is free, expired or owner's already.
func (db *DB) AcquireTLSLock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	res, err := db.writer.ExecContext(ctx, `INSERT INTO tls_locks (name, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE tls_locks.expires_at <= ? OR tls_locks.owner = excluded.owner`,
		name, owner, toMicros(now.Add(ttl)), toMicros(now))
	if err != nil {
		return false, fmt.Errorf("sqlite: acquire tls lock: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: acquire tls lock: %w", err)
	}
	return n == 1, nil
}

// ExtendTLSLock moves owner's expiry.
func (db *DB) ExtendTLSLock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	res, err := db.writer.ExecContext(ctx, `UPDATE tls_locks SET expires_at = ? WHERE name = ? AND owner = ?`,
		toMicros(now.Add(ttl)), name, owner)
	if err != nil {
		return false, fmt.Errorf("sqlite: extend tls lock: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: extend tls lock: %w", err)
	}
	return n == 1, nil
}

// ReleaseTLSLock deletes owner's lock.
func (db *DB) ReleaseTLSLock(ctx context.Context, name, owner string) error {
	if _, err := db.writer.ExecContext(ctx, `DELETE FROM tls_locks WHERE name = ? AND owner = ?`, name, owner); err != nil {
		return fmt.Errorf("sqlite: release tls lock: %w", err)
	}
	return nil
}
