package apigw

import "github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"

// The kinds of authorizer an event can show, as [Request.Authorizer] names
// them.
const (
	AuthorizerJWT             = httpengine.AuthorizerJWT             // HTTP API JWT authorizer, REST Cognito user pool authorizer
	AuthorizerLambda          = httpengine.AuthorizerLambda          // Lambda (custom) authorizer
	AuthorizerIAM             = httpengine.AuthorizerIAM             // IAM (SigV4) authorization
	AuthorizerCognitoIdentity = httpengine.AuthorizerCognitoIdentity // REST IAM authorization with Cognito identity pool credentials
	AuthorizerAPIKey          = httpengine.AuthorizerAPIKey          // REST API key
	AuthorizerUnrecognized    = httpengine.AuthorizerUnrecognized    // an authorizer block with nothing the adapter knows in it
)
