// Package kmsseal adapts an AWS KMS client to [seal.KeyService], so that
// stored outcomes are envelope-encrypted under a KMS key:
//
//	keys, err := kmsseal.New(kms.NewFromConfig(cfg), os.Getenv("OUTCOME_KEY_ARN"))
//	sealer, err := seal.New(keys)
//	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer })
//
// It is a module of its own so that the library module needs no KMS SDK.
//
// # IAM
//
// The function's role needs, on the key (a symmetric encryption KMS key):
//
//	kms:GenerateDataKey   to seal outcomes
//	kms:Decrypt           to replay them
//
// both best conditioned on the encryption context the Sealer uses, for
// example "kms:EncryptionContext:purpose": "lambdaidem-outcome". Roles that
// only read the idempotency table (operators, analytics) get neither, and
// see ciphertext. The key's policy must allow the role too (or delegate to
// IAM).
package kmsseal

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

// Client is the part of the KMS API the adapter calls, with the SDK's
// exact signatures; *kms.Client satisfies it.
type Client interface {
	GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, optFns ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, in *kms.DecryptInput, optFns ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

// KeyService is a [seal.KeyService] over one KMS key.
type KeyService struct {
	client Client
	keyID  string
}

var _ seal.KeyService = (*KeyService)(nil)

// New returns a KeyService that generates and decrypts data keys with the
// KMS key keyID (a key id, key ARN, alias name or alias ARN). It returns an
// error if client is nil or keyID is empty.
func New(client Client, keyID string) (*KeyService, error) {
	switch {
	case client == nil:
		return nil, errors.New("kmsseal: nil Client")
	case keyID == "":
		return nil, errors.New("kmsseal: empty key id")
	}
	return &KeyService{client: client, keyID: keyID}, nil
}

// GenerateDataKey calls KMS GenerateDataKey for a 256-bit key.
func (k *KeyService) GenerateDataKey(ctx context.Context, ec map[string]string) ([]byte, []byte, error) {
	out, err := k.client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId:             aws.String(k.keyID),
		KeySpec:           types.DataKeySpecAes256,
		EncryptionContext: ec,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("kmsseal: GenerateDataKey: %w", err)
	}
	return out.Plaintext, out.CiphertextBlob, nil
}

// Decrypt calls KMS Decrypt, naming the key so that a ciphertext of
// another key is refused.
func (k *KeyService) Decrypt(ctx context.Context, encrypted []byte, ec map[string]string) ([]byte, error) {
	out, err := k.client.Decrypt(ctx, &kms.DecryptInput{
		KeyId:             aws.String(k.keyID),
		CiphertextBlob:    encrypted,
		EncryptionContext: ec,
	})
	if err != nil {
		return nil, fmt.Errorf("kmsseal: Decrypt: %w", err)
	}
	return out.Plaintext, nil
}
