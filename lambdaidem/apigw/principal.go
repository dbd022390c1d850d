package apigw

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The principal of an event is the first of these that it carries, in this
// order: a JWT subject, a Lambda authorizer's principal, an IAM caller, a
// Cognito identity, an API key id. See [Request.Principal].

func principalV2(rc *events.APIGatewayV2HTTPRequestContext) string {
	a := rc.Authorizer
	if a == nil {
		return ""
	}
	if a.JWT != nil {
		if p := jwtPrincipal(a.JWT.Claims["iss"], a.JWT.Claims["sub"]); p != "" {
			return p
		}
	}
	if p := lambdaPrincipal(a.Lambda); p != "" {
		return p
	}
	if a.IAM != nil {
		return iamPrincipal(a.IAM.UserARN, a.IAM.CallerID)
	}
	return ""
}

func principalV1(rc *events.APIGatewayProxyRequestContext) string {
	if claims, ok := rc.Authorizer["claims"].(map[string]any); ok {
		iss, _ := claims["iss"].(string)
		sub, _ := claims["sub"].(string)
		if p := jwtPrincipal(iss, sub); p != "" {
			return p
		}
	}
	if p := lambdaPrincipal(rc.Authorizer); p != "" {
		return p
	}
	id := &rc.Identity
	if p := iamPrincipal(id.UserArn, id.Caller); p != "" {
		return p
	}
	if id.CognitoIdentityID != "" {
		return "cognito:" + id.CognitoIdentityID
	}
	if id.APIKeyID != "" {
		return "apikey:" + id.APIKeyID
	}
	return ""
}

func principalURL(rc *events.LambdaFunctionURLRequestContext) string {
	if rc.Authorizer == nil || rc.Authorizer.IAM == nil {
		return ""
	}
	return iamPrincipal(rc.Authorizer.IAM.UserARN, rc.Authorizer.IAM.CallerID)
}

// jwtPrincipal is the issuer, quoted so that no issuer and subject can
// join into another pair's principal, and the subject.
func jwtPrincipal(iss, sub string) string {
	if sub == "" {
		return ""
	}
	return "jwt:" + strconv.Quote(iss) + "|" + sub
}

// lambdaPrincipal reads a Lambda authorizer's context: its principalId
// (REST), else its "sub" or "principalId" context value, else, for an
// HTTP API simple-response authorizer that returns only a context, a hash
// of the whole context.
func lambdaPrincipal(ctx map[string]any) string {
	if len(ctx) == 0 {
		return ""
	}
	for _, name := range []string{"principalId", "sub"} {
		if v, ok := ctx[name]; ok && v != nil && v != "" {
			return "lambda:" + fmt.Sprint(v)
		}
	}
	if _, hasClaims := ctx["claims"]; hasClaims {
		return ""
	}
	if fp, err := lambdaidem.Fingerprint(ctx); err == nil {
		return "lambda#" + fp
	}
	return ""
}

func iamPrincipal(userARN, callerID string) string {
	switch {
	case userARN != "":
		return "iam:" + userARN
	case callerID != "":
		return "iam:" + callerID
	}
	return ""
}
