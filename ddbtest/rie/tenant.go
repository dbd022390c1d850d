package rie

import "context"

// TenantHeader is the invoke request's header that names the tenant of a
// function in Lambda's tenant isolation mode. The emulator (pinned
// aws-lambda-rie, internal/lambda/rie/handlers.go) reads it and hands the
// tenant to the runtime as Lambda-Runtime-Aws-Tenant-Id, which
// aws-lambda-go puts in lambdacontext.LambdaContext.TenantID.
const TenantHeader = "X-Amz-Tenant-Id"

type tenantKey struct{}

// WithTenant returns ctx under which [Function.Invoke] (and a [Pool]'s)
// invokes as tenant t, as Lambda's Invoke with a tenant id does.
func WithTenant(ctx context.Context, t string) context.Context {
	return context.WithValue(ctx, tenantKey{}, t)
}

// tenantOf is the tenant WithTenant set on ctx, or "".
func tenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}
