package frontdoor

import "maps"

// Caller is who sends a request, as the event's request context shows it.
// The zero Caller is [Anonymous].
type Caller struct {
	kind    string
	claims  map[string]string
	context map[string]any
	arn     string
	keyID   string
}

// The kinds of caller, as errors name them.
const (
	kindJWT    = "JWT authorizer"
	kindLambda = "Lambda authorizer"
	kindIAM    = "IAM"
	kindAPIKey = "API key"
)

// Anonymous is a request without an authorizer (a public route, a Function
// URL with AuthType NONE).
func Anonymous() Caller { return Caller{} }

// JWT is a caller verified by a JWT authorizer (HTTP API) or a Cognito
// user pool authorizer (REST API) whose token has the issuer and subject
// given.
func JWT(issuer, subject string) Caller {
	return Claims(map[string]string{"iss": issuer, "sub": subject})
}

// Claims is a caller verified by a JWT authorizer whose token has exactly
// these claims: a machine client without "sub", say ({"iss": …,
// "client_id": …}).
func Claims(claims map[string]string) Caller {
	return Caller{kind: kindJWT, claims: maps.Clone(claims)}
}

// LambdaAuthorizer is a caller a Lambda (custom) authorizer let in with
// this context (REST APIs: its principalId is context["principalId"]).
func LambdaAuthorizer(context map[string]any) Caller {
	return Caller{kind: kindLambda, context: maps.Clone(context)}
}

// IAM is a caller that signed the request with SigV4 credentials of
// userARN (a Function URL or route with AuthType AWS_IAM).
func IAM(userARN string) Caller { return Caller{kind: kindIAM, arn: userARN} }

// APIKey is a REST API caller that sent the API key with this id (usage
// plans). HTTP APIs and Function URLs have no API keys: sending it there
// is an error.
func APIKey(id string) Caller { return Caller{kind: kindAPIKey, keyID: id} }
