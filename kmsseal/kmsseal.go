// Package kmsseal adapts an AWS KMS client to [seal.KeyService], so that
// stored outcomes are envelope-encrypted under a KMS key:
//
//	keys, err := kmsseal.New(ctx, kms.NewFromConfig(cfg), os.Getenv("OUTCOME_KEY"))
//	sealer, err := seal.New(keys)
//	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer })
//
// It is a module of its own so that the library module needs no KMS SDK.
//
// # Keys and rotation
//
// New resolves the key it is given (a key id, key ARN, alias name or alias
// ARN) to its key ARN with one DescribeKey call, and names that ARN on
// every call: GenerateDataKey, and Decrypt, where KMS then uses only that
// key (AWS KMS API Reference, Decrypt, KeyId). An alias is never sent on
// Decrypt: after a manual rotation (the alias pointed at a new key, as the
// KMS Developer Guide's "Rotating keys manually" advises), Decrypt naming
// the alias would fail with IncorrectKeyException for every outcome sealed
// under the old key. Instead:
//
//   - Options.PreviousKeys names the keys outcomes may still be sealed
//     under (the old key, until the retry horizon has passed since the
//     rotation); Decrypt tries the current key, then each of them.
//   - A KeyService made from an alias looks the alias up again (at most
//     once a minute) before it generates a data key: a process started
//     before the rotation seals under the new key from its next data key
//     on (seal.Options.MaxKeyAge, 5 minutes by default). Outcomes are then
//     sealed under the old key until about MaxKeyAge after the rotation,
//     which is when the retry horizon of PreviousKeys starts.
//   - When KMS refuses a call in a way a moved alias explains (no accepted
//     key opens a data key; the key data keys are generated under is
//     disabled, pending deletion or no longer allowed), a KeyService made
//     from an alias looks it up at once, and uses the key it names now: a
//     process started before the rotation opens what new processes sealed
//     from the first one it meets. Such a look-up is made at most once
//     every few seconds (a flood of foreign data keys must not exhaust the
//     DescribeKey quota); a refusal met while it may not look is
//     unavailable for now (ErrKeyUnavailable: retry later), not refused.
//
// Each response's KeyId is checked against the key asked for; a response
// naming another key is refused. Automatic rotation keeps the key ARN and
// needs none of this.
//
// # Errors
//
// Failures are [*lambdaidem.KeyServiceError]s naming the key ARN and the
// IAM action. Throttling, KMS's internal and dependency errors, an
// unavailable key and any 5xx or transport failure are not permanent (a
// sealed outcome is answered as ErrKeyUnavailable: stored, retry later);
// access denied, a disabled key, a key pending deletion or deleted, a
// ciphertext of another key, and any other refusal are (ErrKeyRefused).
//
// # IAM
//
// The function's role needs, on the key (a symmetric encryption KMS key)
// and on each of Options.PreviousKeys:
//
//	kms:DescribeKey       to resolve the key at New (and an alias after a rotation)
//	kms:GenerateDataKey   to seal outcomes and key fingerprints
//	kms:Decrypt           to replay them
//
// GenerateDataKey and Decrypt best conditioned on the encryption context
// the Sealer uses, for example "kms:EncryptionContext:purpose":
// "lambdaidem-outcome". Roles that only read the idempotency table
// (operators, analytics) get neither, and see ciphertext and keyed
// fingerprints. The key's policy must allow the role too (or delegate to
// IAM). The CDK construct lambdaidemcdk.BindSealing grants exactly these,
// conditioned so, and sets the variables [ReadEnv] reads.
package kmsseal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

// Client is the part of the KMS API the adapter calls, with the SDK's
// exact signatures; *kms.Client satisfies it.
type Client interface {
	GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, optFns ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, in *kms.DecryptInput, optFns ...func(*kms.Options)) (*kms.DecryptOutput, error)
	DescribeKey(ctx context.Context, in *kms.DescribeKeyInput, optFns ...func(*kms.Options)) (*kms.DescribeKeyOutput, error)
}

// Options configure a [KeyService].
type Options struct {
	// PreviousKeys names further KMS keys (any form New accepts) whose data
	// keys Decrypt accepts: the keys an alias named before a manual
	// rotation, for as long as outcomes they sealed may be replayed (the
	// retry horizon). Each is resolved to its key ARN at New. Default none.
	PreviousKeys []string

	// Now is the clock, for how often an alias is looked up again.
	// Default time.Now.
	Now func() time.Time
}

// KeyService is a [seal.KeyService] over a KMS key. It is safe for
// concurrent use.
type KeyService struct {
	client Client
	alias  string // the alias New was given, if it was one
	now    func() time.Time

	mu       sync.Mutex
	current  string    // the key ARN data keys are generated under
	accepted []string  // key ARNs Decrypt tries: current first
	looked   time.Time // the last look-up of the alias
	forced   time.Time // the last look-up a refusal asked for
}

var _ seal.KeyService = (*KeyService)(nil)

// realias bounds how often an alias is looked up again before a data key
// is generated; reforce how often a refusal may have it looked up at once.
const (
	realias = time.Minute
	reforce = 5 * time.Second
)

// New returns a KeyService that generates data keys under the KMS key
// keyID (a key id, key ARN, alias name or alias ARN) and decrypts those of
// it and of Options.PreviousKeys. It resolves each to its key ARN with
// DescribeKey, and returns an error if client is nil, keyID is empty, a
// key cannot be described, or keyID is not an enabled symmetric
// encryption key.
func New(ctx context.Context, client Client, keyID string, optFns ...func(*Options)) (*KeyService, error) {
	switch {
	case client == nil:
		return nil, errors.New("kmsseal: nil Client")
	case keyID == "":
		return nil, errors.New("kmsseal: empty key id")
	}
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	k := &KeyService{client: client, now: o.Now}
	if isAlias(keyID) {
		k.alias = keyID
	}
	arn, err := k.describe(ctx, keyID, true)
	if err != nil {
		return nil, err
	}
	k.current, k.accepted, k.looked = arn, []string{arn}, o.Now()
	for _, id := range o.PreviousKeys {
		prev, err := k.describe(ctx, id, false)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(k.accepted, prev) {
			k.accepted = append(k.accepted, prev)
		}
	}
	return k, nil
}

// KeyARN is the ARN of the key data keys are generated under.
func (k *KeyService) KeyARN() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.current
}

func isAlias(id string) bool {
	return strings.HasPrefix(id, "alias/") || (strings.HasPrefix(id, "arn:") && strings.Contains(id, ":alias/"))
}

// describe resolves id to its key ARN. The key must be a symmetric
// encryption key; the one outcomes are sealed under must be enabled.
func (k *KeyService) describe(ctx context.Context, id string, sealing bool) (string, error) {
	out, err := k.client.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(id)})
	if nf := (*types.NotFoundException)(nil); errors.As(err, &nf) {
		if sealing {
			return "", fmt.Errorf("kmsseal: key %s does not exist (a typo, another account or Region, or deleted): %w", id, err)
		}
		// A deleted previous key fails every cold start until it is
		// unlisted: say so, rather than suggest a missing permission.
		return "", fmt.Errorf("kmsseal: previous key %s does not exist (a typo, another account or Region, or deleted): outcomes sealed under a deleted key cannot be opened, so remove it from PreviousKeys (%s): %w", id, EnvPreviousKeys, err)
	}
	if err != nil {
		return "", fmt.Errorf("kmsseal: DescribeKey %s (the role needs kms:DescribeKey on it): %w", id, err)
	}
	m := out.KeyMetadata
	switch {
	case m == nil || aws.ToString(m.Arn) == "":
		return "", fmt.Errorf("kmsseal: DescribeKey %s returned no key ARN", id)
	case m.KeySpec != types.KeySpecSymmetricDefault || m.KeyUsage != types.KeyUsageTypeEncryptDecrypt:
		return "", fmt.Errorf("kmsseal: key %s is a %s key for %s; sealing needs a symmetric encryption key (SYMMETRIC_DEFAULT, ENCRYPT_DECRYPT)", aws.ToString(m.Arn), m.KeySpec, m.KeyUsage)
	case sealing && m.KeyState != types.KeyStateEnabled:
		return "", fmt.Errorf("kmsseal: key %s is %s; outcomes are sealed under an enabled key", aws.ToString(m.Arn), m.KeyState)
	}
	return aws.ToString(m.Arn), nil
}

// GenerateDataKey calls KMS GenerateDataKey for a 256-bit key, naming the
// key ARN. A KeyService made from an alias first looks the alias up again
// if it has not for a minute, and generates under the key it names now.
func (k *KeyService) GenerateDataKey(ctx context.Context, ec map[string]string) ([]byte, []byte, error) {
	k.moved(ctx, false)
	plain, blob, err := k.generate(ctx, k.KeyARN(), ec)
	if err == nil || !refusedByKey(err) {
		return plain, blob, err
	}
	arn, err := k.afterRefusal(ctx, err, false)
	if err != nil {
		return nil, nil, err
	}
	return k.generate(ctx, arn, ec)
}

// generate calls GenerateDataKey under the key arn.
func (k *KeyService) generate(ctx context.Context, arn string, ec map[string]string) ([]byte, []byte, error) {
	out, err := k.client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId:             aws.String(arn),
		KeySpec:           types.DataKeySpecAes256,
		EncryptionContext: ec,
	})
	if err != nil {
		return nil, nil, keyError(arn, "kms:GenerateDataKey", err)
	}
	if got := aws.ToString(out.KeyId); got != arn {
		return nil, nil, &lambdaidem.KeyServiceError{Key: arn, Action: "kms:GenerateDataKey", Permanent: true, Err: fmt.Errorf("KMS answered for key %q", got)}
	}
	return out.Plaintext, out.CiphertextBlob, nil
}

// Decrypt calls KMS Decrypt naming a key ARN: the current key's, then, for
// a data key of another key (IncorrectKeyException), each previous key's,
// and, for a KeyService made from an alias, the key the alias names now
// (looked up at once; see the package doc). The KeyId of the answer must be
// the key asked for.
func (k *KeyService) Decrypt(ctx context.Context, encrypted []byte, ec map[string]string) ([]byte, error) {
	k.mu.Lock()
	tried := slices.Clone(k.accepted)
	k.mu.Unlock()
	var last error
	for _, arn := range tried {
		plain, err := k.decrypt(ctx, arn, encrypted, ec)
		if !isIncorrectKey(err) {
			return plain, err
		}
		last = err
	}
	arn, err := k.afterRefusal(ctx, last, true)
	if err != nil {
		return nil, err
	}
	return k.decrypt(ctx, arn, encrypted, ec)
}

// afterRefusal is what a refusal that a moved alias explains (err) leaves
// to try: the key a KeyService made from an alias names now, looked up at
// once, if it is one not accepted before. Otherwise it returns err: refused
// for good when the alias was looked up and names no new key (or there is
// no alias); with forNow, when a look-up was made less than reforce ago,
// unavailable for now, so that a retry looks again (Decrypt: the data key
// may be of a key the alias names since; GenerateDataKey keeps its refusal,
// having looked the alias up at most a minute ago).
func (k *KeyService) afterRefusal(ctx context.Context, err error, forNow bool) (string, error) {
	if k.alias == "" {
		return "", err
	}
	arn, moved, looked := k.moved(ctx, true)
	switch {
	case moved:
		return arn, nil
	case !looked && forNow:
		var kse *lambdaidem.KeyServiceError
		if errors.As(err, &kse) {
			again := *kse
			again.Permanent = false
			again.Err = fmt.Errorf("%w (the alias %s was looked up less than %v ago and may have moved since: retry later)", kse.Err, k.alias, reforce)
			return "", &again
		}
	}
	return "", err
}

func (k *KeyService) decrypt(ctx context.Context, arn string, encrypted []byte, ec map[string]string) ([]byte, error) {
	out, err := k.client.Decrypt(ctx, &kms.DecryptInput{
		KeyId:             aws.String(arn),
		CiphertextBlob:    encrypted,
		EncryptionContext: ec,
	})
	if err != nil {
		return nil, keyError(arn, "kms:Decrypt", err)
	}
	if got := aws.ToString(out.KeyId); got != arn {
		return nil, &lambdaidem.KeyServiceError{Key: arn, Action: "kms:Decrypt", Permanent: true, Err: fmt.Errorf("KMS answered for key %q", got)}
	}
	return out.Plaintext, nil
}

// moved looks the alias up again: at most once a minute, or, forced by a
// refusal, at most once every reforce. The key it names now becomes the
// key data keys are generated under (a failed look-up keeps the current
// one). It returns that key's ARN and true if it is a key not accepted
// before, and whether it looked the alias up.
func (k *KeyService) moved(ctx context.Context, force bool) (arn string, moved, looked bool) {
	if k.alias == "" {
		return "", false, false
	}
	now := k.now()
	k.mu.Lock()
	last, every := &k.looked, realias
	if force {
		last, every = &k.forced, reforce
	}
	if !last.IsZero() && now.Sub(*last) < every {
		k.mu.Unlock()
		return "", false, false
	}
	k.looked, *last = now, now
	k.mu.Unlock()
	arn, err := k.describe(ctx, k.alias, true)
	if err != nil {
		return "", false, true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.current = arn
	if slices.Contains(k.accepted, arn) {
		return "", false, true
	}
	k.accepted = append([]string{arn}, k.accepted...)
	return arn, true, true
}

// permanent lists the KMS error codes that retrying cannot cure (AWS KMS
// API Reference, Decrypt and GenerateDataKey, Errors).
var permanent = []string{
	"AccessDeniedException", "DisabledException", "KMSInvalidStateException", "NotFoundException",
	"IncorrectKeyException", "InvalidCiphertextException", "InvalidKeyUsageException", "InvalidGrantTokenException",
	"DryRunOperationException", "ValidationException", "UnrecognizedClientException", "InvalidSignatureException",
}

// transient lists the KMS error codes a retry may cure.
var transient = []string{
	"ThrottlingException", "LimitExceededException", "KMSInternalException", "DependencyTimeoutException",
	"KeyUnavailableException", "ServiceUnavailableException", "RequestTimeout", "RequestTimeoutException",
}

// keyError classifies a KMS call's error.
func keyError(arn, action string, err error) error {
	kse := &lambdaidem.KeyServiceError{Key: arn, Action: action, Err: err}
	var api smithy.APIError
	var resp *smithyhttp.ResponseError
	switch {
	case errors.As(err, &api) && slices.Contains(transient, api.ErrorCode()):
	case errors.As(err, &api) && slices.Contains(permanent, api.ErrorCode()):
		kse.Permanent = true
	case errors.As(err, &resp) && resp.HTTPStatusCode() >= 500:
	case errors.As(err, &resp) && resp.HTTPStatusCode() >= 400:
		kse.Permanent = true // another refusal of the request
	}
	return kse
}

// refusedByKey reports whether a GenerateDataKey refusal is one a moved
// alias explains: the key it named is disabled, pending deletion or gone,
// or no longer allowed to the function.
func refusedByKey(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && slices.Contains([]string{"AccessDeniedException", "DisabledException", "KMSInvalidStateException", "NotFoundException"}, api.ErrorCode())
}

func isIncorrectKey(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "IncorrectKeyException"
}
