// Tests of the LocalStack scripts' logic that can run without Docker: the
// functions of lib.sh under bash with stand-ins for docker and curl on PATH
// (no Docker engine is available to the test suite), the compose file's
// settings, and shellcheck over every script when it is installed.
package localstack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stub writes an executable script named name into dir.
func stub(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/usr/bin/env bash\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// stubs installs a docker and a curl that play a scripted LocalStack:
//
//   - docker inspect prints the next line of the states file (the last one
//     once the file is used up), or fails when the line is "missing";
//   - docker version/info print $ARCH_VERSION / $ARCH_INFO (failing when
//     empty); docker logs prints a marker;
//   - curl prints the next line of the health file (failing on "down") and
//     records its arguments in curl.log.
func stubs(t *testing.T, states, health []string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	for name, lines := range map[string][]string{"states": states, "health": health} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stub(t, dir, "docker", `dir="$(dirname "$0")"
next() { # next FILE: print line n of FILE (the last line past the end), advance n
  local n; n=$(cat "$dir/$1.n" 2>/dev/null || echo 1)
  local total; total=$(wc -l <"$dir/$1")
  [ "$n" -le "$total" ] || n=$total
  sed -n "${n}p" "$dir/$1"; echo $((n + 1)) >"$dir/$1.n"
}
case "$1" in
  inspect) s="$(next states)"; [ "$s" != missing ] || exit 1; echo "$s" ;;
  version) [ -n "${ARCH_VERSION:-}" ] || exit 1; echo "$ARCH_VERSION" ;;
  info) [ -n "${ARCH_INFO:-}" ] || exit 1; echo "$ARCH_INFO" ;;
  logs) echo "LAST LOG LINES" ;;
  *) exit 2 ;;
esac
`)
	stub(t, dir, "curl", `dir="$(dirname "$0")"
echo "$*" >>"$dir/curl.log"
n=$(cat "$dir/health.n" 2>/dev/null || echo 1); total=$(wc -l <"$dir/health")
[ "$n" -le "$total" ] || n=$total
h="$(sed -n "${n}p" "$dir/health")"; echo $((n + 1)) >"$dir/health.n"
[ "$h" != down ] || exit 7
echo "$h"
`)
	stub(t, dir, "sleep", "exit 0\n") // no waiting in tests
	return dir
}

// run runs script (bash, with lib.sh sourced) with the stubs first on PATH.
func run(t *testing.T, dir, script string, env ...string) (string, error) {
	t.Helper()
	lib, err := filepath.Abs("lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail; . "+lib+"; "+script)
	cmd.Env = append(os.Environ(), append([]string{"PATH=" + dir + ":" + os.Getenv("PATH")}, env...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// curlCalls returns the argument lines curl was called with.
func curlCalls(t *testing.T, dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "curl.log"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

const (
	ready   = `{"services": {"cloudformation": "available", "dynamodb": "running", "lambda": "available", "sqs": "running", "s3": "available"}}`
	partial = `{"services": {"cloudformation": "available", "dynamodb": "running", "lambda": "initializing", "sqs": "running"}}`
)

func TestWaitHealthy(t *testing.T) {
	tests := []struct {
		name      string
		states    []string
		health    []string
		wantErr   bool
		wantCurls int
		wantOut   []string
	}{
		{
			name:   "starting, then healthy: polls until every service answers",
			states: []string{"created 0", "running 0"}, health: []string{"down", partial, ready},
			wantCurls: 3,
		},
		{
			name:   "the container exits asking for an auth token: fails at once, says why",
			states: []string{"running 0", "running 0", "exited 55"}, health: []string{"down"},
			wantErr: true, wantCurls: 2,
			wantOut: []string{"is exited (exit code 55)", "LOCALSTACK_AUTH_TOKEN", "LAST LOG LINES"},
		},
		{
			name:   "the container dies: fails at once",
			states: []string{"dead 137"}, health: []string{ready},
			wantErr: true, wantCurls: 0, wantOut: []string{"is dead (exit code 137)"},
		},
		{
			name:   "no container: fails at once",
			states: []string{"missing"}, health: []string{ready},
			wantErr: true, wantCurls: 0, wantOut: []string{"does not exist"},
		},
		{
			name:   "running but Lambda never ready: gives up after the tries",
			states: []string{"running 0"}, health: []string{partial},
			wantErr: true, wantCurls: 5, wantOut: []string{"after 5 tries"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := stubs(t, tt.states, tt.health)
			out, err := run(t, dir, "wait_healthy 5 0")
			if (err != nil) != tt.wantErr {
				t.Fatalf("wait_healthy: err %v, want error %v; output:\n%s", err, tt.wantErr, out)
			}
			calls := curlCalls(t, dir)
			if len(calls) != tt.wantCurls {
				t.Errorf("curl called %d times, want %d: %q", len(calls), tt.wantCurls, calls)
			}
			for _, c := range calls {
				if !strings.Contains(c, "http://127.0.0.1:4566/_localstack/health") {
					t.Errorf("curl %q: want the health endpoint on 127.0.0.1, no DNS name", c)
				}
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestDockerArch(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		want    string
		wantErr bool
	}{
		{name: "docker version's Server.Arch amd64", env: []string{"ARCH_VERSION=amd64"}, want: "amd64"},
		{name: "docker version's Server.Arch arm64", env: []string{"ARCH_VERSION=arm64"}, want: "arm64"},
		{name: "docker info's x86_64 when version says nothing", env: []string{"ARCH_INFO=x86_64"}, want: "amd64"},
		{name: "docker info's aarch64", env: []string{"ARCH_INFO=aarch64"}, want: "arm64"},
		{name: "the daemon, not this machine, decides", env: []string{"ARCH_VERSION=arm64", "GOARCH=amd64"}, want: "arm64"},
		{name: "an architecture Lambda does not run", env: []string{"ARCH_VERSION=s390x"}, wantErr: true},
		{name: "no daemon answer", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := stubs(t, []string{"running 0"}, []string{ready})
			out, err := run(t, dir, "docker_arch", append([]string{"ARCH_VERSION=", "ARCH_INFO="}, tt.env...)...)
			if tt.wantErr {
				if err == nil || !strings.Contains(out, "neither arm64 nor amd64") {
					t.Fatalf("docker_arch = %q, %v; want a refusal", out, err)
				}
				return
			}
			if err != nil || strings.TrimSpace(out) != tt.want {
				t.Fatalf("docker_arch = %q, %v; want %q", out, err, tt.want)
			}
		})
	}
}

func TestServicesReady(t *testing.T) {
	for doc, want := range map[string]bool{
		ready:   true,
		partial: false,
		`{"services": {"dynamodb": "running", "sqs": "running", "lambda": "running"}}`: false, // no CloudFormation
		`not json`: false,
	} {
		_, err := run(t, t.TempDir(), `services_ready "$DOC"`, "DOC="+doc)
		if (err == nil) != want {
			t.Errorf("services_ready(%s) = %v, want %v", doc, err == nil, want)
		}
	}
}

// The compose file keeps what the README promises: a pinned image, loopback
// ports, TTL deletion, an auth-token passthrough.
func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	compose := string(b)
	for _, want := range []string{
		"image: ${LOCALSTACK_IMAGE:-localstack/localstack:4.14.0}",
		`"127.0.0.1:4566:4566"`,
		"- DYNAMODB_REMOVE_EXPIRED_ITEMS=1",
		"- LOCALSTACK_AUTH_TOKEN=${LOCALSTACK_AUTH_TOKEN:-}",
		"container_name: lambdaidem-localstack",
	} {
		if !strings.Contains(compose, want) {
			t.Errorf("docker-compose.yml lacks %q", want)
		}
	}
	for _, line := range strings.Split(compose, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, `- "`) && strings.Contains(l, ":") && !strings.HasPrefix(l, `- "127.0.0.1:`) && !strings.Contains(l, "docker.sock") {
			t.Errorf("port published beyond loopback: %s", l)
		}
	}
}

func TestShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Skip("shellcheck is not installed (Debian: apt-get install shellcheck)")
	}
	scripts, err := filepath.Glob("*.sh")
	if err != nil || len(scripts) < 5 {
		t.Fatalf("scripts: %v %v", scripts, err)
	}
	out, err := exec.Command("shellcheck", append([]string{"-x"}, scripts...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("shellcheck: %v\n%s", err, out)
	}
}
