package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// coldTarget is one Lambda function measured for cold start.
type coldTarget struct {
	name  string // row label
	pkg   string // Go package of its main
	bare  string // name of the bare target it is compared with; "" for a bare one
	event string // invocation payload
}

// coldResult is a target's bootstrap size and Init Durations.
type coldResult struct {
	coldTarget
	size   int64
	starts []start
	err    string // why it was not measured
}

// column returns one figure of every start.
func (r *coldResult) column(f func(start) float64) []float64 {
	var v []float64
	for _, s := range r.starts {
		v = append(v, f(s))
	}
	return v
}

func coldTargets() []coldTarget {
	const apiEvent = `{"version":"2.0","routeKey":"POST /payments","rawPath":"/payments",` +
		`"headers":{"content-type":"application/json","idempotency-key":"cold-start-1"},` +
		`"requestContext":{"http":{"method":"POST","path":"/payments"},"routeKey":"POST /payments"},` +
		`"body":"{\"id\":\"cold-1\",\"amount\":1200,\"currency\":\"EUR\"}","isBase64Encoded":false}`
	const sqsEvent = `{"Records":[{"messageId":"m-1","receiptHandle":"r","body":"{\"id\":\"cold-1\",\"total\":1200}",` +
		`"attributes":{},"messageAttributes":{},"eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:us-east-1:000000000000:orders"}]}`
	return []coldTarget{
		{name: "bare API Gateway handler", pkg: "./dev/bench/bare/apigw", event: apiEvent},
		{name: "examples/api-gateway", pkg: "./examples/api-gateway", bare: "bare API Gateway handler", event: apiEvent},
		{name: "bare SQS handler", pkg: "./dev/bench/bare/sqs", event: sqsEvent},
		{name: "examples/sqs", pkg: "./examples/sqs", bare: "bare SQS handler", event: sqsEvent},
	}
}

// runColdStart builds each target as `make build` does (linux/amd64) and
// starts it c.starts times under the Runtime Interface Emulator.
func runColdStart(ctx context.Context, c config, ep *endpoint) ([]coldResult, error) {
	dir, err := os.MkdirTemp("", "lambdaidem-coldstart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rieErr := ""
	if _, err := os.Stat(c.rie); err != nil {
		rieErr = fmt.Sprintf("no Runtime Interface Emulator at %s (go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d)", c.rie)
	}
	var results []coldResult
	for i, t := range coldTargets() {
		r := coldResult{coldTarget: t}
		bin := filepath.Join(dir, strconv.Itoa(i), "bootstrap")
		if err := buildBootstrap(ctx, t.pkg, bin); err != nil {
			r.err = err.Error()
			results = append(results, r)
			log.Printf("  %s: not built: %v", t.name, err)
			continue
		}
		st, err := os.Stat(bin)
		if err != nil {
			return nil, err
		}
		r.size = st.Size()
		if rieErr != "" {
			r.err = rieErr
			results = append(results, r)
			continue
		}
		for range c.starts {
			st, err := startOnce(ctx, c.rie, bin, lambdaEnv(ep.url), []byte(t.event))
			if err != nil {
				r.err = err.Error()
				break
			}
			r.starts = append(r.starts, st)
		}
		log.Printf("  %s: %d bytes, first-invocation Duration %v ms", t.name, r.size, r.column(func(s start) float64 { return s.first }))
		results = append(results, r)
	}
	return results, nil
}

// buildBootstrap builds pkg (relative to the repository root) like the
// Makefile's build target, in the nested module of its top folder.
func buildBootstrap(ctx context.Context, pkg, out string) error {
	mod, rel := nestedModule(pkg)
	cmd := exec.CommandContext(ctx, "go", "build", "-C", mod, "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, rel)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %v: %s", pkg, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// lambdaEnv is the environment a function gets under the emulator: what
// Lambda would set, fake credentials, the benchmark endpoint and the tables
// the examples read. The machine's own environment is not passed on (a CA
// bundle variable in it would change what config.LoadDefaultConfig does).
func lambdaEnv(endpointURL string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=/tmp",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL_DYNAMODB=" + endpointURL,
		"AWS_LAMBDA_FUNCTION_NAME=bench-cold-start",
		"AWS_LAMBDA_FUNCTION_TIMEOUT=10",
		"IDEMPOTENCY_TABLE=" + lambdaidemTable,
		"PAYMENTS_TABLE=" + businessTable,
		"ORDERS_TABLE=" + businessTable,
		"LOG_LEVEL=error",
	}
}

// start is one fresh start of a function under the emulator.
type start struct {
	// reported is the Init Duration on the emulator's first REPORT line.
	reported float64
	// first and warm are the REPORT Durations of the first invocation and
	// the median of the warm ones that follow, in ms.
	first, warm float64
	// wall is the time from sending the first invocation to its answer, ms.
	wall float64
	// ok: every invocation answered 200.
	ok bool
}

// warmInvokes is how many invocations follow the first in each start.
const warmInvokes = 3

// startOnce starts the emulator with bin as its bootstrap and invokes it
// 1 + warmInvokes times. The emulator starts the bootstrap on the first
// invocation.
func startOnce(ctx context.Context, rie, bin string, env []string, event []byte) (start, error) {
	var st start
	api, err := freePort()
	if err != nil {
		return st, err
	}
	runtimeAPI, err := freePort()
	if err != nil {
		return st, err
	}
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", api, "--runtime-api-address", runtimeAPI, "--log-level", "error", bin)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the emulator and its bootstrap, ended together
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return st, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return st, fmt.Errorf("start %s: %w", rie, err)
	}
	pgid := cmd.Process.Pid
	initRE := regexp.MustCompile(`Init Duration: ([0-9.]+) ms`)
	durationRE := regexp.MustCompile(`\tDuration: ([0-9.]+) ms`)
	type report struct{ init, duration float64 }
	reports := make(chan report, 1+warmInvokes)
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "REPORT ") {
				continue
			}
			var r report
			if m := initRE.FindStringSubmatch(line); m != nil {
				r.init, _ = strconv.ParseFloat(m[1], 64)
			}
			if m := durationRE.FindStringSubmatch(line); m != nil {
				r.duration, _ = strconv.ParseFloat(m[1], 64)
			}
			select {
			case reports <- r:
			default:
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	defer func() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		}
	}()

	if err := waitListening(ctx, api, 10*time.Second); err != nil {
		return st, fmt.Errorf("emulator: %w: %s", err, stderr.String())
	}
	st.ok = true
	var warm []float64
	for i := range 1 + warmInvokes {
		t0 := time.Now()
		status, err := invokeRIE(ctx, api, event)
		if err != nil {
			return st, fmt.Errorf("invoke: %w: %s", err, stderr.String())
		}
		wall := float64(time.Since(t0)) / float64(time.Millisecond)
		st.ok = st.ok && status == http.StatusOK
		var r report
		select {
		case r = <-reports:
		case <-time.After(5 * time.Second):
			return st, errors.New("the emulator printed no REPORT line")
		case <-ctx.Done():
			return st, ctx.Err()
		}
		if i == 0 {
			st.reported, st.first, st.wall = r.init, r.duration, wall
		} else {
			warm = append(warm, r.duration)
		}
	}
	st.warm = median(warm)
	return st, nil
}

// invokeRIE sends one invocation to the emulator and returns its status.
func invokeRIE(ctx context.Context, api string, event []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+api+"/2015-03-31/functions/function/invocations", bytes.NewReader(event))
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// freePort returns a loopback address with a port free right now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitListening(ctx context.Context, addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("nothing listening on %s after %v", addr, limit)
}

// nestedModule splits a package path relative to the repository root, such
// as "./examples/api-gateway", into the folder of the nested module that
// holds it (its top folder, "examples") and the path inside that module
// ("./api-gateway").
func nestedModule(pkg string) (mod, rel string) {
	mod, rest, _ := strings.Cut(strings.TrimPrefix(pkg, "./"), "/")
	return mod, "./" + rest
}
