package lambdaidem

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// TenantsEnv names the environment variable by which a deployment declares
// that its function runs in Lambda's tenant isolation mode, where every
// invocation names its tenant: "required" makes every [Guard] of the
// process refuse an invocation whose context names none, with
// [ErrNoTenant]. The CDK construct sets it on a function it binds in
// tenant isolation mode. It is read once, by [New], through
// Options.Getenv; any other non-empty value is an error there.
const TenantsEnv = "IDEMPOTENCY_TENANTS"

// TenantsRequired is the value of [TenantsEnv] that declares tenants.
const TenantsRequired = "required"

// Tenant returns the tenant Lambda named for the invocation of ctx (tenant
// isolation mode: lambdacontext.LambdaContext.TenantID, from the runtime
// API's Lambda-Runtime-Aws-Tenant-Id header), or "" where it named none.
//
// Where Lambda names a tenant, the tenant is part of every record's key,
// before any scope the caller supplies ([TenantRecordKey]): two tenants
// sending the same key and body never meet, on every front door, and no
// option turns that off.
func Tenant(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc != nil {
		return lc.TenantID
	}
	return ""
}

// tenantDomain separates a tenant's part of the hashed key from the parts
// of a key without a tenant.
const tenantDomain = "lambdaidem/tenant"

// TenantRecordKey derives the record key of an operation of a tenant. With
// no tenant it is [RecordKey], so records of functions without tenants keep
// the keys earlier versions wrote. With a tenant it is the namespace, '#',
// the tenant in base64url (unpadded), '#', and the SHA-256 (base64url) of
// the tenant, the scope, the operation name and the caller's key, each
// length-prefixed after a domain part: the tenant can be read back from the
// key ([SplitRecordKey]) and filtered on, and no key of one tenant equals a
// key of another tenant or of no tenant.
func TenantRecordKey(namespace, tenant, scope, operation, key string) string {
	if tenant == "" {
		return RecordKey(namespace, scope, operation, key)
	}
	return namespace + "#" + base64.RawURLEncoding.EncodeToString([]byte(tenant)) + "#" +
		hashParts(tenantDomain, tenant, scope, operation, key)
}

// SplitRecordKey reads a record key back: its namespace, its tenant ("" for
// a key without one) and its hash. ok is false unless k has the form
// [RecordKey] or [TenantRecordKey] writes: a namespace without '#', an
// optional non-empty base64url tenant, and a 43-character base64url
// SHA-256.
func SplitRecordKey(k string) (namespace, tenant, hash string, ok bool) {
	namespace, rest, found := strings.Cut(k, "#")
	if !found || namespace == "" {
		return "", "", "", false
	}
	if enc, h, two := strings.Cut(rest, "#"); two {
		t, err := base64.RawURLEncoding.Strict().DecodeString(enc)
		if err != nil || len(t) == 0 {
			return "", "", "", false
		}
		tenant, rest = string(t), h
	}
	if len(rest) != 43 || strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		return "", "", "", false
	}
	return namespace, tenant, rest, true
}

// TenantKeyPrefix is the prefix every record key of a tenant in a namespace
// starts with, for listing one tenant's records.
func TenantKeyPrefix(namespace, tenant string) string {
	return namespace + "#" + base64.RawURLEncoding.EncodeToString([]byte(tenant)) + "#"
}

// TenantsDeclared reads [TenantsEnv] through getenv: whether the deployment
// declares tenants. Any value but [TenantsRequired] or none is an error. [New]
// reads it so; dynamostore.ReadEnv too, to refuse a bad value early.
func TenantsDeclared(getenv func(string) string) (bool, error) {
	switch v := getenv(TenantsEnv); v {
	case "":
		return false, nil
	case TenantsRequired:
		return true, nil
	default:
		return false, fmt.Errorf("lambdaidem: %s=%q: the only value is %q (the function runs in tenant isolation mode), or unset", TenantsEnv, v, TenantsRequired)
	}
}

// tenantOf returns the tenant of ctx, or ErrNoTenant where the deployment
// declares tenants and ctx names none. Every front door derives its record
// key through it (Do).
func (g *Guard) tenantOf(ctx context.Context, operation string) (string, error) {
	t := Tenant(ctx)
	if t == "" && g.tenants {
		return "", fmt.Errorf("%w: operation %s: %s=%s says this function runs in tenant isolation mode, and the invocation's context (lambdacontext.LambdaContext.TenantID) names no tenant; it was not run",
			ErrNoTenant, operation, TenantsEnv, TenantsRequired)
	}
	return t, nil
}
