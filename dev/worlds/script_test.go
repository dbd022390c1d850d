// Package worlds_test checks dev/worlds/test.sh, which make test-dynoxide and
// make test-embedded run.
package worlds_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// run runs test.sh with args and the environment env (on top of PATH and
// HOME only), and returns its stdout, stderr and exit code.
func run(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"test.sh"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	t.Fatalf("test.sh %v: %v", args, err)
	return "", "", -1
}

// TestNoDynoxideIsOneLine: without a Dynoxide binary the second world is
// skipped with one line and success, except in CI, which fails; an unknown
// world is refused. Nothing is run in any of these cases.
func TestNoDynoxideIsOneLine(t *testing.T) {
	missing := "DYNOXIDE=" + filepath.Join(t.TempDir(), "dynoxide")
	out, errOut, code := run(t, []string{missing}, "dynoxide")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "the second world (Dynoxide) is skipped") || errOut != "" {
		t.Errorf("without a binary: exit %d, stdout %q, stderr %q; want exit 0 and one line saying the world is skipped", code, out, errOut)
	}
	out, errOut, code = run(t, []string{missing, "CI=true"}, "dynoxide")
	if code != 1 || out != "" || !strings.Contains(errOut, "CI requires the second world") {
		t.Errorf("in CI without a binary: exit %d, stdout %q, stderr %q; want exit 1 saying CI requires it", code, out, errOut)
	}
	_, errOut, code = run(t, nil, "localstack")
	if code != 2 || !strings.Contains(errOut, "unknown world") {
		t.Errorf("an unknown world: exit %d, stderr %q; want exit 2", code, errOut)
	}
}
