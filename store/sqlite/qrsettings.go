package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/linkforge/linkforge"
)

// QR settings (migration 00052): one row per tenant (domain_id 0) and per
// domain that has any.

const qrSettingsQuery = `SELECT fg, bg, ec, margin, logo, logo_type FROM qr_settings WHERE tenant_id = ? AND domain_id = ?`

// queryRower is what QRSettings reads with: the reader or a transaction.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func qrSettings(ctx context.Context, q queryRower, tenantID, domainID int64) (linkforge.QRSettings, error) {
	var (
		s      linkforge.QRSettings
		margin sql.NullInt64
	)
	err := q.QueryRowContext(ctx, qrSettingsQuery, tenantID, domainID).Scan(&s.FG, &s.BG, &s.EC, &margin, &s.Logo, &s.LogoType)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.QRSettings{}, nil
	}
	if err != nil {
		return linkforge.QRSettings{}, err
	}
	if margin.Valid {
		m := int(margin.Int64)
		s.Margin = &m
	}
	if len(s.Logo) == 0 {
		s.Logo = nil
	}
	return s, nil
}

// QRSettings returns the tenant's or its domain's QR settings.
func (db *DB) QRSettings(ctx context.Context, tenantID, domainID int64) (linkforge.QRSettings, error) {
	s, err := qrSettings(ctx, db.reader, tenantID, domainID)
	if err != nil {
		return linkforge.QRSettings{}, fmt.Errorf("sqlite: qr settings: %w", err)
	}
	return s, nil
}

// UpdateQRSettings changes them with fn in the write transaction; SQLite's
// one writer serialises concurrent updates and domain deletes.
func (db *DB) UpdateQRSettings(ctx context.Context, tenantID, domainID int64, fn func(*linkforge.QRSettings) error) (linkforge.QRSettings, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.QRSettings{}, fmt.Errorf("sqlite: update qr settings: %w", err)
	}
	defer tx.Rollback()
	var host string // the audit event's target: "" for the tenant's own
	if domainID != linkforge.PublicDomainID {
		err := tx.QueryRowContext(ctx, `SELECT host FROM domains WHERE id = ? AND tenant_id = ?`, domainID, tenantID).Scan(&host)
		if errors.Is(err, sql.ErrNoRows) {
			return linkforge.QRSettings{}, notFound("domain")
		}
		if err != nil {
			return linkforge.QRSettings{}, fmt.Errorf("sqlite: update qr settings: %w", err)
		}
	}
	s, err := qrSettings(ctx, tx, tenantID, domainID)
	if err != nil {
		return linkforge.QRSettings{}, fmt.Errorf("sqlite: update qr settings: %w", err)
	}
	if err := fn(&s); err != nil {
		return linkforge.QRSettings{}, err
	}
	var margin any
	if s.Margin != nil {
		margin = *s.Margin
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO qr_settings (tenant_id, domain_id, fg, bg, ec, margin, logo, logo_type)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id, domain_id) DO UPDATE SET fg = excluded.fg, bg = excluded.bg, ec = excluded.ec,
			margin = excluded.margin, logo = excluded.logo, logo_type = excluded.logo_type`,
		tenantID, domainID, s.FG, s.BG, s.EC, margin, s.Logo, s.LogoType); err != nil {
		return linkforge.QRSettings{}, fmt.Errorf("sqlite: update qr settings: %w", err)
	}
	if err := db.writes.Begin().QRSettingsUpdated(ctx, writeTx{tx}, tenantID, host, now()); err != nil {
		return linkforge.QRSettings{}, fmt.Errorf("sqlite: update qr settings: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.QRSettings{}, fmt.Errorf("sqlite: update qr settings: %w", err)
	}
	return s, nil
}
