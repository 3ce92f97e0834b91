package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// superuser is the role initdb creates; URLs of throwaway servers use it, so
// they do not depend on which OS user runs the tests.
const superuser = "postgres"

// readyTimeout bounds the wait for a starting server to accept connections.
const readyTimeout = 60 * time.Second

// binaries are the PostgreSQL server programs a throwaway server needs.
type binaries struct {
	initdb   string
	postgres string
}

// findBinaries looks for initdb and postgres on PATH (through lookPath), and
// otherwise in the newest version directory matching versionGlob (normally
// /usr/lib/postgresql/*/bin, where Debian installs them off PATH).
func findBinaries(lookPath func(string) (string, error), versionGlob string) (binaries, bool) {
	initdb, err1 := lookPath("initdb")
	postgres, err2 := lookPath("postgres")
	if err1 == nil && err2 == nil {
		return binaries{initdb: initdb, postgres: postgres}, true
	}
	dirs, _ := filepath.Glob(versionGlob)
	// Newest first by numeric version: "9.6" < "15" although it sorts after it.
	sort.Slice(dirs, func(i, j int) bool {
		return versionLess(versionOf(dirs[j], versionGlob), versionOf(dirs[i], versionGlob))
	})
	for _, dir := range dirs {
		b := binaries{initdb: filepath.Join(dir, "initdb"), postgres: filepath.Join(dir, "postgres")}
		if isExecutable(b.initdb) && isExecutable(b.postgres) {
			return b, true
		}
	}
	return binaries{}, false
}

// versionOf extracts the part of dir that the glob's "*" matched.
func versionOf(dir, glob string) string {
	prefix, suffix, _ := strings.Cut(glob, "*")
	return strings.TrimSuffix(strings.TrimPrefix(dir, prefix), suffix)
}

// versionLess compares dotted numeric versions ("9.6" < "15" < "15.1");
// anything unparsable sorts first, so it is tried last.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// serverCredential returns the identity to run initdb and postgres as. Both
// refuse to run as root, and CI runs as root: then they run as the postgres
// user, or nobody. Otherwise (nil) they run as the current user.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
	}
	return nil, errors.New("running as root and neither the postgres nor the nobody user exists; PostgreSQL refuses to run as root")
}

// Server is a throwaway PostgreSQL server: a data directory in a temporary
// directory and a postgres process listening on 127.0.0.1. It can be stopped
// and started again on the same port with the same data, which is what
// outage tests need.
type Server struct {
	t       testing.TB // nil for the shared server, whose errors are returned
	bins    binaries
	cred    *syscall.Credential
	dir     string // removed by close
	dataDir string
	sockDir string // "" when the path is too long for a unix socket
	logPath string

	mu   sync.Mutex
	port int
	proc *exec.Cmd
	done chan struct{} // closed once proc has exited
}

// NewServer starts a private throwaway PostgreSQL server for t, separate from
// the one New uses, and stops and removes it when t ends. It skips t (or fails
// it under LINKFORGE_REQUIRE_POSTGRES=1) when no PostgreSQL server binaries
// are installed; LINKFORGE_TEST_DATABASE_URL does not help here, because a
// test cannot stop and start an external server.
func NewServer(t testing.TB) *Server {
	t.Helper()
	bins, ok := findBinaries(exec.LookPath, versionGlob)
	if !ok {
		unavailable(t, "pgtest.NewServer needs the PostgreSQL server binaries, because it stops and starts its own server "+
			"(LINKFORGE_TEST_DATABASE_URL cannot be used for that): "+installHint)
	}
	s, err := startServer(bins)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	s.t = t
	t.Cleanup(func() {
		if err := s.close(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return s
}

// URL returns the connection URL of database db on s.
func (s *Server) URL(db string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return serverURL(s.port, db)
}

func serverURL(port int, db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(superuser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// NewDatabase creates a fresh, empty database on s and returns its URL. It is
// not dropped: it goes with the server when the test ends, and an outage
// test may well end with the server stopped.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, s.URL("postgres"), s.URL, false)
}

// Stop shuts the server down (fast shutdown: sessions are disconnected and
// open transactions rolled back) and waits until it has exited. Clients see
// connection errors until Start. Call it from the test goroutine: it fails
// the test on error.
func (s *Server) Stop() {
	s.t.Helper()
	if err := s.stop(); err != nil {
		s.t.Fatalf("pgtest: %v", err)
	}
}

// Start starts a stopped server again, on the same port with the same data,
// and waits until it accepts connections. Call it from the test goroutine:
// it fails the test on error.
func (s *Server) Start() {
	s.t.Helper()
	if err := s.start(false); err != nil {
		s.t.Fatalf("pgtest: %v", err)
	}
}

// shmDir is a RAM-backed file system on most Linux machines.
const shmDir = "/dev/shm"

// minShmFree is the room a throwaway server needs in shmDir: a million links
// with their indexes and the WAL of loading them, with margin. Docker's
// default /dev/shm of 64 MB is far below it, and then the disk is used.
const minShmFree = 3 << 30

// tempBase returns where to put a server's directory: shmDir when it is
// writable and has room, else the usual temporary directory. On disk, even
// with fsync=off, CREATE DATABASE takes several times longer (it creates
// and writes hundreds of files), and every test pays for one.
func tempBase() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(shmDir, &st); err != nil || st.Bavail*uint64(st.Bsize) < minShmFree { //nolint:gosec // G115: Bsize is the filesystem block size, positive
		return ""
	}
	if syscall.Access(shmDir, 2 /* W_OK */) != nil {
		return ""
	}
	return shmDir
}

// Server directories are named dirPrefix*, and hold ownerFile with the pid
// of the test process that created them.
const (
	dirPrefix = "linkforge-pgtest-"
	ownerFile = "owner.pid"
)

// removeStale removes the server directories of test processes that are
// gone. A test binary killed by a signal or a -timeout panic cannot remove
// its directory (its server dies with it, by Pdeathsig), and in /dev/shm a
// leftover costs memory until reboot.
func removeStale(base string) {
	if base == "" {
		base = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(base, dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			// Written right after the directory is created: only a
			// directory caught in between, or one from a crash at that
			// instant, lacks it. Leave young ones alone.
			if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > time.Minute {
				os.RemoveAll(dir)
			}
			continue
		}
		pid, err := strconv.Atoi(string(b))
		if err != nil || pid <= 0 {
			continue
		}
		// ESRCH: no such process. EPERM means it exists under another user.
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(dir)
		}
	}
}

// startServer creates a data directory with initdb and starts postgres on a
// free port.
func startServer(bins binaries) (_ *Server, err error) {
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	base := tempBase()
	removeStale(base)
	dir, err := os.MkdirTemp(base, dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("create temp dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("create temp dir: %w", err)
	}
	s := &Server{
		bins:    bins,
		cred:    cred,
		dir:     dir,
		dataDir: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "postgres.log"),
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	// The socket path must fit in sun_path (108 bytes) with ".s.PGSQL.NNNNN".
	if sock := filepath.Join(dir, "sock"); len(sock) < 90 {
		if err := os.Mkdir(sock, 0o700); err != nil {
			return nil, fmt.Errorf("create socket dir: %w", err)
		}
		s.sockDir = sock
	}
	if cred != nil {
		// initdb creates the data directory inside dir, as the server user.
		for _, p := range []string{dir, s.sockDir} {
			if p == "" {
				continue
			}
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, fmt.Errorf("chown %s to the server user: %w", p, err)
			}
		}
	}
	if err := s.initdb(); err != nil {
		return nil, err
	}
	if err := s.start(true); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) initdb() error {
	cmd := exec.Command(s.bins.initdb,
		"-D", s.dataDir,
		"-U", superuser,
		"--auth=trust",
		"--encoding=UTF8",
		"--locale=C",
		"--no-sync", // the data dir is thrown away: do not wait for the disk
		"--no-instructions",
	)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb %s: %w\n%s", s.dataDir, err, out)
	}
	return nil
}

// start launches postgres and waits until it accepts connections. With
// newPort it picks a free port, retrying with another one if the port was
// taken between the pick and the bind; otherwise it reuses s.port.
func (s *Server) start(newPort bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return errors.New("start: the server is already running")
	}
	const attempts = 3
	var err error
	for range attempts {
		if newPort {
			if s.port, err = freePort(); err != nil {
				return err
			}
		}
		if err = s.launch(); err == nil || !newPort || !strings.Contains(err.Error(), "could not bind") {
			return err
		}
	}
	return err
}

// freePort asks the kernel for a port that is free now. Another process may
// take it before postgres binds it; start retries in that case.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch runs postgres directly (not through pg_ctl) so that Pdeathsig makes
// the kernel kill it when the test process dies, however it dies. s.mu is
// held.
func (s *Server) launch() error {
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open server log: %w", err)
	}
	defer logFile.Close() // the child keeps its own descriptor
	logStart, _ := logFile.Seek(0, 2)
	cmd := exec.Command(s.bins.postgres,
		"-D", s.dataDir,
		"-p", strconv.Itoa(s.port),
		"-k", s.sockDir, // "" disables unix sockets
		"-c", "listen_addresses=127.0.0.1",
		// Durability is pointless for throwaway data; speed is not.
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		// Bulk loads (a million links for the benchmarks) keep their
		// indexes in memory; it is only allocated where touched.
		"-c", "shared_buffers=256MB",
		// Dynamic shared memory in the data directory rather than in
		// /dev/shm/PostgreSQL.*, so that a server killed with its test
		// process leaves nothing behind once its directory is removed.
		"-c", "dynamic_shared_memory_type=mmap",
		// Parallel tests each open their own pools.
		"-c", "max_connections=300",
		"-c", "logging_collector=off",
	)
	cmd.Dir = s.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait() //nolint:errcheck // only reaps the child: its exit is read from its log
		close(done)
	}()
	if err := waitReady(serverURL(s.port, "postgres"), done); err != nil {
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("start postgres on port %d: %w\n%s", s.port, err, s.logSince(logStart))
	}
	s.proc, s.done = cmd, done
	return nil
}

// waitReady connects until the server answers, the process exits, or
// readyTimeout passes. The poll interval is short: a fresh server is usually
// ready within a few hundred milliseconds.
func waitReady(connURL string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		attemptCtx, attemptCancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgconn.Connect(attemptCtx, connURL)
		attemptCancel()
		if err == nil {
			return conn.Close(ctx)
		}
		lastErr = err
		select {
		case <-exited:
			return errors.New("postgres exited before accepting connections")
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v: %w", readyTimeout, lastErr)
		case <-tick.C:
		}
	}
}

// logSince returns the server log written from offset on, for error messages.
func (s *Server) logSince(offset int64) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil || offset > int64(len(b)) {
		return ""
	}
	b = b[offset:]
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(bytes.TrimSpace(b))
}

// stop sends SIGINT (fast shutdown) and waits for postgres to exit; SIGKILL
// if it has not exited after a while. Stopping a stopped server is a no-op.
func (s *Server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	proc, done := s.proc, s.done
	s.proc, s.done = nil, nil
	if err := proc.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop postgres: %w", err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(30 * time.Second):
		proc.Process.Kill()
		<-done
		return errors.New("stop postgres: no exit 30s after SIGINT; killed it")
	}
}

// close stops the server and removes its directory.
func (s *Server) close() error {
	stopErr := s.stop()
	if err := os.RemoveAll(s.dir); err != nil {
		return errors.Join(stopErr, fmt.Errorf("remove %s: %w", s.dir, err))
	}
	return stopErr
}
