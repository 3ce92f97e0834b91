-- Domains: a tenant's own hosts (go.acme.com), and the domain of each link.

-- +goose Up
CREATE TABLE domains (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id       BIGINT      NOT NULL REFERENCES tenants (id),
    host            TEXT        NOT NULL UNIQUE, -- across tenants; the redirect lookup
    state           TEXT        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'verified')),
    is_default      BOOLEAN     NOT NULL DEFAULT false,
    root_url        TEXT        NOT NULL DEFAULT '', -- empty: --root-url
    not_found_url   TEXT        NOT NULL DEFAULT '', -- empty: --not-found-url
    created_at      TIMESTAMPTZ NOT NULL,
    verified_at     TIMESTAMPTZ,
    -- verification attempts of a pending domain, retried with the alarm
    -- backoff; verify_due_at is the next one (NULL: none planned)
    verify_attempts INTEGER     NOT NULL DEFAULT 0 CHECK (verify_attempts >= 0),
    verify_due_at   TIMESTAMPTZ,
    verify_error    TEXT        NOT NULL DEFAULT '',
    -- what this deployment answers at the domain's verification URL: a
    -- random secret, the same on every node since it is read from here
    verify_token    TEXT        NOT NULL DEFAULT ''
);
-- at most one default domain per tenant
CREATE UNIQUE INDEX domains_tenant_default ON domains (tenant_id) WHERE is_default;
CREATE INDEX domains_tenant ON domains (tenant_id, host);
CREATE INDEX domains_verify_due ON domains (verify_due_at) WHERE state = 'pending';

-- 0: the public URL's host, where every link made before domains existed
-- stays; otherwise a row of domains (no foreign key, because 0 is not one:
-- DeleteDomain refuses a domain in use, under a lock CreateLink shares).
ALTER TABLE links ADD COLUMN domain_id BIGINT NOT NULL DEFAULT 0;
-- A slug is unique per domain; on the public host (0) that is across
-- tenants, as before. The redirect lookup.
ALTER TABLE links ADD CONSTRAINT links_domain_slug UNIQUE (domain_id, slug);
ALTER TABLE links DROP CONSTRAINT links_slug_key;

-- +goose Down
-- Refused (a UNIQUE violation) while two links of different domains share
-- a slug: delete the links of the custom domains first.
ALTER TABLE links ADD CONSTRAINT links_slug_key UNIQUE (slug);
ALTER TABLE links DROP CONSTRAINT links_domain_slug;
ALTER TABLE links DROP COLUMN domain_id;
DROP TABLE domains;
