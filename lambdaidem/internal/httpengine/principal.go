package httpengine

import (
	"math"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// The kinds of authorizer an event can show, as [Request.Authorizer] names
// them.
const (
	AuthorizerJWT              = "jwt"              // HTTP API JWT authorizer, REST Cognito user pool authorizer
	AuthorizerLambda           = "lambda"           // Lambda (custom) authorizer
	AuthorizerIAM              = "iam"              // IAM (SigV4) authorization
	AuthorizerCognitoIdentity  = "cognito-identity" // REST IAM authorization with Cognito identity pool credentials
	AuthorizerAPIKey           = "api-key"          // REST API key
	AuthorizerUnrecognized     = "unrecognized"     // an authorizer block with nothing the adapter knows in it
	AuthorizerNone             = "none-readable"    // a net/http request with no identity the middleware reads: only Options.Scope can name its caller
	cognitoIdentitySessionName = "CognitoIdentityCredentials"
)

// identityKeys are the names the deployment says identify a Caller
// (Options.IdentityClaims, Options.IdentityContextKeys).
type identityKeys struct {
	claims  []string
	context []string
}

// Caller is what a request says about who sent it: the principal, if any;
// the kind of authorizer it shows, if any; and, for a request that shows
// one but yields no principal, how to make it yield one (a format with the
// front door's package name as its one operand, for the log line).
type Caller struct {
	Principal  string
	Authorizer string
	Fix        string
}

// The fixes named in the log line of a refused request.
const (
	fixClaims = `the token has no "sub" claim: name the claims that identify a Caller in %[1]s.Options.IdentityClaims (such as "email", "username", "client_id"), or set %[1]s.Options.Scope`
	fixLambda = `the Lambda authorizer's context has no "principalId" nor "sub" value: name the context keys that identify a Caller in %[1]s.Options.IdentityContextKeys (such as "userId", "tenantId"), return one of them as a string from the authorizer, or set %[1]s.Options.Scope`
	fixIAM    = `the IAM Caller is not an individual identity (no user ARN or Caller id, or the session name Cognito gives every identity): set %[1]s.Options.Scope`
	fixAPIKey = `the API key has no id: set %[1]s.Options.Scope`
	fixEmpty  = `the event's authorizer block holds nothing the adapter knows: set %[1]s.Options.Scope`
	// FixNoIdentity is the fix for a net/http request that carries no
	// identity the middleware reads (no Function URL event, no API Gateway
	// request context) while no Scope function is set.
	FixNoIdentity = `the request carries no identity the middleware can read (no Function URL event from lambdaurl, no API Gateway request context from Options.APIGatewayV1 or APIGatewayV2): set %[1]s.Options.Scope`
)

// principalV2 reads an HTTP API event: a JWT authorizer's subject (or a
// named claim), a Lambda authorizer's context, or an IAM Caller (its Cognito
// identity first).
func principalV2(rc *events.APIGatewayV2HTTPRequestContext, keys identityKeys) Caller {
	a := rc.Authorizer
	switch {
	case a == nil:
		return Caller{}
	case a.JWT != nil:
		return jwtCaller(a.JWT.Claims["iss"], func(name string) string { return a.JWT.Claims[name] }, keys.claims)
	case a.Lambda != nil:
		return lambdaCaller(a.Lambda, keys.context)
	case a.IAM != nil:
		if id := a.IAM.CognitoIdentity.IdentityID; id != "" {
			return Caller{Principal: "cognito:" + id, Authorizer: AuthorizerIAM}
		}
		return iamCaller(a.IAM.UserARN, a.IAM.CallerID)
	}
	// An authorizer block with nothing in it: a Lambda authorizer's simple
	// response without a context, say. It is not anonymous.
	return Caller{Authorizer: AuthorizerUnrecognized, Fix: fixEmpty}
}

// principalV1 reads a REST API event: a Cognito user pool authorizer's
// subject (or a named claim), a Lambda authorizer's principalId (or a named
// context value), a Cognito identity, an IAM Caller, or an API key id.
func principalV1(rc *events.APIGatewayProxyRequestContext, keys identityKeys) Caller {
	if len(rc.Authorizer) > 0 {
		if claims, ok := rc.Authorizer["claims"].(map[string]any); ok {
			iss, _ := claims["iss"].(string)
			return jwtCaller(iss, func(name string) string { return identityValue(claims[name]) }, keys.claims)
		}
		// Any other authorizer output (principalId, context values and the
		// integrationLatency API Gateway adds) is a Lambda authorizer's.
		return lambdaCaller(rc.Authorizer, keys.context)
	}
	id := &rc.Identity
	switch {
	case id.CognitoIdentityID != "":
		// Before the IAM Caller: every identity of a pool signs with one role
		// session, so its ARN is shared by all of them.
		return Caller{Principal: "cognito:" + id.CognitoIdentityID, Authorizer: AuthorizerCognitoIdentity}
	case id.UserArn != "" || id.Caller != "" || id.User != "" || id.AccessKey != "":
		return iamCaller(id.UserArn, id.Caller)
	case id.APIKeyID != "":
		return Caller{Principal: "apikey:" + id.APIKeyID, Authorizer: AuthorizerAPIKey}
	case id.APIKey != "":
		return Caller{Authorizer: AuthorizerAPIKey, Fix: fixAPIKey}
	}
	return Caller{}
}

// principalURL reads a Function URL event: its IAM Caller (AuthType
// AWS_IAM), or none (AuthType NONE).
func principalURL(rc *events.LambdaFunctionURLRequestContext) Caller {
	if rc.Authorizer == nil || rc.Authorizer.IAM == nil {
		return Caller{}
	}
	return iamCaller(rc.Authorizer.IAM.UserARN, rc.Authorizer.IAM.CallerID)
}

// jwtCaller is the Caller of a verified token: its issuer, quoted so that no
// issuer and subject can join into another pair's principal, and its
// subject; or, for a token without one, the first claim of names it holds,
// under its own prefix and with its name, so that no claim can pose as
// another or as a subject.
func jwtCaller(iss string, claim func(string) string, names []string) Caller {
	c := Caller{Authorizer: AuthorizerJWT, Fix: fixClaims}
	if sub := claim("sub"); sub != "" {
		c.Principal = jwtPrincipal(iss, sub)
		return c
	}
	for _, name := range names {
		if v := claim(name); v != "" {
			c.Principal = "jwt-claim:" + strconv.Quote(iss) + "|" + strconv.Quote(name) + "|" + v
			return c
		}
	}
	return c
}

// JWTPrincipal is the principal of a verified token's issuer and subject:
// what an HTTP API JWT authorizer's event yields, so that a service that
// verifies the same token itself scopes keys the same way.
func JWTPrincipal(iss, sub string) string { return jwtPrincipal(iss, sub) }

// jwtPrincipal is the principal of a token's subject.
func jwtPrincipal(iss, sub string) string {
	if sub == "" {
		return ""
	}
	return "jwt:" + strconv.Quote(iss) + "|" + sub
}

// lambdaCaller is the Caller a Lambda authorizer names: its principalId
// (REST authorizers must return one) or a "sub" in its context, else the
// first context value of names that it holds. A context with none of them
// (a coarse one such as {"plan": "pro"}) names no Caller: a hash of it would
// put every Caller with the same plan in one scope.
func lambdaCaller(ctx map[string]any, names []string) Caller {
	c := Caller{Authorizer: AuthorizerLambda, Fix: fixLambda}
	for _, name := range []string{"principalId", "sub"} {
		if v := identityValue(ctx[name]); v != "" {
			c.Principal = "lambda:" + v
			return c
		}
	}
	for _, name := range names {
		if v := identityValue(ctx[name]); v != "" {
			c.Principal = "lambda-context:" + strconv.Quote(name) + "|" + v
			return c
		}
	}
	return c
}

// identityValue is an authorizer value as an identity: a non-empty string,
// or an integer a float64 holds exactly (a JSON number decoded by
// aws-lambda-go). Anything else (a fraction, an integer past 2^53 that two
// callers could share once rounded, a bool, an object) is none.
func identityValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ""
}

// iamCaller is an IAM Caller: its user ARN, else its Caller id. The role
// session Cognito identity pools hand out carries one session name for
// every identity of the pool, so such an ARN identifies the pool, not the
// Caller: it is no principal.
func iamCaller(userARN, callerID string) Caller {
	c := Caller{Authorizer: AuthorizerIAM, Fix: fixIAM}
	if strings.HasSuffix(userARN, "/"+cognitoIdentitySessionName) || strings.HasSuffix(callerID, ":"+cognitoIdentitySessionName) {
		return c
	}
	switch {
	case userARN != "":
		c.Principal = "iam:" + userARN
	case callerID != "":
		c.Principal = "iam:" + callerID
	}
	return c
}
