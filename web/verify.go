package web

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/redirect"
)

// Domain verification: domain.Verifier checks pending domains (their TXT
// record with --domain-verify dns, their verification URL with http)
// through the node's scheduler and for POST
// /api/v1/domains/{host}/verify; this server answers the verification
// URLs.

const pathVerificationAnswer = "/.well-known/linkforge-domain/:id"

// DomainDialer connects to a domain's host for its verification; tests
// dial a loopback receiver whatever the host (never real DNS).
type DomainDialer func(ctx context.Context, network, addr string) (net.Conn, error)

func (s *Server) newVerifier(cfg Config) (*domain.Verifier, error) {
	return domain.NewVerifier(domain.VerifierConfig{Store: cfg.Store, Mode: cfg.DomainVerify, Dial: cfg.DomainDial,
		Resolver: cfg.DomainResolver, AllowPrivate: cfg.WebhookAllowPrivate, Changed: s.domainChanged, Logger: s.logger, Now: s.now})
}

// verificationAnswer answers GET /.well-known/linkforge-domain/{id} on the
// domain's own host with its token: what the verifier expects from this
// deployment. Any other id or host is 404. The domain is read by its
// primary key: anyone can ask, as often as they like, and a read of every
// domain (50,200 of them took 548 ms) would let them slow every tenant.
func (s *Server) verificationAnswer(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return redirect.WritePage(c, &redirect.PageNotFound)
	}
	d, err := s.store.DomainByID(c.Request().Context(), id)
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		return redirect.WritePage(c, &redirect.PageNotFound)
	}
	if err != nil {
		s.logger.Error("domain verification answer", "error", err)
		return redirect.WritePage(c, &redirect.PageUnavailable)
	}
	if d.Host != linkcache.RequestHost(c.Request().Host) || d.VerifyToken == "" {
		return redirect.WritePage(c, &redirect.PageNotFound)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return blob(c, "text/plain; charset=utf-8", []byte(d.VerifyToken+"\n"))
}

// verifyDomain answers POST /api/v1/domains/{host}/verify: the
// verification runs now, and the domain is answered as it left it.
func (s *Server) verifyDomain(c echo.Context) error {
	ctx := c.Request().Context()
	tenant := tenantID(c)
	d, err := s.domains.Get(ctx, tenant, c.Param("host"))
	if err != nil {
		return err
	}
	d, err = s.verifier.VerifyNow(ctx, d, s.wakeScheduler)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.renderDomain(d))
}
