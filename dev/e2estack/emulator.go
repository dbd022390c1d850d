package e2estack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Emulator is an emulator's process (in memory) on a loopback port.
type Emulator struct {
	// URL is its base URL.
	URL string

	cmd  *exec.Cmd
	done chan struct{}
}

// EnvKinesalite names the environment variable that points at the
// kinesalite command (else dev/emulators/node_modules/.bin/kinesalite,
// installed by `npm ci --omit=optional --ignore-scripts` there, else
// kinesalite on PATH).
const EnvKinesalite = "KINESALITE"

// ErrNoKinesalite is returned by [StartKinesalite] when kinesalite is not
// installed.
var ErrNoKinesalite = errors.New("e2estack: no kinesalite ($" + EnvKinesalite + ", dev/emulators/node_modules/.bin or PATH; npm ci --omit=optional --ignore-scripts in dev/emulators): the Kinesis emulator tests need it")

// StartKinesalite starts kinesalite, a Kinesis emulator (in memory), on a
// free loopback port. root is the repository root. Stop it with Close.
func StartKinesalite(ctx context.Context, root string, log io.Writer) (*Emulator, error) {
	bin := os.Getenv(EnvKinesalite)
	if bin == "" {
		if p := filepath.Join(root, "dev", "emulators", "node_modules", ".bin", "kinesalite"); isFile(p) {
			bin = p
		} else if p, err := exec.LookPath("kinesalite"); err == nil {
			bin = p
		} else {
			return nil, ErrNoKinesalite
		}
	}
	// No artificial latency (kinesalite's default delays stream creation
	// and deletion by 500 ms).
	return startEmulator(ctx, log, bin, func(port string) []string {
		return []string{"--port", port, "--createStreamMs", "0", "--deleteStreamMs", "0", "--updateStreamMs", "0"}
	})
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// startEmulator starts bin with args(port) on a free loopback port and
// waits until it listens.
func startEmulator(ctx context.Context, log io.Writer, bin string, args func(port string) []string) (*Emulator, error) {
	if log == nil {
		log = io.Discard
	}
	var err error
	for range 5 { // the port is released before the emulator binds it
		var l net.Listener
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		e := &Emulator{URL: "http://" + addr, done: make(chan struct{})}
		e.cmd = exec.Command(bin, args(strconv.Itoa(port))...)
		e.cmd.Stdout, e.cmd.Stderr = log, log
		e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err = e.cmd.Start(); err != nil {
			return nil, fmt.Errorf("e2estack: start %s: %w", bin, err)
		}
		go func() { _ = e.cmd.Wait(); close(e.done) }()
		if err = waitDial(ctx, addr, 15*time.Second, e.done); err == nil {
			return e, nil
		}
		e.Close()
	}
	return nil, fmt.Errorf("e2estack: %s did not listen: %w", bin, err)
}

// Close stops the process and waits for it (bounded).
func (e *Emulator) Close() {
	select {
	case <-e.done:
		return
	default:
	}
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-e.done:
	case <-time.After(5 * time.Second):
	}
}

// waitDial polls addr until it accepts a connection, the process exits,
// or timeout passes.
func waitDial(ctx context.Context, addr string, timeout time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	for {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, timeout)
		}
		select {
		case <-exited:
			return errors.New("exited before listening")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}
