package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/linkforge/linkforge"
)

// reportColumns are a report's columns, with the reported link's slug
// and tenant (empty when it has none).
const reportColumns = `r.id, COALESCE(r.link_id, 0), COALESCE(l.slug, ''), COALESCE(t.name, ''), r.url, r.reason, r.email,
	r.created_at, r.resolved_at, COALESCE(r.resolution, '')`

const reportFrom = ` FROM abuse_reports r LEFT JOIN links l ON l.id = r.link_id LEFT JOIN tenants t ON t.id = l.tenant_id`

func scanReport(row scanner) (linkforge.Report, error) {
	var (
		r        linkforge.Report
		created  int64
		resolved sql.NullInt64
	)
	if err := row.Scan(&r.ID, &r.LinkID, &r.Slug, &r.Tenant, &r.URL, &r.Reason, &r.Email, &created, &resolved, &r.Resolution); err != nil {
		return r, err
	}
	r.CreatedAt = fromMicros(created)
	if resolved.Valid {
		at := fromMicros(resolved.Int64)
		r.ResolvedAt = &at
	}
	return r, nil
}

// CreateReport implements linkforge.ReportStore.
func (db *DB) CreateReport(ctx context.Context, r linkforge.Report) (linkforge.Report, error) {
	var link any
	if r.LinkID != 0 {
		link = r.LinkID
	}
	var id int64
	if err := db.writer.QueryRowContext(ctx, `INSERT INTO abuse_reports (link_id, url, reason, email, created_at)
		VALUES (?, ?, ?, ?, ?) RETURNING id`, link, r.URL, r.Reason, r.Email, toMicros(now())).Scan(&id); err != nil {
		return linkforge.Report{}, fmt.Errorf("sqlite: create report: %w", err)
	}
	out, err := scanReport(db.writer.QueryRowContext(ctx, `SELECT `+reportColumns+reportFrom+` WHERE r.id = ?`, id))
	if err != nil {
		return linkforge.Report{}, fmt.Errorf("sqlite: create report: %w", err)
	}
	return out, nil
}

// Reports implements linkforge.ReportStore.
func (db *DB) Reports(ctx context.Context, open bool, limit int, before int64) ([]linkforge.Report, error) {
	q := `SELECT ` + reportColumns + reportFrom + ` WHERE 1 = 1`
	var args []any
	if open {
		q += ` AND r.resolved_at IS NULL`
	}
	if before > 0 {
		q += ` AND r.id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY r.id DESC LIMIT ?`
	args = append(args, limit)
	out, err := query(ctx, db.reader, scanReport, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reports: %w", err)
	}
	return out, nil
}

// ResolveReport implements linkforge.ReportStore.
func (db *DB) ResolveReport(ctx context.Context, id int64, resolution string) (linkforge.Report, error) {
	var r linkforge.Report
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = scanReport(tx.QueryRowContext(ctx, `SELECT `+reportColumns+reportFrom+` WHERE r.id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("report")
		}
		if err != nil {
			return err
		}
		if r.ResolvedAt != nil {
			return linkforge.Errorf(linkforge.EConflict, "the report is resolved already (%s)", r.Resolution)
		}
		at := now()
		if _, err := tx.ExecContext(ctx, `UPDATE abuse_reports SET resolved_at = ?, resolution = ? WHERE id = ?`,
			toMicros(at), resolution, id); err != nil {
			return err
		}
		r.ResolvedAt, r.Resolution = &at, resolution
		return db.writes.Begin().ReportResolved(ctx, writeTx{tx}, r, at)
	})
	if err != nil {
		return linkforge.Report{}, wrapWrite("resolve report", err)
	}
	return r, nil
}
