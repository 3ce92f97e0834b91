package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgDatabase is the database the tool creates on its throwaway server.
const pgDatabase = "linkforge_bench"

// pgVersionGlob is where Debian's postgresql packages install the server
// binaries, off PATH.
const pgVersionGlob = "/usr/lib/postgresql/*/bin"

// findPostgres returns the paths of initdb and postgres: on PATH, or under
// pgVersionGlob (the newest version).
func findPostgres() (initdb, postgres string, ok bool) {
	if i, err := exec.LookPath("initdb"); err == nil {
		if p, err := exec.LookPath("postgres"); err == nil {
			return i, p, true
		}
	}
	dirs, _ := filepath.Glob(pgVersionGlob)
	// Newest first: "17" after "9" needs a numeric comparison.
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		i, p := filepath.Join(d, "initdb"), filepath.Join(d, "postgres")
		if isExecutable(i) && isExecutable(p) {
			return i, p, true
		}
	}
	return "", "", false
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// pgServer is a throwaway PostgreSQL: a data directory under the tool's
// temporary directory and a postgres process on a loopback port. It keeps
// PostgreSQL's default durability settings, like a production server: the
// numbers measured against it should not depend on a switched-off fsync.
type pgServer struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
	log  *tailBuffer
}

// startPostgres initdb's a data directory in the system's temporary
// directory (which the server user can reach, unlike a private --work-dir)
// and starts postgres on it, then creates pgDatabase. settings are more
// "name=value" server settings (-c).
func startPostgres(ctx context.Context, settings ...string) (_ *pgServer, err error) {
	initdb, postgres, ok := findPostgres()
	if !ok {
		return nil, errors.New("no PostgreSQL server binaries (initdb, postgres) on PATH or under " + pgVersionGlob)
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "linkforge-bench-postgres-")
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if err := chownTo(cred, dir); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	data := filepath.Join(dir, "data")
	cmd := exec.CommandContext(ctx, initdb, "-D", data, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-instructions")
	cmd.Dir = dir
	runAs(cmd, cred)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start postgres: find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	s := &pgServer{dir: dir, port: port, done: make(chan struct{}), log: &tailBuffer{max: 16 << 10}}
	args := []string{"-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=", // TCP only: no socket path to fit in sun_path
		// Segments in the data dir rather than /dev/shm, so that a killed
		// server leaves nothing behind once its directory is removed.
		"-c", "dynamic_shared_memory_type=mmap",
		"-c", "shared_buffers=256MB",
	}
	for _, kv := range settings {
		args = append(args, "-c", kv)
	}
	s.cmd = exec.Command(postgres, args...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	runAs(s.cmd, cred)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	go func() {
		_ = s.cmd.Wait() // its exit is seen through done
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.cmd.Process.Kill()
		<-s.done
		return nil, fmt.Errorf("start postgres: %w\n%s", err, s.log.String())
	}
	if err := s.createDatabase(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// url returns the connection URL of database db.
func (s *pgServer) url(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

func (s *pgServer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var lastErr error
	for {
		conn, err := pgx.Connect(ctx, s.url("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		lastErr = err
		select {
		case <-s.done:
			return errors.New("postgres exited before accepting connections")
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w", lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *pgServer) createDatabase(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgDatabase); err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	return nil
}

// close stops postgres (SIGINT: fast shutdown) and removes its directory.
func (s *pgServer) close() error {
	var stopErr error
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		stopErr = fmt.Errorf("stop postgres: %w", err)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		stopErr = errors.New("stop postgres: no exit 30s after SIGINT; killed it")
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return errors.Join(stopErr, fmt.Errorf("remove %s: %w", s.dir, err))
	}
	return stopErr
}
