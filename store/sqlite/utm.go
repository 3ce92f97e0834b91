package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/linkforge/linkforge"
)

// UTMTemplates lists the tenant's UTM templates by name.
func (db *DB) UTMTemplates(ctx context.Context, tenantID int64) ([]linkforge.UTMTemplate, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, tenant_id, name, utm_source, utm_medium, utm_campaign,
		utm_term, utm_content, created_at FROM utm_templates WHERE tenant_id = ? ORDER BY name`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: utm templates: %w", err)
	}
	out := []linkforge.UTMTemplate{}
	err = collectInto(rows, func(r scanner) error {
		t, err := scanUTMTemplate(r)
		out = append(out, t)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: utm templates: %w", err)
	}
	return out, nil
}

func scanUTMTemplate(r scanner) (linkforge.UTMTemplate, error) {
	var (
		t       linkforge.UTMTemplate
		created int64
	)
	err := r.Scan(&t.ID, &t.TenantID, &t.Name, &t.UTM.Source, &t.UTM.Medium, &t.UTM.Campaign,
		&t.UTM.Term, &t.UTM.Content, &created)
	t.CreatedAt = fromMicros(created)
	return t, err
}

// CreateUTMTemplate stores t and its audit event in one transaction; a
// name the tenant has is EConflict.
func (db *DB) CreateUTMTemplate(ctx context.Context, t linkforge.UTMTemplate) (linkforge.UTMTemplate, error) {
	t.CreatedAt = now()
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.UTMTemplate{}, fmt.Errorf("sqlite: create utm template: %w", err)
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, `INSERT INTO utm_templates (tenant_id, name, utm_source, utm_medium, utm_campaign,
		utm_term, utm_content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		t.TenantID, t.Name, t.UTM.Source, t.UTM.Medium, t.UTM.Campaign, t.UTM.Term, t.UTM.Content,
		toMicros(t.CreatedAt)).Scan(&t.ID)
	switch {
	case isUnique(err):
		return linkforge.UTMTemplate{}, &linkforge.Error{Code: linkforge.EConflict, Message: "a UTM template of that name exists", Err: err}
	case isForeignKey(err):
		return linkforge.UTMTemplate{}, &linkforge.Error{Code: linkforge.ENotFound, Message: "tenant not found", Err: err}
	case err != nil:
		return linkforge.UTMTemplate{}, fmt.Errorf("sqlite: create utm template: %w", err)
	}
	if err := db.writes.Begin().UTMTemplateCreated(ctx, writeTx{tx}, t); err != nil {
		return linkforge.UTMTemplate{}, fmt.Errorf("sqlite: create utm template: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.UTMTemplate{}, fmt.Errorf("sqlite: create utm template: %w", err)
	}
	return t, nil
}

// DeleteUTMTemplate deletes the tenant's template id with its audit event.
func (db *DB) DeleteUTMTemplate(ctx context.Context, tenantID, id int64) (linkforge.UTMTemplate, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.UTMTemplate{}, fmt.Errorf("sqlite: delete utm template: %w", err)
	}
	defer tx.Rollback()
	t, err := scanUTMTemplate(tx.QueryRowContext(ctx, `DELETE FROM utm_templates WHERE tenant_id = ? AND id = ?
		RETURNING id, tenant_id, name, utm_source, utm_medium, utm_campaign, utm_term, utm_content, created_at`, tenantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.UTMTemplate{}, notFound("UTM template")
	}
	if err != nil {
		return linkforge.UTMTemplate{}, fmt.Errorf("sqlite: delete utm template: %w", err)
	}
	if err := db.writes.Begin().UTMTemplateDeleted(ctx, writeTx{tx}, t, now()); err != nil {
		return linkforge.UTMTemplate{}, fmt.Errorf("sqlite: delete utm template: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.UTMTemplate{}, fmt.Errorf("sqlite: delete utm template: %w", err)
	}
	return t, nil
}

// Campaigns sums the clicks in q's range of the tenant's links with a
// campaign (found by the partial index links_utm_campaign) by campaign,
// source and medium: whole days from link_daily, the hours at the ends
// from link_hourly, as TopLinks reads them; with a traffic, that value's
// rows of the traffic dimension instead (link_dims_daily, click_dims).
func (db *DB) Campaigns(ctx context.Context, q linkforge.CampaignQuery) ([]linkforge.CampaignCount, error) {
	if err := linkforge.CheckHourRange(q.From, q.To, 1); err != nil {
		return nil, err
	}
	automated, ok := linkforge.TrafficFilter(q.Traffic)
	if !ok {
		return nil, linkforge.CheckTraffic(q.Traffic)
	}
	sp := linkforge.SplitDays(q.From, q.To)
	// ?1 tenant, [?2, ?3) and [?6, ?7) the hours at the ends, [?4, ?5)
	// the days, ?8 the traffic dimension, ?9 its value.
	args := []any{q.TenantID, q.From.Unix(), sp.HeadTo.Unix(), sp.DayFrom.Unix(), sp.DayTo.Unix(),
		sp.TailFrom.Unix(), q.To.Unix()}
	counts := `SELECT link_id, count FROM link_daily WHERE link_id IN (SELECT id FROM c) AND day >= ?4 AND day < ?5
			UNION ALL
			SELECT link_id, count FROM link_hourly WHERE link_id IN (SELECT id FROM c)
			AND ((hour >= ?2 AND hour < ?3) OR (hour >= ?6 AND hour < ?7))`
	if automated != nil {
		args = append(args, linkforge.DimTraffic.String(), q.Traffic)
		counts = `SELECT link_id, count FROM link_dims_daily WHERE link_id IN (SELECT id FROM c)
			AND dimension = ?8 AND value = ?9 AND day >= ?4 AND day < ?5
			UNION ALL
			SELECT link_id, count FROM click_dims WHERE link_id IN (SELECT id FROM c)
			AND dimension = ?8 AND value = ?9 AND ((hour >= ?2 AND hour < ?3) OR (hour >= ?6 AND hour < ?7))`
	}
	rows, err := db.reader.QueryContext(ctx, `WITH c AS (
			SELECT id FROM links WHERE tenant_id = ?1 AND utm_campaign <> ''
		), r AS (`+counts+`
		), g AS (
			SELECT link_id, SUM(count) AS n FROM r GROUP BY link_id HAVING SUM(count) > 0
		)
		SELECT l.utm_campaign, l.utm_source, l.utm_medium, count(*), SUM(g.n)
		FROM g JOIN links l ON l.id = g.link_id
		GROUP BY l.utm_campaign, l.utm_source, l.utm_medium`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: campaigns: %w", err)
	}
	out := []linkforge.CampaignCount{}
	err = collectInto(rows, func(r scanner) error {
		var c linkforge.CampaignCount
		err := r.Scan(&c.Campaign, &c.Source, &c.Medium, &c.Links, &c.Clicks)
		out = append(out, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: campaigns: %w", err)
	}
	linkforge.SortCampaigns(out)
	return out, nil
}
