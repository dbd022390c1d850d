package apigw

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
	cognitoIdentitySessionName = "CognitoIdentityCredentials"
)

// identityKeys are the names the deployment says identify a caller
// (Options.IdentityClaims, Options.IdentityContextKeys).
type identityKeys struct {
	claims  []string
	context []string
}

// caller is what an event says about who sent it: the principal, if any;
// the kind of authorizer it shows, if any; and, for an event that shows one
// but yields no principal, how to make it yield one.
type caller struct {
	principal  string
	authorizer string
	fix        string
}

// The fixes named in the log line of a refused request.
const (
	fixClaims = `the token has no "sub" claim: name the claims that identify a caller in apigw.Options.IdentityClaims (such as "email", "username", "client_id"), or set apigw.Options.Scope`
	fixLambda = `the Lambda authorizer's context has no "principalId" nor "sub" value: name the context keys that identify a caller in apigw.Options.IdentityContextKeys (such as "userId", "tenantId"), return one of them as a string from the authorizer, or set apigw.Options.Scope`
	fixIAM    = `the IAM caller is not an individual identity (no user ARN or caller id, or the session name Cognito gives every identity): set apigw.Options.Scope`
	fixAPIKey = `the API key has no id: set apigw.Options.Scope`
	fixEmpty  = `the event's authorizer block holds nothing the adapter knows: set apigw.Options.Scope`
)

// principalV2 reads an HTTP API event: a JWT authorizer's subject (or a
// named claim), a Lambda authorizer's context, or an IAM caller (its Cognito
// identity first).
func principalV2(rc *events.APIGatewayV2HTTPRequestContext, keys identityKeys) caller {
	a := rc.Authorizer
	switch {
	case a == nil:
		return caller{}
	case a.JWT != nil:
		return jwtCaller(a.JWT.Claims["iss"], func(name string) string { return a.JWT.Claims[name] }, keys.claims)
	case a.Lambda != nil:
		return lambdaCaller(a.Lambda, keys.context)
	case a.IAM != nil:
		if id := a.IAM.CognitoIdentity.IdentityID; id != "" {
			return caller{principal: "cognito:" + id, authorizer: AuthorizerIAM}
		}
		return iamCaller(a.IAM.UserARN, a.IAM.CallerID)
	}
	// An authorizer block with nothing in it: a Lambda authorizer's simple
	// response without a context, say. It is not anonymous.
	return caller{authorizer: AuthorizerUnrecognized, fix: fixEmpty}
}

// principalV1 reads a REST API event: a Cognito user pool authorizer's
// subject (or a named claim), a Lambda authorizer's principalId (or a named
// context value), a Cognito identity, an IAM caller, or an API key id.
func principalV1(rc *events.APIGatewayProxyRequestContext, keys identityKeys) caller {
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
		// Before the IAM caller: every identity of a pool signs with one role
		// session, so its ARN is shared by all of them.
		return caller{principal: "cognito:" + id.CognitoIdentityID, authorizer: AuthorizerCognitoIdentity}
	case id.UserArn != "" || id.Caller != "" || id.User != "" || id.AccessKey != "":
		return iamCaller(id.UserArn, id.Caller)
	case id.APIKeyID != "":
		return caller{principal: "apikey:" + id.APIKeyID, authorizer: AuthorizerAPIKey}
	case id.APIKey != "":
		return caller{authorizer: AuthorizerAPIKey, fix: fixAPIKey}
	}
	return caller{}
}

// principalURL reads a Function URL event: its IAM caller (AuthType
// AWS_IAM), or none (AuthType NONE).
func principalURL(rc *events.LambdaFunctionURLRequestContext) caller {
	if rc.Authorizer == nil || rc.Authorizer.IAM == nil {
		return caller{}
	}
	return iamCaller(rc.Authorizer.IAM.UserARN, rc.Authorizer.IAM.CallerID)
}

// jwtCaller is the caller of a verified token: its issuer, quoted so that no
// issuer and subject can join into another pair's principal, and its
// subject; or, for a token without one, the first claim of names it holds,
// under its own prefix and with its name, so that no claim can pose as
// another or as a subject.
func jwtCaller(iss string, claim func(string) string, names []string) caller {
	c := caller{authorizer: AuthorizerJWT, fix: fixClaims}
	if sub := claim("sub"); sub != "" {
		c.principal = jwtPrincipal(iss, sub)
		return c
	}
	for _, name := range names {
		if v := claim(name); v != "" {
			c.principal = "jwt-claim:" + strconv.Quote(iss) + "|" + strconv.Quote(name) + "|" + v
			return c
		}
	}
	return c
}

// jwtPrincipal is the principal of a token's subject.
func jwtPrincipal(iss, sub string) string {
	if sub == "" {
		return ""
	}
	return "jwt:" + strconv.Quote(iss) + "|" + sub
}

// lambdaCaller is the caller a Lambda authorizer names: its principalId
// (REST authorizers must return one) or a "sub" in its context, else the
// first context value of names that it holds. A context with none of them
// (a coarse one such as {"plan": "pro"}) names no caller: a hash of it would
// put every caller with the same plan in one scope.
func lambdaCaller(ctx map[string]any, names []string) caller {
	c := caller{authorizer: AuthorizerLambda, fix: fixLambda}
	for _, name := range []string{"principalId", "sub"} {
		if v := identityValue(ctx[name]); v != "" {
			c.principal = "lambda:" + v
			return c
		}
	}
	for _, name := range names {
		if v := identityValue(ctx[name]); v != "" {
			c.principal = "lambda-context:" + strconv.Quote(name) + "|" + v
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

// iamCaller is an IAM caller: its user ARN, else its caller id. The role
// session Cognito identity pools hand out carries one session name for
// every identity of the pool, so such an ARN identifies the pool, not the
// caller: it is no principal.
func iamCaller(userARN, callerID string) caller {
	c := caller{authorizer: AuthorizerIAM, fix: fixIAM}
	if strings.HasSuffix(userARN, "/"+cognitoIdentitySessionName) || strings.HasSuffix(callerID, ":"+cognitoIdentitySessionName) {
		return c
	}
	switch {
	case userARN != "":
		c.principal = "iam:" + userARN
	case callerID != "":
		c.principal = "iam:" + callerID
	}
	return c
}
