package natsbus_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/linkforge/linkforge/internal/bustest"
	"github.com/linkforge/linkforge/internal/natstest"
	"github.com/linkforge/linkforge/natsbus"
)

// linkforgeSubjects are what the LinkForge user may publish and
// subscribe to on the test servers: the bus's subjects, nothing else.
func linkforgeSubjects() *server.Permissions {
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{"linkforge.>"}},
		Subscribe: &server.SubjectPermission{Allow: []string{"linkforge.>"}},
	}
}

// writeFile writes a secret of the test, readable by its user only.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mustRefuseStrangers checks that a client with the given options (none:
// anonymous) cannot publish on LinkForge's subjects: the server refuses
// its connection.
func mustRefuseStrangers(t *testing.T, url, who string, opts ...nats.Option) {
	t.Helper()
	nc, err := nats.Connect(url, append(opts, nats.Timeout(5*time.Second))...)
	if err == nil {
		defer nc.Close()
		perr := nc.Publish("linkforge.cache", []byte(`{}`))
		if perr == nil {
			perr = nc.Flush()
		}
		t.Fatalf("%s: connected to a server that requires credentials; publish on linkforge.cache: %v", who, perr)
	}
	t.Logf("%s: refused: %v", who, err)
}

// mustCarry starts a receiving and a sending bus with auth and checks
// that an event goes from one to the other through the server.
func mustCarry(t *testing.T, url string, auth natsbus.Config) {
	t.Helper()
	rec := bustest.NewRecorder()
	recv := auth
	recv.URL, recv.Node, recv.Handler = url, "receiver", rec
	bustest.StartNode(t, mustBus(t, recv))
	rec.MustWaitResync(t) // connected and subscribed
	send := auth
	send.URL, send.Node = url, "sender"
	sender := mustBus(t, send)
	bustest.StartNode(t, sender)
	sender.PublishInvalidate("", "a")
	rec.MustWaitEvents(t, 1)
}

// TestNKeyAuth: a server that admits one nkey user, LinkForge's, refuses
// an anonymous client and another user's key; the bus with the user's
// seed (--bus-nats-nkey) carries events.
func TestNKeyAuth(t *testing.T) {
	t.Parallel()
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := user.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := user.Seed()
	if err != nil {
		t.Fatal(err)
	}
	srv := natstest.NewWith(t, func(o *server.Options) {
		o.Nkeys = []*server.NkeyUser{{Nkey: pub, Permissions: linkforgeSubjects()}}
	})
	mustRefuseStrangers(t, srv.URL(), "anonymous")
	other, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	otherSeed, err := other.Seed()
	if err != nil {
		t.Fatal(err)
	}
	opt, err := nats.NkeyOptionFromSeed(writeFile(t, "other.nk", otherSeed))
	if err != nil {
		t.Fatal(err)
	}
	mustRefuseStrangers(t, srv.URL(), "another nkey", opt)

	mustCarry(t, srv.URL(), natsbus.Config{NKeyFile: writeFile(t, "linkforge.nk", seed)})
}

// TestCredsAuth: a server in operator mode (JWTs, as nsc sets one up)
// refuses an anonymous client; the bus with the user's .creds file
// (--bus-nats-creds) carries events.
func TestCredsAuth(t *testing.T) {
	t.Parallel()
	operator, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatal(err)
	}
	opPub, _ := operator.PublicKey()
	opJWT, err := jwt.NewOperatorClaims(opPub).Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	opClaims, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		t.Fatal(err)
	}
	account, _ := nkeys.CreateAccount()
	accPub, _ := account.PublicKey()
	accJWT, err := jwt.NewAccountClaims(accPub).Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	user, _ := nkeys.CreateUser()
	userPub, _ := user.PublicKey()
	userSeed, _ := user.Seed()
	uc := jwt.NewUserClaims(userPub)
	uc.Pub.Allow.Add("linkforge.>")
	uc.Sub.Allow.Add("linkforge.>")
	userJWT, err := uc.Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(userJWT, userSeed)
	if err != nil {
		t.Fatal(err)
	}
	resolver := &server.MemAccResolver{}
	if err := resolver.Store(accPub, accJWT); err != nil {
		t.Fatal(err)
	}
	srv := natstest.NewWith(t, func(o *server.Options) {
		o.TrustedOperators = []*jwt.OperatorClaims{opClaims}
		o.AccountResolver = resolver
	})
	mustRefuseStrangers(t, srv.URL(), "anonymous")
	mustCarry(t, srv.URL(), natsbus.Config{CredsFile: writeFile(t, "linkforge.creds", creds)})
}

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "linkforge test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate of the CA and its key, in PEM, for the
// server (127.0.0.1) or a client.
func (ca testCA) issue(t *testing.T, serial int64, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "linkforge test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// TestTLSAuth: a server that requires TLS and a client certificate of
// its CA refuses a plain client and a TLS client without a certificate;
// the bus with the CA, its certificate and key (--bus-nats-ca,
// --bus-nats-cert, --bus-nats-key) carries events.
func TestTLSAuth(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	srvCert, srvKey := ca.issue(t, 2, x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := ca.issue(t, 3, x509.ExtKeyUsageClientAuth)
	pair, err := tls.X509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	srv := natstest.NewWith(t, func(o *server.Options) {
		o.TLS, o.TLSVerify = true, true
		o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool,
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	})
	caFile := writeFile(t, "ca.pem", ca.pem)
	mustRefuseStrangers(t, srv.URL(), "plain")
	mustRefuseStrangers(t, srv.URL(), "TLS without a client certificate", nats.RootCAs(caFile))
	mustCarry(t, srv.URL(), natsbus.Config{CAFile: caFile,
		CertFile: writeFile(t, "client.pem", cliCert), KeyFile: writeFile(t, "client-key.pem", cliKey)})
}

// TestNewRefusesBadAuth: credentials that can never work stop the start
// (New, or Start for the TLS files), naming the file and not its content.
func TestNewRefusesBadAuth(t *testing.T) {
	t.Parallel()
	junk := writeFile(t, "junk", []byte("SECRETJUNK\n"))
	for name, cfg := range map[string]natsbus.Config{
		"creds and nkey":    {CredsFile: junk, NKeyFile: junk},
		"missing creds":     {CredsFile: filepath.Join(t.TempDir(), "missing.creds")},
		"junk creds":        {CredsFile: junk},
		"junk nkey":         {NKeyFile: junk},
		"cert without key":  {CertFile: junk},
		"key without cert":  {KeyFile: junk},
		"junk CA":           {CAFile: junk},
		"junk cert and key": {CertFile: junk, KeyFile: junk},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.URL, cfg.Node = "nats://127.0.0.1:1", "n"
			b, err := natsbus.New(cfg)
			if err == nil {
				err = b.Start(t.Context())
				_ = b.Stop(t.Context())
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "SECRETJUNK") {
				t.Errorf("the error shows the file's content: %v", err)
			}
			var pe *os.PathError
			if name == "missing creds" && !errors.As(err, &pe) {
				t.Errorf("missing file: %v, want the path error", err)
			}
		})
	}
}
