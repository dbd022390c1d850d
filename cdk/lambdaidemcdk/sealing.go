package lambdaidemcdk

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// Environment variables that [BindSealing] sets: what a function needs to
// build its Sealer (kmsseal.New with the key and Options.PreviousKeys,
// seal.Options.EncryptionContext) so that it calls KMS exactly as the grant
// allows.
const (
	// EnvSealKey names the variable holding the key outcomes are sealed
	// under: its alias name when sealing follows an alias, else its key ARN
	// (kmsseal.New's keyID).
	EnvSealKey = "IDEMPOTENCY_SEAL_KEY"
	// EnvSealPreviousKeys names the variable holding the key ARNs outcomes
	// may still be sealed under after a manual rotation, comma-separated
	// (kmsseal.Options.PreviousKeys); set only when there are some.
	EnvSealPreviousKeys = "IDEMPOTENCY_SEAL_PREVIOUS_KEYS"
	// EnvSealContext names the variable holding the Sealer's encryption
	// context as a JSON object (seal.Options.EncryptionContext), the one the
	// grant's condition requires.
	EnvSealContext = "IDEMPOTENCY_SEAL_CONTEXT"
)

// DefaultSealContext is the encryption context of a Sealer made with
// seal.New's defaults.
func DefaultSealContext() map[string]string {
	return map[string]string{"purpose": "lambdaidem-outcome"}
}

// SealingProps configures [BindSealing].
type SealingProps struct {
	// Key is the KMS key outcomes are sealed under: a symmetric encryption
	// key (awskms.NewKey, awskms.Key_FromKeyArn), or an awskms.Alias defined
	// in this app, which the function then finds the key by (kmsseal.New
	// resolves the alias with DescribeKey and follows a manual rotation); the
	// grant is on the key it names. Required. An alias imported by name
	// does not say which key it names: pass the key, and the alias name as
	// Alias.
	Key awskms.IKey
	// Alias is the alias name ("alias/payments-outcomes") the function finds
	// Key by, for a Key that is not an awskms.Alias. Default: none (the
	// function is given the key ARN).
	Alias string
	// PreviousKeys are keys outcomes may still be sealed under after a
	// manual rotation, until the retry horizon has passed since it
	// (kmsseal.Options.PreviousKeys): granted Decrypt and DescribeKey, not
	// GenerateDataKey. Default none.
	PreviousKeys []awskms.IKey
	// EncryptionContext is the Sealer's (seal.Options.EncryptionContext);
	// GenerateDataKey and Decrypt are allowed only under it. Default
	// [DefaultSealContext], the Sealer's default.
	EncryptionContext map[string]string
}

// SealingActions returns what kmsseal calls on a sealing key: DescribeKey
// (kmsseal.New resolves every key it is given to its ARN, and an alias again
// after a rotation), GenerateDataKey (sealing, and the fingerprint key) and
// Decrypt (replay). Each call returns a new slice.
func SealingActions() []string {
	return []string{"kms:GenerateDataKey", "kms:Decrypt", "kms:DescribeKey"}
}

// BindSealing lets fn seal and open stored outcomes under props.Key as
// kmsseal does, and nothing more, and sets what fn needs to find the key
// ([EnvSealKey], [EnvSealPreviousKeys], [EnvSealContext]). It grants, on
// exactly the key ARNs:
//
//   - kms:GenerateDataKey on Key, and kms:Decrypt on Key and each of
//     PreviousKeys, both only under the encryption context
//     (kms:EncryptionContext:<key> StringEquals each pair): a principal
//     calling with another context, or none, is denied;
//   - kms:DescribeKey on Key and each of PreviousKeys, which takes no
//     encryption context.
//
// The key's own policy must allow the role too; a key defined in the same
// app with awskms.NewKey's default policy delegates to IAM.
//
// fn may be any awslambda.IFunction, as for [Table.Bind]: for an imported
// function it grants (when its role is known) and returns an
// [*EnvironmentNotSetError] with the variables; a variable fn already sets to
// another value is [ErrEnvironmentConflict] and nothing changes. Missing or
// contradictory props are [ErrInvalidProps].
func BindSealing(fn awslambda.IFunction, props SealingProps) (awsiam.Grant, error) {
	b, err := resolveFunction(fn)
	if err != nil {
		return nil, fmt.Errorf("%w: BindSealing needs a function", err)
	}
	key, alias, err := props.sealingKey()
	if err != nil {
		return nil, err
	}
	ec := props.EncryptionContext
	if ec == nil {
		ec = DefaultSealContext()
	}
	for k, v := range ec {
		if k == "" || v == "" {
			return nil, fmt.Errorf("%w: encryption context pair %q: %q: KMS needs a non-empty key and value", ErrInvalidProps, k, v)
		}
	}
	ecJSON, _ := json.Marshal(ec) // a map of strings: keys sorted, cannot fail
	env := map[string]*string{EnvSealKey: key.KeyArn(), EnvSealContext: jsii.String(string(ecJSON))}
	if alias != "" {
		env[EnvSealKey] = jsii.String(alias)
	}
	arns := []*string{key.KeyArn()}
	if len(props.PreviousKeys) > 0 {
		prev := make([]string, 0, len(props.PreviousKeys))
		for i, k := range props.PreviousKeys {
			if k == nil {
				return nil, fmt.Errorf("%w: PreviousKeys[%d] is nil", ErrInvalidProps, i)
			}
			if _, isAlias := k.(awskms.IAlias); isAlias {
				return nil, fmt.Errorf("%w: PreviousKeys[%d] is an alias: name the key it named (after a rotation the alias names the new key)",
					ErrInvalidProps, i)
			}
			arns = append(arns, k.KeyArn())
			prev = append(prev, *k.KeyArn())
		}
		env[EnvSealPreviousKeys] = jsii.String(strings.Join(prev, ","))
	}
	if b.local != nil {
		if err := checkEnvironment(b.local, env); err != nil {
			return nil, err
		}
	}

	var grant awsiam.Grant
	if fn.Role() != nil || b.local != nil {
		pairs := contextCondition(ec)
		condition := map[string]*map[string]any{"StringEquals": &pairs}
		grant = awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee: fn, Actions: jsii.Strings("kms:GenerateDataKey"), ResourceArns: &[]*string{key.KeyArn()},
			Conditions: &condition,
		}).Combine(awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee: fn, Actions: jsii.Strings("kms:Decrypt"), ResourceArns: &arns, Conditions: &condition,
		})).Combine(awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee: fn, Actions: jsii.Strings("kms:DescribeKey"), ResourceArns: &arns,
		}))
	}
	if b.local == nil {
		return grant, &EnvironmentNotSetError{Function: b.path, Environment: env, Granted: grant != nil}
	}
	setEnvironment(b.local, env, "BindSealing")
	return grant, nil
}

// sealingKey returns the key to grant on and the alias name the function
// finds it by ("" for its ARN).
func (p SealingProps) sealingKey() (awskms.IKey, string, error) {
	if p.Key == nil {
		return nil, "", fmt.Errorf("%w: BindSealing needs a Key", ErrInvalidProps)
	}
	if a, ok := p.Key.(awskms.IAlias); ok {
		local, ok := a.(awskms.Alias)
		if !ok {
			return nil, "", fmt.Errorf("%w: the alias %s is imported and does not say which key it names: "+
				"pass the key as Key (awskms.Key_FromKeyArn) and the alias name as Alias", ErrInvalidProps, *a.AliasName())
		}
		if p.Alias != "" && p.Alias != *local.AliasName() {
			return nil, "", fmt.Errorf("%w: Key is the alias %s but Alias says %s", ErrInvalidProps, *local.AliasName(), p.Alias)
		}
		return local.AliasTargetKey(), *local.AliasName(), nil
	}
	if p.Alias != "" && !strings.HasPrefix(p.Alias, "alias/") {
		return nil, "", fmt.Errorf("%w: Alias %q: an alias name starts with alias/", ErrInvalidProps, p.Alias)
	}
	return p.Key, p.Alias, nil
}

// contextCondition is the StringEquals condition requiring each pair of ec.
func contextCondition(ec map[string]string) map[string]any {
	c := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(ec)) {
		c["kms:EncryptionContext:"+k] = ec[k]
	}
	return c
}
