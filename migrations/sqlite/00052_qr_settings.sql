-- QR code settings (docs/adr/011-link-fields.md, "Branded QR codes"): a
-- tenant's (domain_id 0) and its domains' defaults for the code's colours,
-- error correction and margin, and a logo. Empty or NULL: unset. No
-- foreign key on domain_id, as on links (0 names no row); DeleteDomain
-- deletes a domain's row.
-- +goose Up
CREATE TABLE qr_settings (
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    domain_id INTEGER NOT NULL DEFAULT 0,
    fg        TEXT    NOT NULL DEFAULT '', -- '#rrggbb'
    bg        TEXT    NOT NULL DEFAULT '',
    ec        TEXT    NOT NULL DEFAULT '' CHECK (ec IN ('', 'L', 'M', 'Q', 'H')),
    margin    INTEGER CHECK (margin BETWEEN 0 AND 16),
    logo      BLOB, -- at most 256 KiB, checked by the API
    logo_type TEXT    NOT NULL DEFAULT '' CHECK (logo_type IN ('', 'image/png', 'image/svg+xml')),
    PRIMARY KEY (tenant_id, domain_id)
);

-- +goose Down
DROP TABLE qr_settings;
