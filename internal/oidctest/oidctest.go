// Package oidctest runs a real OpenID provider for tests, on 127.0.0.1:
// zitadel/oidc's op package (an OpenID Certified provider library) on its
// example in-memory storage, with one web client. Its login step signs in
// whichever user the test names, without a form.
//
// A test can make the provider misbehave the way a misconfigured one does
// (tokens for another audience or under another issuer name, short-lived
// ID tokens); the tokens are still the provider's own, signed by it.
package oidctest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// The one client the provider knows.
const (
	ClientID     = "linkforge"
	ClientSecret = "linkforge-test-secret"
	tokenPath    = "/oauth/token" //nolint:gosec // G101: a URL path, not a credential
	loginPath    = "/login/username"
	password     = "provider-password"
)

// User is a person the provider knows.
type User struct {
	ID            string
	Email         string
	EmailVerified bool
}

// Provider is a running OpenID provider.
type Provider struct {
	URL string // the issuer

	mu             sync.Mutex
	users          map[string]*storage.User
	signIn         string   // the user id the login step signs in
	audience       []string // nil: the client's own
	tokenIssuer    string   // "": URL
	lifetime       time.Duration
	emailInIDToken bool
}

// Start runs a provider until the test ends, for a client whose redirect
// URL is redirectURL.
func Start(t testing.TB, redirectURL string, users ...User) *Provider {
	t.Helper()
	p := &Provider{users: map[string]*storage.User{}, lifetime: time.Hour}
	for _, u := range users {
		p.users[u.ID] = &storage.User{ID: u.ID, Username: u.ID, Password: password, Email: u.Email,
			EmailVerified: u.EmailVerified, PreferredLanguage: language.English}
	}
	st := &store{Storage: storage.NewStorageWithClients(userStore{p},
		map[string]*storage.Client{ClientID: storage.WebClient(ClientID, ClientSecret, redirectURL)}), p: p}
	cfg := &op.Config{CryptoKey: sha256.Sum256([]byte(t.Name())), CodeMethodS256: true, AuthMethodPost: true,
		SupportedUILocales: []language.Tag{language.English}}
	issuer := func(bool) (op.IssuerFromRequest, error) {
		return func(r *http.Request) string {
			p.mu.Lock()
			defer p.mu.Unlock()
			if r.URL.Path == tokenPath && p.tokenIssuer != "" {
				return p.tokenIssuer
			}
			return p.URL
		}, nil
	}
	prov, err := op.NewProvider(cfg, st, issuer, op.WithAllowInsecure())
	if err != nil {
		t.Fatalf("oidctest: %v", err)
	}
	mux := http.NewServeMux()
	callback := op.AuthCallbackURL(prov)
	mux.Handle(loginPath, op.NewIssuerInterceptor(prov.IssuerFromRequest).HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("authRequestID")
		p.mu.Lock()
		who := p.signIn
		p.mu.Unlock()
		if err := st.CheckUsernamePassword(who, password, id); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
	}))
	mux.Handle(tokenPath, p.rewrite(prov, st))
	mux.Handle("/", prov)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// SignInAs makes the login step sign in the user of that id.
func (p *Provider) SignInAs(id string) { p.mu.Lock(); p.signIn = id; p.mu.Unlock() }

// IssueFor makes the ID tokens name these audiences instead of the
// client: a provider that confuses its clients. The op package always
// adds the requesting client to an ID token's audience, as it should, so
// this one token is the provider's own with its aud claim replaced and
// signed again with the provider's signing key (go-jose), at its token
// endpoint; nil: the provider's tokens as they are.
func (p *Provider) IssueFor(aud ...string) { p.mu.Lock(); p.audience = aud; p.mu.Unlock() }

// IssueAs makes the token endpoint issue its tokens under another issuer
// name than its discovery document's: a provider behind a proxy that
// rewrites its host, or a mix-up with another provider.
func (p *Provider) IssueAs(issuer string) { p.mu.Lock(); p.tokenIssuer = issuer; p.mu.Unlock() }

// IDTokenLifetime sets the lifetime of the ID tokens issued from now on
// (an hour by default).
func (p *Provider) IDTokenLifetime(d time.Duration) { p.mu.Lock(); p.lifetime = d; p.mu.Unlock() }

// EmailInIDToken puts the email claims in the ID token itself; by
// default they are only at the userinfo endpoint, as ZITADEL does.
func (p *Provider) EmailInIDToken(on bool) { p.mu.Lock(); p.emailInIDToken = on; p.mu.Unlock() }

// store is the example storage with the test's knobs on its client and
// its authorization requests.
type store struct {
	*storage.Storage
	p *Provider
}

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{Client: c, p: s.p}, nil
}

type client struct {
	op.Client
	p *Provider
}

func (c client) IDTokenLifetime() time.Duration {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return c.p.lifetime
}

func (c client) IDTokenUserinfoClaimsAssertion() bool {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return c.p.emailInIDToken
}

// userStore is the example storage's view of the provider's users.
type userStore struct{ p *Provider }

func (u userStore) GetUserByID(id string) *storage.User {
	u.p.mu.Lock()
	defer u.p.mu.Unlock()
	return u.p.users[id]
}

func (u userStore) GetUserByUsername(name string) *storage.User { return u.GetUserByID(name) }

func (userStore) ExampleClientID() string { return "service" }

// rewrite serves the token endpoint, replacing the ID token's audience
// when IssueFor asks for it.
func (p *Provider) rewrite(next http.Handler, st *store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		aud := p.audience
		p.mu.Unlock()
		if aud == nil {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
			maps.Copy(w.Header(), rec.Header())
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		tok, err := resign(r.Context(), st, body["id_token"].(string), aud)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		body["id_token"] = tok
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	})
}

// resign returns the ID token with its aud claim replaced, signed with
// the provider's key.
func resign(ctx context.Context, st *store, raw string, aud []string) (string, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("oidctest: an ID token of %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", err
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", err
	}
	claims["aud"] = aud
	if payload, err = json.Marshal(claims); err != nil {
		return "", err
	}
	key, err := st.SigningKey(ctx)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: key.SignatureAlgorithm(), Key: key.Key()},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", key.ID()))
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// Authorize is a browser at the provider: it follows the provider's
// redirects from authURL (the relying party's redirect to the provider)
// until the provider sends it to a URL on host, the relying party's
// callback, which it returns without requesting it.
func Authorize(t testing.TB, authURL, host string) *url.URL {
	t.Helper()
	var back *url.URL
	browser := &http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host == host {
			back = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := browser.Get(authURL)
	if err != nil {
		t.Fatalf("oidctest: %v", err)
	}
	resp.Body.Close()
	if back == nil {
		t.Fatalf("oidctest: the provider answered %d, no redirect to %s", resp.StatusCode, host)
	}
	return back
}
