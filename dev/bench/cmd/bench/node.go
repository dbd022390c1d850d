package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// startNode starts the Powertools peer (node server.mjs) against the
// endpoint and waits for the port it listens on. stop ends it.
func startNode(ctx context.Context, dir, endpointURL string) (peer *nodePeer, stop func(), err error) {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@aws-lambda-powertools", "idempotency")); err != nil {
		return nil, nil, fmt.Errorf("%s has no node_modules: run `npm ci` there first (make bench does)", dir)
	}
	cmd := exec.Command("node", "server.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"AWS_ENDPOINT_URL_DYNAMODB="+endpointURL,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_LAMBDA_FUNCTION_NAME=bench-powertools",
		"BENCH_IDEMPOTENCY_TABLE="+powertoolsTable,
		"BENCH_BUSINESS_TABLE="+businessTable,
	)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start node: %w", err)
	}
	done := make(chan error, 1)
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() {
			fmt.Fprintln(os.Stderr, "powertools peer:", sc.Text())
		}
		done <- cmd.Wait()
	}()
	select {
	case line, ok := <-lines:
		var hello struct{ Port int }
		if !ok || json.Unmarshal([]byte(line), &hello) != nil || hello.Port == 0 {
			stop()
			return nil, nil, fmt.Errorf("node peer did not report its port (first line %q)", line)
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 128
		return &nodePeer{base: fmt.Sprintf("http://127.0.0.1:%d", hello.Port), client: &http.Client{Transport: tr, Timeout: 60 * time.Second}}, stop, nil
	case <-time.After(20 * time.Second):
		stop()
		return nil, nil, errors.New("node peer did not start within 20s")
	case <-ctx.Done():
		stop()
		return nil, nil, ctx.Err()
	}
}

// nodeVersion returns `node --version`.
func nodeVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// npmVersion returns the version of an installed npm package under dir.
func npmVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return "not installed"
	}
	var p struct{ Version string }
	if json.Unmarshal(b, &p) != nil {
		return "unknown"
	}
	return p.Version
}
