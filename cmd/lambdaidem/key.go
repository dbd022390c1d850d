package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// keyCmd prints the record key of a client's idempotency key.
func keyCmd(_ context.Context, args []string, s streams, _ env) error {
	fs := newFlagSet("key", s, "--operation NAME [--namespace N] [--tenant T] [--scope S | --principal P --route R | --anonymous --route R] CLIENT-KEY")
	namespace := fs.String("namespace", "lambdaidem", "the Guard's Options.Namespace")
	operation := fs.String("operation", "", "the operation name (apigw.New's, sqsbatch.New's, Spec.Operation, Call.Operation) (required)")
	tenant := fs.String("tenant", "", "the Lambda tenant the function was invoked with (tenant isolation mode; default none)")
	scope := fs.String("scope", "", "the Call's Scope exactly (sqsbatch: what Options.Scope returned; default none)")
	principal := fs.String("principal", "", `API Gateway: the caller's principal as lambdaidem/apigw names it: jwt:"<iss>"|<sub>, iam:<user ARN>, apikey:<API key id>, cognito:<identity id>, lambda:<principalId>`)
	route := fs.String("route", "", `API Gateway: the method and route, as "POST /payments"`)
	anonymous := fs.Bool("anonymous", false, "API Gateway: a request that shows no authorizer (a public route, a Function URL with AuthType NONE): all such callers share one scope per route")
	rest, err := parse(fs, args, "client key")
	if err != nil {
		return err
	}
	switch {
	case *operation == "":
		return usagef("--operation is required")
	case *scope != "" && (*principal != "" || *route != ""):
		return usagef("give --scope, or --principal and --route, not both")
	case *anonymous && (*principal != "" || *scope != ""):
		return usagef("--anonymous names a caller without a principal: give it with --route only")
	case (*principal != "" || *anonymous) != (*route != ""):
		return usagef("--route goes with --principal or --anonymous (API Gateway scopes keys by the caller and the route)")
	case strings.Contains(*namespace, "#") || *namespace == "":
		return usagef("--namespace %q: must be non-empty, without '#'", *namespace)
	}
	sc := *scope
	if *route != "" {
		sc = *principal + "\n" + *route // as lambdaidem/apigw scopes a request (an anonymous one: no principal)
	}
	fmt.Fprintln(s.out, lambdaidem.TenantRecordKey(*namespace, *tenant, sc, *operation, rest[0]))
	return nil
}
