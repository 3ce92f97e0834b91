package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/linkforge/linkforge"
)

// shareColumns are a share's columns with its link's slug ("" for a tag's).
const shareColumns = `s.id, s.tenant_id, COALESCE(s.link_id, 0), COALESCE(l.slug, ''), COALESCE(l.domain_id, 0), s.tag, s.prefix, s.token_hash,
	s.password_hash, s.expires_at, s.created_at`

func shareScan(r scanner) (linkforge.Share, error) {
	var (
		sh      linkforge.Share
		expires sql.NullInt64
		created int64
	)
	if err := r.Scan(&sh.ID, &sh.TenantID, &sh.LinkID, &sh.Slug, &sh.DomainID, &sh.Tag, &sh.Prefix, &sh.Hash,
		&sh.PasswordHash, &expires, &created); err != nil {
		return sh, err
	}
	if expires.Valid {
		t := fromMicros(expires.Int64)
		sh.ExpiresAt = &t
	}
	sh.CreatedAt = fromMicros(created)
	return sh, nil
}

// CreateShare stores sh and its audit event in one write transaction,
// within MaxSharesPerSubject shares of its link or tag (the single writer
// makes the count and the insert one step).
func (db *DB) CreateShare(ctx context.Context, sh linkforge.Share) (linkforge.Share, error) {
	sh.CreatedAt = now()
	var link sql.NullInt64
	if sh.LinkID != 0 {
		link = sql.NullInt64{Int64: sh.LinkID, Valid: true}
	}
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM stat_shares
			WHERE tenant_id = ? AND link_id IS ? AND tag = ?`, sh.TenantID, link, sh.Tag).Scan(&n); err != nil {
			return err
		}
		if n >= linkforge.MaxSharesPerSubject {
			return linkforge.SharesQuotaExceeded()
		}
		err := tx.QueryRowContext(ctx, `INSERT INTO stat_shares
			(tenant_id, link_id, tag, prefix, token_hash, password_hash, expires_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			sh.TenantID, link, sh.Tag, sh.Prefix, sh.Hash, sh.PasswordHash, nullMicros(sh.ExpiresAt),
			toMicros(sh.CreatedAt)).Scan(&sh.ID)
		if err != nil {
			if isForeignKey(err) {
				return notFound("link")
			}
			return err
		}
		return db.writes.Begin().ShareCreated(ctx, writeTx{tx}, sh)
	})
	if err != nil {
		return linkforge.Share{}, wrapRead("create share", err)
	}
	return sh, nil
}

// ListShares returns the shares of a link (or of a tag when linkID is 0).
func (db *DB) ListShares(ctx context.Context, tenantID, linkID int64, tag string) ([]linkforge.Share, error) {
	var link sql.NullInt64
	if linkID != 0 {
		link, tag = sql.NullInt64{Int64: linkID, Valid: true}, ""
	}
	out, err := query(ctx, db.reader, shareScan, `SELECT `+shareColumns+`
		FROM stat_shares s LEFT JOIN links l ON l.id = s.link_id
		WHERE s.tenant_id = ? AND s.link_id IS ? AND s.tag = ? ORDER BY s.created_at, s.id`, tenantID, link, tag)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list shares: %w", err)
	}
	return out, nil
}

// DeleteShare deletes the share named by prefix of a link (or a tag).
func (db *DB) DeleteShare(ctx context.Context, tenantID, linkID int64, slug, tag, prefix string) error {
	var link sql.NullInt64
	if linkID != 0 {
		link, tag = sql.NullInt64{Int64: linkID, Valid: true}, ""
	}
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM stat_shares WHERE tenant_id = ? AND link_id IS ? AND tag = ? AND prefix = ?`,
			tenantID, link, tag, prefix)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return notFound("share")
		}
		return db.writes.Begin().ShareDeleted(ctx, writeTx{tx}, tenantID, slug, tag, prefix, now())
	})
	return wrapWrite("delete share", err)
}

// ShareByHash returns the share whose token hashes to hash.
func (db *DB) ShareByHash(ctx context.Context, hash []byte) (linkforge.Share, error) {
	sh, err := shareScan(db.reader.QueryRowContext(ctx, `SELECT `+shareColumns+`
		FROM stat_shares s LEFT JOIN links l ON l.id = s.link_id WHERE s.token_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Share{}, notFound("share")
	}
	if err != nil {
		return linkforge.Share{}, fmt.Errorf("sqlite: share: %w", err)
	}
	return sh, nil
}
