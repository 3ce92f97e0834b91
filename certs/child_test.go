package certs_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/certs"
	"github.com/linkforge/linkforge/internal/acmetest"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/sqlite"
)

// The child node of TestKilledIssuerLeavesNoHalfState: this test binary
// run again, with its configuration in the environment.
const (
	envChild     = "LINKFORGE_CERTS_CHILD" // sqlite or postgres
	envChildDSN  = "LINKFORGE_CERTS_CHILD_DSN"
	envChildDir  = "LINKFORGE_CERTS_CHILD_DIRECTORY"
	envChildCA   = "LINKFORGE_CERTS_CHILD_CA"
	envChildHTTP = "LINKFORGE_CERTS_CHILD_HTTP"
	envChildMode = "LINKFORGE_CERTS_CHILD_MODE" // hang (to be killed) or issue
)

// childMain runs the child node when the environment asks for it: it asks
// for the certificate of host, prints its serial number and exits 0 (mode
// issue), or is killed by the parent while its order is being finalized
// (mode hang). It prints "lock busy" when it finds the issuance lock held.
// It reports whether it ran.
func childMain() bool {
	kind := os.Getenv(envChild)
	if kind == "" {
		return false
	}
	leaf, err := runChild(kind)
	if err != nil || os.Getenv(envChildMode) != "issue" {
		fmt.Fprintln(os.Stderr, "child: the issuance ended:", err)
		os.Exit(3)
	}
	fmt.Println("serial", leaf.SerialNumber)
	os.Exit(0)
	return true
}

// observedStore calls busy when its node finds a lock held.
type observedStore struct {
	linkforge.TLSStore
	busy func(name string)
}

func (s observedStore) AcquireTLSLock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	ok, err := s.TLSStore.AcquireTLSLock(ctx, name, owner, now, ttl)
	if err == nil && !ok {
		s.busy(name)
	}
	return ok, err
}

func runChild(kind string) (*x509.Certificate, error) {
	ctx := context.Background()
	var (
		st  linkforge.TLSStore
		err error
	)
	if kind == "sqlite" {
		st, err = sqlite.Open(ctx, os.Getenv(envChildDSN))
	} else {
		st, err = postgres.Open(ctx, os.Getenv(envChildDSN))
	}
	if err != nil {
		return nil, err
	}
	pem, err := os.ReadFile(os.Getenv(envChildCA))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	m, err := certs.New(certs.Config{
		Store: observedStore{st, func(name string) { fmt.Println("lock busy", name) }}, Policy: certs.AllowHosts(host), PublicHost: host,
		Directory: os.Getenv(envChildDir), Roots: roots, HTTPAddr: os.Getenv(envChildHTTP),
		NodeID: "child", Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil)),
		LockPoll: 20 * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	c1, c2 := net.Pipe()
	go func() { _ = tls.Server(c2, m.TLSConfig()).Handshake() }() // the client sees its failure
	// The parent compares the serial it prints; the child has no root for it.
	client := tls.Client(c1, &tls.Config{ServerName: host, InsecureSkipVerify: true}) //nolint:gosec // G402: see above
	if err := client.Handshake(); err != nil {
		return nil, err
	}
	return client.ConnectionState().PeerCertificates[0], nil
}

// childNode is a child process: another node on the same database.
type childNode struct {
	cmd    *exec.Cmd
	out    *lockedBuffer // stderr and stdout
	lines  chan string   // stdout
	exited chan error
}

// startChild starts a child node in mode, on the database dsn of kind.
func startChild(t *testing.T, kind, dsn, mode string, acme *acmetest.Server, ch *challenges) *childNode {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "acme-ca.pem")
	if err := os.WriteFile(caFile, acme.RootsPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$") //nolint:gosec // G702: the test binary itself
	cmd.Env = append(os.Environ(), envChild+"="+kind, envChildDSN+"="+dsn, envChildMode+"="+mode,
		envChildDir+"="+acme.Directory, envChildCA+"="+caFile, envChildHTTP+"="+ch.ln.Addr().String())
	c := &childNode{cmd: cmd, out: new(lockedBuffer), lines: make(chan string, 16), exited: make(chan error, 1)}
	cmd.Stderr = c.out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			_, _ = c.out.Write([]byte(sc.Text() + "\n"))
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("child's output:\n%s", c.out.String())
		}
	})
	return c
}

// openBackend opens a fresh database of kind; dsn is for a child node.
func openBackend(t *testing.T, kind string) (dsn string, st linkforge.TLSStore) {
	t.Helper()
	if kind == "sqlite" {
		dsn = filepath.Join(t.TempDir(), "linkforge.db")
		return dsn, openSQLite(t, dsn)
	}
	dsn = pgtest.New(t)
	return dsn, openPostgres(t, dsn)
}

// TestTwoNodesIssueOnce: two nodes (this process and a child process)
// sharing one database, asked for the same host at the same time, make one
// ACME order and serve the same certificate. The order of the node that
// took the issuance lock is held at its finalization until the other has
// found the lock held (or, were the lock broken, made an order of its own).
func TestTwoNodesIssueOnce(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			dsn, st := openBackend(t, kind)
			ch := listenChallenges(t)
			acme := acmetest.Start(t, ch.port)
			busy := make(chan struct{})
			observed := observedStore{st, func(name string) {
				if strings.HasPrefix(name, "issue_cert_") {
					closeOnce(busy)
				}
			}}
			m := newManager(t, observed, acme, ch, nodeOptions{})
			ch.serve(t, m)

			acme.OnOrder(func(n int) {
				if n == 2 {
					closeOnce(busy) // the child ordered too: the test fails below
				}
			})
			acme.OnFinalize(func() {
				select {
				case <-busy:
				case <-time.After(30 * time.Second): // a bound: the test fails, not hangs
				}
			})

			type result struct {
				leaf *x509.Certificate
				err  error
			}
			parent := make(chan result, 1)
			go func() {
				leaf, err := handshake(t.Context(), m, host, acme.Issued)
				parent <- result{leaf, err}
			}()
			child := startChild(t, kind, dsn, "issue", acme, ch)
			var serial string
			for line := range child.lines {
				if strings.HasPrefix(line, "lock busy issue_cert_") {
					closeOnce(busy)
				}
				if s, ok := strings.CutPrefix(line, "serial "); ok {
					serial = s
				}
			}
			if err := <-child.exited; err != nil {
				t.Fatalf("the child node: %v", err)
			}
			r := <-parent
			if r.err != nil {
				t.Fatalf("this node: %v", r.err)
			}
			if serial != r.leaf.SerialNumber.String() {
				t.Errorf("the child serves serial %s, this node %s", serial, r.leaf.SerialNumber)
			}
			if n := acme.Orders(host); n != 1 {
				t.Errorf("%d orders for %s, want 1", n, host)
			}
		})
	}
}

var closeMu sync.Mutex

// closeOnce closes c unless it is closed already.
func closeOnce(c chan struct{}) {
	closeMu.Lock()
	defer closeMu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// TestKilledIssuerLeavesNoHalfState: a node killed (SIGKILL) while its
// order is being finalized leaves no certificate, key or metadata in the
// database, only its issuance lock; once the lock's lease has run out,
// another node takes it over and obtains the certificate.
func TestKilledIssuerLeavesNoHalfState(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			dsn, st := openBackend(t, kind)
			ch := listenChallenges(t)
			acme := acmetest.Start(t, ch.port)
			clk := newClock()
			m := newManager(t, st, acme, ch, nodeOptions{now: clk.Now})
			ch.serve(t, m) // answers the child's challenge from the database

			finalizing, release := make(chan struct{}), make(chan struct{})
			acme.OnFinalize(func() {
				closeOnce(finalizing)
				<-release
			})
			defer close(release)

			child := startChild(t, kind, dsn, "hang", acme, ch)
			select {
			case <-finalizing:
			case err := <-child.exited:
				t.Fatalf("the child ended before finalizing: %v", err)
			case <-time.After(time.Minute):
				t.Fatal("the child did not reach finalizing in a minute")
			}
			if err := child.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			for range child.lines {
			}
			if err := <-child.exited; err == nil {
				t.Fatal("the killed child exited 0")
			}
			acme.OnFinalize(nil)

			keys, err := st.TLSAssetKeys(t.Context(), "certificates")
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 0 {
				t.Errorf("the killed node left %q", keys)
			}
			lock := "issue_cert_" + host
			if ok, err := st.AcquireTLSLock(t.Context(), lock, "probe", clk.Now(), time.Second); err != nil || ok {
				t.Errorf("the killed node's lock was free at once (%v, %v), want held until its lease ends", ok, err)
			}

			clk.Add(2 * time.Minute) // past the lease (a minute)
			leaf, err := handshake(t.Context(), m, host, acme.Issued)
			if err != nil {
				t.Fatalf("the surviving node: %v", err)
			}
			if leaf.DNSNames[0] != host {
				t.Errorf("certificate for %v", leaf.DNSNames)
			}
			if n := acme.Orders(host); n != 2 {
				t.Errorf("%d orders, want 2 (the killed node's, the survivor's)", n)
			}
		})
	}
}
