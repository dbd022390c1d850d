package kmsseal_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"

	"github.com/lambdaidem/lambdaidem/kmsseal"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// envLocalKMS names the variable that may point at the local-kms binary
// (an independent KMS emulator, run as a process: `go install
// github.com/nsmithuk/local-kms@<pseudo-version>`, as .ci/run does); else
// local-kms on PATH.
const envLocalKMS = "LOCAL_KMS"

// startLocalKMS runs local-kms on a free loopback port for t (in memory:
// its data folder is t's) and returns a client for it, or skips t in one
// line when the binary is absent.
func startLocalKMS(t *testing.T) *kms.Client {
	t.Helper()
	bin := os.Getenv(envLocalKMS)
	if bin == "" {
		p, err := exec.LookPath("local-kms")
		if err != nil {
			t.Skip("local-kms not found ($" + envLocalKMS + " or PATH): the KMS emulator tests need it (.ci/run installs it)")
		}
		bin = p
	}
	for attempt := 0; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "KMS_REGION=eu-west-1", "KMS_ACCOUNT_ID=111122223333",
			"KMS_DATA_PATH="+t.TempDir(), "KMS_SEED_PATH="+os.DevNull)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if listening(addr, exited) {
			return kms.New(kms.Options{
				Region:       "eu-west-1",
				BaseEndpoint: aws.String("http://" + addr),
				Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
					return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
				}),
			})
		}
		if attempt == 3 {
			t.Fatalf("local-kms did not listen on %s:\n%s", addr, out.String())
		}
	}
}

func listening(addr string, exited <-chan struct{}) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		select {
		case <-exited:
			return false
		case <-time.After(25 * time.Millisecond):
		}
	}
	return false
}

// createKey creates a symmetric encryption key and returns its ARN.
func createKey(t *testing.T, c *kms.Client) string {
	t.Helper()
	out, err := c.CreateKey(t.Context(), &kms.CreateKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.KeyMetadata.Arn)
}

// TestUnderLocalKMS runs the adapter against local-kms, an emulator
// written independently of this repository, beside the stand-in of
// kmsseal_test.go (which alone can produce faults): DescribeKey resolving
// an alias, GenerateDataKey and Decrypt under an encryption context,
// a wrong context refused, outcomes sealed and replayed by a cold
// process, and a manual rotation by alias with PreviousKeys.
func TestUnderLocalKMS(t *testing.T) {
	c := startLocalKMS(t)
	ctx := t.Context()
	old := createKey(t, c)
	if _, err := c.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String("alias/outcomes"), TargetKeyId: aws.String(old)}); err != nil {
		t.Fatal(err)
	}

	t.Run("DescribeKey resolves the alias; data keys open only under their context", func(t *testing.T) {
		keys, err := kmsseal.New(ctx, c, "alias/outcomes")
		if err != nil {
			t.Fatal(err)
		}
		if keys.KeyARN() != old {
			t.Fatalf("KeyARN = %s, want %s", keys.KeyARN(), old)
		}
		ec := map[string]string{"purpose": "lambdaidem-outcome"}
		plain, enc, err := keys.GenerateDataKey(ctx, ec)
		if err != nil || len(plain) != 32 {
			t.Fatalf("GenerateDataKey: %d bytes, %v", len(plain), err)
		}
		got, err := keys.Decrypt(ctx, enc, ec)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("Decrypt: %v", err)
		}
		_, err = keys.Decrypt(ctx, enc, map[string]string{"purpose": "other"})
		var kse *lambdaidem.KeyServiceError
		if !errors.As(err, &kse) || !kse.Permanent {
			t.Fatalf("Decrypt under another context: %v, want a permanent refusal", err)
		}
	})

	t.Run("outcomes sealed and replayed by a cold process", func(t *testing.T) {
		store := memstore.New()
		guard := func() *lambdaidem.Guard {
			keys, err := kmsseal.New(ctx, c, "alias/outcomes")
			if err != nil {
				t.Fatal(err)
			}
			return sealedGuard(t, store, keys)
		}
		call := lambdaidem.Call[string]{Operation: "Refund", Key: "r-1", Fingerprint: "fp"}
		runs := 0
		fn := func(context.Context) (string, error) { runs++; return "refund sent to ada@example.com", nil }
		if _, err := lambdaidem.Do(ctx, guard(), call, fn); err != nil {
			t.Fatal(err)
		}
		out, err := lambdaidem.Do(ctx, guard(), call, fn)
		if err != nil || out != "refund sent to ada@example.com" || runs != 1 {
			t.Fatalf("cold replay = %q, %v after %d runs", out, err, runs)
		}
		for _, r := range store.Records() {
			if bytes.Contains(r.Outcome, []byte("ada@")) {
				t.Fatalf("the table holds the plain outcome %q", r.Outcome)
			}
		}
	})

	t.Run("manual rotation by alias: old data keys open through PreviousKeys", func(t *testing.T) {
		ec := map[string]string{"purpose": "lambdaidem-outcome"}
		before, err := kmsseal.New(ctx, c, "alias/outcomes")
		if err != nil {
			t.Fatal(err)
		}
		plain, enc, err := before.GenerateDataKey(ctx, ec)
		if err != nil {
			t.Fatal(err)
		}
		rotated := createKey(t, c)
		if _, err := c.UpdateAlias(ctx, &kms.UpdateAliasInput{AliasName: aws.String("alias/outcomes"), TargetKeyId: aws.String(rotated)}); err != nil {
			t.Fatal(err)
		}
		// local-kms answers a Decrypt naming the wrong key with
		// InvalidCiphertextException where AWS answers IncorrectKeyException
		// (TestLocalKMSDepartures), so the adapter runs through a client
		// that answers as AWS does.
		after, err := kmsseal.New(ctx, incorrectKeyAsAWS{c}, "alias/outcomes", func(o *kmsseal.Options) { o.PreviousKeys = []string{old} })
		if err != nil {
			t.Fatal(err)
		}
		if after.KeyARN() != rotated {
			t.Fatalf("after the rotation KeyARN = %s, want %s", after.KeyARN(), rotated)
		}
		got, err := after.Decrypt(ctx, enc, ec)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("a data key of the old key after the rotation: %v", err)
		}
		without, err := kmsseal.New(ctx, incorrectKeyAsAWS{c}, rotated)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := without.Decrypt(ctx, enc, ec); err == nil {
			t.Fatal("a key service that does not accept the old key opened its data key")
		}
	})
}

// TestLocalKMSDepartures names where local-kms departs from the AWS KMS
// API Reference, each checked so that a new local-kms version that fixes
// (or changes) it fails here:
//   - Decrypt naming a key other than the ciphertext's: AWS answers
//     IncorrectKeyException ("the specified KMS key cannot decrypt the
//     data"); local-kms answers InvalidCiphertextException;
//   - RotateKeyOnDemand (manual rotation of key material) is not
//     implemented (AWS has it since 2024): UnsupportedOperationException
//     or a generic error. Manual rotation by alias, which kmsseal follows,
//     works.
func TestLocalKMSDepartures(t *testing.T) {
	c := startLocalKMS(t)
	ctx := t.Context()
	a, b := createKey(t, c), createKey(t, c)
	ec := map[string]string{"purpose": "x"}
	dk, err := c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String(a), KeySpec: types.DataKeySpecAes256, EncryptionContext: ec})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Decrypt(ctx, &kms.DecryptInput{KeyId: aws.String(b), CiphertextBlob: dk.CiphertextBlob, EncryptionContext: ec})
	if code := errorCode(err); code != "InvalidCiphertextException" {
		t.Errorf("Decrypt naming another key: %q (%v); the named departure is InvalidCiphertextException (AWS: IncorrectKeyException)", code, err)
	}
	_, err = c.RotateKeyOnDemand(ctx, &kms.RotateKeyOnDemandInput{KeyId: aws.String(a)})
	if err == nil {
		t.Error("RotateKeyOnDemand succeeded: the named departure (not implemented) is gone")
	}
	t.Logf("RotateKeyOnDemand: %v", err)
}

func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// incorrectKeyAsAWS corrects local-kms's one departure the adapter meets:
// a Decrypt naming a key that did not encrypt the ciphertext answers
// IncorrectKeyException, as AWS does, when the ciphertext opens under its
// own key (asked without a KeyId, which local-kms reads from the blob).
type incorrectKeyAsAWS struct{ *kms.Client }

func (c incorrectKeyAsAWS) Decrypt(ctx context.Context, in *kms.DecryptInput, optFns ...func(*kms.Options)) (*kms.DecryptOutput, error) {
	out, err := c.Client.Decrypt(ctx, in, optFns...)
	if errorCode(err) != "InvalidCiphertextException" || in.KeyId == nil {
		return out, err
	}
	own := *in
	own.KeyId = nil
	if o, ownErr := c.Client.Decrypt(ctx, &own, optFns...); ownErr == nil && aws.ToString(o.KeyId) != aws.ToString(in.KeyId) {
		return nil, &smithy.GenericAPIError{Code: "IncorrectKeyException", Message: "the specified KMS key cannot decrypt the data (local-kms said InvalidCiphertextException)"}
	}
	return out, err
}
