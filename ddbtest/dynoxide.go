package ddbtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// EnvDynoxide names the environment variable that gives the path of the
// Dynoxide binary; without it [LaunchDynoxide] looks for "dynoxide" on
// PATH. The repository pins Dynoxide in dev/worlds (npm ci there installs
// node_modules/@dynoxide/linux-x64/dynoxide).
const EnvDynoxide = "DYNOXIDE"

// ErrNoDynoxide is returned by [DynoxideBinary] and [LaunchDynoxide] when
// neither $DYNOXIDE nor PATH gives a Dynoxide binary.
var ErrNoDynoxide = errors.New("ddbtest: no Dynoxide binary: set DYNOXIDE to its path or put dynoxide on PATH (npm ci in dev/worlds installs it)")

// DynoxideBinary returns the path of the Dynoxide binary: $DYNOXIDE if
// set, else "dynoxide" on PATH.
func DynoxideBinary() (string, error) {
	if path := os.Getenv(EnvDynoxide); path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("ddbtest: %s=%s: %w", EnvDynoxide, path, err)
		}
		return path, nil
	}
	path, err := exec.LookPath("dynoxide")
	if err != nil {
		return "", ErrNoDynoxide
	}
	return path, nil
}

// DynoxideServer is a running Dynoxide process ("dynoxide serve", in
// memory) on a loopback port.
type DynoxideServer struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string

	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	stderr *syncBuffer
	once   sync.Once
}

// dynoxideStartTimeout bounds how long LaunchDynoxide waits for the server
// to accept connections.
const dynoxideStartTimeout = 15 * time.Second

// LaunchDynoxide starts a fresh, empty Dynoxide server on a free loopback
// port and waits until it accepts connections. Close stops it.
func LaunchDynoxide(ctx context.Context) (*DynoxideServer, error) {
	bin, err := DynoxideBinary()
	if err != nil {
		return nil, err
	}
	var last error
	for range 5 { // another process may take the free port before Dynoxide binds it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s, err := launchDynoxide(ctx, bin, port)
		if err == nil {
			return s, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

func launchDynoxide(ctx context.Context, bin string, port int) (*DynoxideServer, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ddbtest: starting Dynoxide (%s): %w", bin, err)
	}
	s := &DynoxideServer{URL: "http://" + addr, cmd: cmd, exited: make(chan struct{}), stderr: stderr}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	deadline := time.NewTimer(dynoxideStartTimeout)
	defer deadline.Stop()
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			select {
			case <-s.exited: // the port was someone else's
			default:
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("ddbtest: Dynoxide (%s) exited before serving on %s: %s", bin, addr, bytes.TrimSpace(stderr.Bytes()))
		case <-ctx.Done():
			s.Close()
			return nil, ctx.Err()
		case <-deadline.C:
			s.Close()
			return nil, fmt.Errorf("ddbtest: Dynoxide (%s) did not serve on %s within %v: %s", bin, addr, dynoxideStartTimeout, bytes.TrimSpace(stderr.Bytes()))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// StartDynoxide starts a fresh Dynoxide server for tb ([LaunchDynoxide]),
// stopped when tb ends. It fails tb if Dynoxide cannot be started.
func StartDynoxide(tb testing.TB) *DynoxideServer {
	tb.Helper()
	s, err := LaunchDynoxide(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server and waits for its process to exit. It is safe to
// call more than once.
func (s *DynoxideServer) Close() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("ddbtest: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer is a bytes.Buffer safe for a process's writes and our reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 { // keep what explains a failure to start, not a day of logs
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
