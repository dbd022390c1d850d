package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeRefusesBeforeBuilding: make aws-verify without a Region or
// credentials refuses before it builds anything. The go command make runs
// is a wrapper that records every "go build" (and fails it), so a build
// before the refusal shows in its log.
func TestMakeRefusesBeforeBuilding(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles the command")
	}
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	env := func(name string) string {
		out, err := exec.Command(goBin, "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "go.log")
	wrapper := filepath.Join(dir, "go")
	script := "#!/bin/sh\nif [ \"$1\" = build ]; then echo \"go $*\" >> " + log + "; exit 3; fi\nexec " + goBin + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(makeBin, "--no-print-directory", "-C", root, "aws-verify", "GO="+wrapper)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"GOCACHE=" + env("GOCACHE"),
		"GOMODCACHE=" + env("GOMODCACHE"),
		"GOPATH=" + env("GOPATH"),
		"GOPROXY=" + env("GOPROXY"),
		"GOTOOLCHAIN=local",
		"AWS_CONFIG_FILE=" + filepath.Join(dir, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "no-credentials"),
		"AWS_EC2_METADATA_DISABLED=true",
	}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make aws-verify without a Region succeeded:\n%s", out)
	}
	if built, _ := os.ReadFile(log); len(built) > 0 {
		t.Fatalf("make aws-verify built before refusing:\n%s\noutput:\n%s", built, out)
	}
	if !strings.Contains(string(out), errNoRegion.Error()) {
		t.Fatalf("make aws-verify did not say why it refused:\n%s", out)
	}
}
