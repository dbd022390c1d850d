package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheBuiltCommand builds the command and runs it as an operator would,
// configured only by its environment: the endpoint in
// AWS_ENDPOINT_URL_DYNAMODB, the table in IDEMPOTENCY_TABLE, static
// credentials, and no shared AWS files.
func TestTheBuiltCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "lambdaidem")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	w := newWorld(t)
	key := w.unknown(t, "charge-42")
	home := t.TempDir()
	environ := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"AWS_CONFIG_FILE=" + filepath.Join(home, "none"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none"),
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL_DYNAMODB=" + w.ep.URL,
		"IDEMPOTENCY_TABLE=" + w.table,
	}
	lambdaidem := func(stdin string, args ...string) result {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = environ
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("run %v: %v", args, err)
		}
		return result{code, out.String(), errOut.String()}
	}
	lambdaidem("", "key", "--operation", "CreatePayment", "charge-42").expect(t, exitOK, key, "")
	lambdaidem("", "list", "--stuck").expect(t, exitOK, key, "1 records listed")
	lambdaidem("", "show", key).expect(t, exitOK, "UNKNOWN", "")
	lambdaidem("", "resolve", "--done", "--outcome", `"charged"`, key).expect(t, exitOK, "as done", "")
	lambdaidem("", "resolve", "--done", "--outcome", `"charged"`, key).expect(t, exitNotSettle, "", "is COMPLETED")
	lambdaidem("", "show", "--table", "missing", key).expect(t, exitNoTable, "", `no table "missing"`)
	lambdaidem("", "show", "lambdaidem#short").expect(t, exitMalformedKey, "", "malformed record key")
	lambdaidem("", "show", recordKey("nobody")).expect(t, exitNoRecord, "", "record not found")
	// --endpoint wins over the environment.
	lambdaidem("", "list", "--endpoint", "http://127.0.0.1:1").expect(t, exitFailure, "", "127.0.0.1:1")
}
