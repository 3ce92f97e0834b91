// Package oidclogin signs users in with an OpenID Connect provider: the
// authorization code flow with PKCE (S256), state and nonce, the ID token
// verified by github.com/coreos/go-oidc (issuer, audience, expiry,
// signature) and the code exchanged by golang.org/x/oauth2.
//
// A verified email claim signs in the user with that email, in a
// server-side session exactly like a password sign-in (package people);
// an unknown verified email joins the auto-join tenant with its role when
// one is configured, and is refused otherwise. What the flow must remember
// between the redirect and the callback travels in a sealed, short-lived
// cookie, so that any node can finish a sign-in another node began
// (docs/adr/023-sessions.md).
//
// The package holds no routes: web serves Begin and Finish.
package oidclogin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/people"
)

// Paths of the flow, under the public URL.
const (
	StartPath    = "/login/oidc"
	CallbackPath = "/login/oidc/callback"
	// cookieName holds the sealed flow; its Path is StartPath, so that
	// only the callback ever receives it.
	cookieName = "linkforge_oidc"
	// flowTTL bounds the time between the redirect and the callback: a
	// person signing in at the provider, and nothing that waits longer.
	flowTTL = 10 * time.Minute
)

// AutoJoin is the tenant and role an unknown verified email joins.
type AutoJoin struct {
	Tenant string
	Role   linkforge.Role
}

// ParseAutoJoin parses TENANT:ROLE (--oidc-auto-join); empty: none.
func ParseAutoJoin(s string) (AutoJoin, error) {
	if s == "" {
		return AutoJoin{}, nil
	}
	tenant, role, ok := strings.Cut(s, ":")
	if !ok || tenant == "" {
		return AutoJoin{}, fmt.Errorf("oidc auto-join %q: want TENANT:ROLE, such as acme:viewer", s)
	}
	r, err := linkforge.ParseRole("role", role)
	if err != nil {
		return AutoJoin{}, fmt.Errorf("oidc auto-join %q: the role must be owner, editor or viewer", s)
	}
	return AutoJoin{Tenant: tenant, Role: r}, nil
}

// Store is what the sign-in reads and writes: the users and, for the
// auto-join, the tenant by name.
type Store interface {
	linkforge.UserStore
	TenantByName(ctx context.Context, name string) (linkforge.Tenant, error)
}

// Config is a Login's settings and dependencies.
type Config struct {
	Issuer       string // the provider's issuer URL (--oidc-issuer)
	ClientID     string
	ClientSecret string
	AutoJoin     AutoJoin // zero: unknown emails are refused
	// RedirectURL is PUBLIC_URL + CallbackPath, as registered at the
	// provider.
	RedirectURL string
	Store       Store
	People      *people.Service
	// HTTPClient talks to the provider; nil: a client with a 30 s timeout.
	HTTPClient *http.Client
	Now        func() time.Time // nil: time.Now; the ID token's expiry is checked against it
	Logger     *slog.Logger     // nil: discard
}

// Login is one deployment's OpenID Connect sign-in.
type Login struct {
	cfg    Config
	seal   sealer
	now    func() time.Time
	logger *slog.Logger

	// The provider's discovery document is read at the first sign-in, not
	// at start-up: a provider that is down must not keep LinkForge from
	// starting, and a failed read is tried again at the next sign-in.
	mu       sync.Mutex
	provider *oidc.Provider
}

// New returns a Login on cfg; it does not contact the provider.
func New(cfg Config) (*Login, error) {
	switch {
	case cfg.Issuer == "" || cfg.ClientID == "" || cfg.ClientSecret == "":
		return nil, errors.New("oidclogin: the issuer, client id and client secret are all required")
	case cfg.Store == nil || cfg.People == nil || cfg.RedirectURL == "":
		return nil, errors.New("oidclogin: Config.Store, People and RedirectURL are required")
	}
	s, err := newSealer(cfg.ClientSecret)
	if err != nil {
		return nil, err
	}
	l := &Login{cfg: cfg, seal: s, now: cfg.Now, logger: cfg.Logger}
	if l.cfg.HTTPClient == nil {
		l.cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.logger == nil {
		l.logger = slog.New(slog.DiscardHandler)
	}
	return l, nil
}

// discover returns the provider, reading its discovery document once.
func (l *Login) discover(ctx context.Context) (*oidc.Provider, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.provider != nil {
		return l.provider, nil
	}
	// The key set the provider keeps fetches with the context's client
	// for as long as the process runs: not the request's context.
	pctx := oidc.ClientContext(context.WithoutCancel(ctx), l.cfg.HTTPClient)
	p, err := oidc.NewProvider(pctx, l.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidclogin: discovery of %s: %w", l.cfg.Issuer, err)
	}
	l.provider = p
	return p, nil
}

func (l *Login) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: l.cfg.ClientID, ClientSecret: l.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: l.cfg.RedirectURL, Scopes: []string{oidc.ScopeOpenID, "email"}}
}

// random returns 256 random bits, URL-safe.
func random() string {
	var b [32]byte
	rand.Read(b[:]) // never fails: crypto/rand panics rather than return weak bytes
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Begin starts a sign-in: the provider's URL to send the browser to, and
// the cookie that carries the flow to the callback. secure says whether
// the browser talks HTTPS to this server.
func (l *Login) Begin(ctx context.Context, secure bool) (string, *http.Cookie, error) {
	p, err := l.discover(ctx)
	if err != nil {
		return "", nil, err
	}
	f := flow{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Expires: l.now().Add(flowTTL)}
	u := l.oauth(p).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier))
	return u, l.cookie(l.seal.seal(f), int(flowTTL/time.Second), secure), nil
}

// ClearCookie is the cookie that deletes the flow's: the callback sends
// it whatever the outcome, so that a flow is finished at most once.
func (l *Login) ClearCookie(secure bool) *http.Cookie { return l.cookie("", -1, secure) }

func (l *Login) cookie(value string, maxAge int, secure bool) *http.Cookie {
	// SameSite=Lax: the provider's redirect back is a top-level GET from
	// another site, which Lax lets through and a form post from a third
	// site does not.
	//nolint:gosec // G124: Secure whenever the browser talks HTTPS to us; over plain HTTP a Secure cookie would never come back
	return &http.Cookie{Name: cookieName, Value: value, Path: StartPath, MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: secure}
}

// Result is a finished sign-in.
type Result struct {
	User    linkforge.User
	Session people.NewSession
	Joined  bool // the user was added to the auto-join tenant
}

// Refusal is a sign-in refused: no session was made. Reason is a stable
// code for the log; Message says, in plain text, what the person can do.
type Refusal struct {
	Reason  string
	Message string
	Err     error // the detail, for the log only
}

func (r *Refusal) Error() string {
	if r.Err != nil {
		return "oidc sign-in refused (" + r.Reason + "): " + r.Err.Error()
	}
	return "oidc sign-in refused (" + r.Reason + ")"
}

func (r *Refusal) Unwrap() error { return r.Err }

func refuse(reason, message string, err error) *Refusal {
	return &Refusal{Reason: reason, Message: message, Err: err}
}

const msgAgain = "Please go back to the sign-in page and try again."

// Finish completes a sign-in from the provider's redirect to the
// callback: the flow's cookie must match the state, the code is exchanged
// (with the PKCE verifier) for an ID token, which must verify and carry
// the flow's nonce and a verified email. A refused sign-in is a *Refusal;
// any other error is the server's or the provider's trouble.
func (l *Login) Finish(ctx context.Context, r *http.Request) (Result, error) {
	res, err := l.finish(ctx, r)
	if rf := (*Refusal)(nil); errors.As(err, &rf) {
		l.logger.Warn("sign-in refused", "method", "oidc", "reason", rf.Reason, "error", err.Error())
	} else if err != nil {
		l.logger.Error("sign-in failed", "method", "oidc", "error", err.Error())
	} else {
		l.logger.Info("signed in", "method", "oidc", "user_id", res.User.ID, "session_id", res.Session.Session.ID, "joined", res.Joined)
	}
	return res, err
}

func (l *Login) finish(ctx context.Context, r *http.Request) (Result, error) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return Result{}, refuse("provider_error", "The identity provider refused the sign-in ("+e+"). "+msgAgain,
			fmt.Errorf("%s: %s", e, q.Get("error_description")))
	}
	f, err := l.flowOf(r)
	if err != nil {
		return Result{}, err
	}
	p, err := l.discover(ctx)
	if err != nil {
		return Result{}, err
	}
	email, err := l.verifiedEmail(ctx, p, f, q.Get("code"))
	if err != nil {
		return Result{}, err
	}
	u, joined, err := l.user(ctx, email)
	if err != nil {
		return Result{}, err
	}
	ns, err := l.cfg.People.StartSession(ctx, u.ID, r.UserAgent())
	if err != nil {
		return Result{}, fmt.Errorf("oidc sign-in: %w", err)
	}
	return Result{User: u, Session: ns, Joined: joined}, nil
}

// flowOf opens the request's flow cookie and checks the state against it.
func (l *Login) flowOf(r *http.Request) (flow, error) {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return flow{}, refuse("state", "This sign-in was not started here, or took too long. "+msgAgain, errBadCookie)
	}
	f, err := l.seal.open(ck.Value, l.now())
	if err != nil {
		return flow{}, refuse("state", "This sign-in was not started here, or took too long. "+msgAgain, err)
	}
	if s := r.URL.Query().Get("state"); s == "" || subtle.ConstantTimeCompare([]byte(s), []byte(f.State)) != 1 {
		return flow{}, refuse("state", "This sign-in does not match the one started in this browser. "+msgAgain,
			errors.New("the state does not match the flow cookie's"))
	}
	return f, nil
}

// claims are the ID token's claims the sign-in reads. email_verified is
// a boolean, or the string "true" as some providers send it.
type claims struct {
	Email         string `json:"email"`
	EmailVerified any    `json:"email_verified"`
}

// emailClaims returns the email claims of the ID token or, when it has
// none (providers such as ZITADEL keep them at the userinfo endpoint
// unless told otherwise), of the userinfo answer for the same subject.
func (l *Login) emailClaims(ctx context.Context, p *oidc.Provider, tok *oauth2.Token, idt *oidc.IDToken) (claims, error) {
	var c claims
	if err := idt.Claims(&c); err != nil {
		return claims{}, refuse("id_token", "The identity provider's answer could not be read.", err)
	}
	if c.Email != "" || c.EmailVerified != nil {
		return c, nil
	}
	ui, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		return claims{}, fmt.Errorf("oidc sign-in: userinfo: %w", err)
	}
	if ui.Subject != idt.Subject {
		// OpenID Connect Core 5.3.2: a userinfo answer about another
		// subject must not be used.
		return claims{}, refuse("userinfo", "The identity provider's answer could not be verified. "+msgAgain,
			fmt.Errorf("userinfo subject %q is not the ID token's %q", ui.Subject, idt.Subject))
	}
	return claims{Email: ui.Email, EmailVerified: ui.EmailVerified}, nil
}

// verifiedEmail exchanges the code and returns the ID token's verified
// email, lowercased.
func (l *Login) verifiedEmail(ctx context.Context, p *oidc.Provider, f flow, code string) (string, error) {
	if code == "" {
		return "", refuse("exchange", "The identity provider sent no authorization code. "+msgAgain, errors.New("no code"))
	}
	ctx = oidc.ClientContext(ctx, l.cfg.HTTPClient)
	tok, err := l.oauth(p).Exchange(ctx, code, oauth2.VerifierOption(f.Verifier))
	if rerr := (*oauth2.RetrieveError)(nil); errors.As(err, &rerr) {
		// The provider refused the code: used already, expired, or not
		// issued for this verifier.
		return "", refuse("exchange", "The identity provider did not accept this sign-in. "+msgAgain, err)
	}
	if err != nil {
		return "", fmt.Errorf("oidc sign-in: code exchange: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", refuse("id_token", "The identity provider sent no ID token.", errors.New("no id_token in the token response"))
	}
	idt, err := p.VerifierContext(ctx, &oidc.Config{ClientID: l.cfg.ClientID, Now: l.now}).Verify(ctx, raw)
	if err != nil {
		reason := "id_token"
		if te := (*oidc.TokenExpiredError)(nil); errors.As(err, &te) {
			reason = "id_token_expired"
		}
		return "", refuse(reason, "The identity provider's answer could not be verified. "+msgAgain, err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		return "", refuse("nonce", "The identity provider's answer is not for this sign-in. "+msgAgain,
			errors.New("the ID token's nonce does not match the flow's"))
	}
	c, err := l.emailClaims(ctx, p, tok, idt)
	if err != nil {
		return "", err
	}
	if c.EmailVerified != true && c.EmailVerified != "true" {
		return "", refuse("email_unverified", "Your identity provider has not verified your email address, so it cannot sign you in here.",
			fmt.Errorf("email_verified is %v", c.EmailVerified))
	}
	email, err := people.CheckEmail(c.Email)
	if err != nil {
		return "", refuse("no_email", "Your identity provider sent no usable email address.", fmt.Errorf("email %q: %w", c.Email, err))
	}
	return email, nil
}

// user returns the user with email, adding an unknown one to the
// auto-join tenant if there is one.
func (l *Login) user(ctx context.Context, email string) (linkforge.User, bool, error) {
	u, err := l.cfg.Store.UserByEmail(ctx, email)
	switch {
	case err == nil:
		ms, err := l.cfg.Store.Memberships(ctx, u.ID)
		if err != nil {
			return linkforge.User{}, false, fmt.Errorf("oidc sign-in: %w", err)
		}
		if len(ms) == 0 {
			// Removed from every tenant: the auto-join must not undo an
			// owner's removal, so only unknown emails join.
			return linkforge.User{}, false, refuse("no_tenant", email+" belongs to no tenant here. Ask an owner to invite you.", nil)
		}
		return u, false, nil
	case linkforge.ErrorCode(err) != linkforge.ENotFound:
		return linkforge.User{}, false, fmt.Errorf("oidc sign-in: %w", err)
	case l.cfg.AutoJoin.Tenant == "":
		return linkforge.User{}, false, refuse("unknown_user", email+" has no account here. Ask an owner to invite you.", nil)
	}
	return l.join(ctx, email)
}

// join adds email to the auto-join tenant with its role. The audit event
// (user.invite) names the joining user as its actor.
func (l *Login) join(ctx context.Context, email string) (linkforge.User, bool, error) {
	t, err := l.cfg.Store.TenantByName(ctx, l.cfg.AutoJoin.Tenant)
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		return linkforge.User{}, false, refuse("auto_join_tenant",
			"Single sign-on is misconfigured here: the tenant new users join does not exist. Please tell the administrator.",
			fmt.Errorf("no tenant %q (--oidc-auto-join)", l.cfg.AutoJoin.Tenant))
	}
	if err != nil {
		return linkforge.User{}, false, fmt.Errorf("oidc sign-in: auto-join tenant %q: %w", l.cfg.AutoJoin.Tenant, err)
	}
	actx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorUser, Name: email})
	// No ticket: the user signs in with the provider and sets no password.
	// The user's own sign-in is their consent: they join at once.
	res, err := l.cfg.Store.InviteUser(actx, linkforge.Invite{TenantID: t.ID, Email: email, Role: l.cfg.AutoJoin.Role})
	u := res.User
	if linkforge.ErrorCode(err) == linkforge.EConflict {
		// A sign-in of the same person on another tab or node joined
		// first: theirs is the membership.
		u, err = l.cfg.Store.UserByEmail(ctx, email)
		return u, false, err
	}
	if err != nil {
		return linkforge.User{}, false, fmt.Errorf("oidc sign-in: auto-join: %w", err)
	}
	return u, true, nil
}
