package linkforge

import (
	"context"
	"time"
)

// TLSAsset is one value of the TLS storage of --tls auto: a certificate,
// its private key, its metadata or the ACME account, under a
// slash-separated key ("certificates/acme-v02.../go.acme.com/go.acme.com.crt").
type TLSAsset struct {
	Key      string
	Value    []byte
	Modified time.Time
}

// TLSStore keeps the TLS assets and the cluster-wide issuance locks in the
// main database, so that every node serves the certificates one of them
// obtained (package certs; docs/adr/020-domains.md). Both stores implement it.
type TLSStore interface {
	// TLSAsset returns the asset at key, or an ENotFound error.
	TLSAsset(ctx context.Context, key string) (TLSAsset, error)
	// PutTLSAssets writes every asset, replacing those at the same keys,
	// in one transaction: a certificate and its key are never seen apart.
	PutTLSAssets(ctx context.Context, assets []TLSAsset) error
	// DeleteTLSAssets removes the asset at key and every asset under
	// key + "/"; none there is not an error.
	DeleteTLSAssets(ctx context.Context, key string) error
	// TLSAssetKeys returns the keys under prefix + "/" (every key when
	// prefix is empty), sorted.
	TLSAssetKeys(ctx context.Context, prefix string) ([]string, error)
	// AcquireTLSLock takes the lock name for owner until now+ttl, if no
	// one holds it or its holder's expiry has passed, and reports whether
	// it did. An owner that holds it takes it again.
	AcquireTLSLock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error)
	// ExtendTLSLock moves the expiry of owner's lock to now+ttl and
	// reports whether owner still held it.
	ExtendTLSLock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error)
	// ReleaseTLSLock gives owner's lock up; a lock another owner took
	// since is left alone.
	ReleaseTLSLock(ctx context.Context, name, owner string) error
}
