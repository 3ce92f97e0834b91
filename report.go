package linkforge

import (
	"context"
	"time"
)

// The resolutions of an abuse Report.
const (
	ReportBlock   = "block"   // the operator blocked the reported link
	ReportDismiss = "dismiss" // the operator found nothing to do
)

// Bounds of a Report's fields, in characters.
const (
	MaxReportReason = 1000
	MaxReportURL    = 2048
	MaxReportEmail  = 254
)

// Report is an abuse report: anyone may send one about a short URL
// (POST /api/v1/reports, the /report form); the operator lists and
// resolves them. It never holds the link's target.
type Report struct {
	ID int64
	// LinkID is the reported link, 0 when the URL named none (or the link
	// was deleted since); Slug and Tenant name it for the operator.
	LinkID     int64
	Slug       string
	Tenant     string
	URL        string // as the reporter sent it
	Reason     string
	Email      string // the reporter's, optional
	CreatedAt  time.Time
	ResolvedAt *time.Time // nil: open
	Resolution string     // ReportBlock, ReportDismiss, or "" while open
}

// ReportStore keeps abuse reports.
type ReportStore interface {
	// CreateReport stores r and returns it with its ID and CreatedAt.
	CreateReport(ctx context.Context, r Report) (Report, error)
	// Reports returns up to limit reports newest first, with ids below
	// before (0: from the newest); open keeps the unresolved ones only.
	Reports(ctx context.Context, open bool, limit int, before int64) ([]Report, error)
	// ResolveReport records the operator's resolution of the report id,
	// audited in the operator's log (report.block, report.dismiss).
	// ENotFound: no such report; EConflict: resolved already.
	ResolveReport(ctx context.Context, id int64, resolution string) (Report, error)
}
