package certs

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/certmagic"
)

// Start runs the renewal pass now and then every CheckInterval, until Stop.
// certmagic runs its own maintenance as well, on the wall clock; this pass
// is the one that learns of the certificates other nodes obtained or
// renewed, and whose clock tests can move.
func (m *Manager) Start(ctx context.Context) {
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(m.done)
		ticker := time.NewTicker(m.cfg.CheckInterval)
		defer ticker.Stop()
		for {
			if err := m.Maintain(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("certificate maintenance failed", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-m.stop:
				return
			case <-ticker.C:
			}
		}
	}()
}

// Stop ends the renewal pass and certmagic's maintenance, and releases the
// issuance locks this node still holds.
func (m *Manager) Stop(ctx context.Context) error {
	if m.stop != nil {
		close(m.stop)
		select {
		case <-m.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.cache.Stop()
	return m.storage.releaseAll(ctx)
}

// Maintain runs the renewal pass once: it reads every stored certificate,
// renews those in their renewal window that the policy still allows (one
// node per host: a lock in the storage), and replaces in this node's memory
// the certificates another node renewed.
func (m *Manager) Maintain(ctx context.Context) error {
	leaves, err := m.storedLeaves(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for host, leaf := range leaves {
		m.setLeaf(host, leaf)
		if m.due(leaf) {
			if err := m.cfg.Policy(ctx, host); err != nil {
				// A domain removed or no longer verified: its certificate
				// runs out.
				m.log.Info("certificate not renewed: host no longer allowed", "host", host, "error", err)
				continue
			}
			if _, ok := m.backingOff(host); ok {
				continue // its last renewal failed: not again before its backoff ends
			}
			if leaf, err = m.renew(ctx, host, leaf); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := m.syncCache(ctx, host, leaf); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// due reports whether leaf is in its renewal window on the pass's clock.
func (m *Manager) due(leaf *x509.Certificate) bool {
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	window := time.Duration(float64(lifetime) * m.cfg.RenewRatio)
	return !m.cfg.Now().Before(leaf.NotAfter.Add(-window))
}

// renew renews host's certificate seen, unless another node is doing it,
// or has done it since the pass read the storage. It returns the
// certificate stored when it is done.
func (m *Manager) renew(ctx context.Context, host string, seen *x509.Certificate) (*x509.Certificate, error) {
	lock := "renew_" + host
	ok, err := m.storage.TryLock(ctx, lock)
	if err != nil {
		return nil, err
	}
	if !ok {
		return m.storedLeaf(ctx, host) // another node renews it
	}
	defer func() {
		if err := m.storage.Unlock(ctx, lock); err != nil {
			m.log.Warn("renewal lock not released; its lease runs out", "host", host, "error", err)
		}
	}()
	leaf, err := m.storedLeaf(ctx, host)
	if err != nil {
		return nil, err
	}
	if leaf.SerialNumber.Cmp(seen.SerialNumber) != 0 || !m.due(leaf) {
		return leaf, nil // renewed by another node
	}
	// Forced: certmagic would judge the window on the wall clock.
	if err := m.magic.RenewCertSync(ctx, host, true); err != nil {
		return nil, fmt.Errorf("certs: renew %s: %w", host, err)
	}
	if leaf, err = m.storedLeaf(ctx, host); err != nil {
		return nil, err
	}
	m.setLeaf(host, leaf)
	return leaf, nil
}

// syncCache replaces the certificate of host in this node's memory when
// the stored one is another (renewed by another node). A host not in
// memory is loaded from the storage at its next handshake.
func (m *Manager) syncCache(ctx context.Context, host string, leaf *x509.Certificate) error {
	cached := m.cache.AllMatchingCertificates(host)
	if len(cached) == 0 {
		return nil
	}
	for _, c := range cached {
		if c.Leaf != nil && c.Leaf.SerialNumber.Cmp(leaf.SerialNumber) == 0 {
			return nil
		}
	}
	m.cache.RemoveManaged([]certmagic.SubjectIssuer{{Subject: host}})
	if _, err := m.magic.CacheManagedCertificate(ctx, host); err != nil {
		return fmt.Errorf("certs: reload %s: %w", host, err)
	}
	return nil
}
