package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// The refusals of [preflight], for errors.Is.
var (
	errNoRegion      = errors.New("awsverify: no AWS Region: set AWS_REGION (or a profile's region), or pass -region")
	errNoCredentials = errors.New("awsverify: no AWS credentials: configure them as for the AWS CLI (environment, profile, SSO); nothing was created")
	errEndpointSet   = errors.New("awsverify: an AWS_ENDPOINT_URL* variable points the SDK elsewhere than AWS; unset it, or pass -endpoint-ok to test that endpoint")
)

// endpointVars returns the AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>
// variables set in environ (KEY=value pairs), sorted: the SDK and the CDK
// CLI would send every call there instead of to AWS.
func endpointVars(environ []string) []string {
	var set []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if (k == "AWS_ENDPOINT_URL" || strings.HasPrefix(k, "AWS_ENDPOINT_URL_")) && strings.TrimSpace(v) != "" {
			set = append(set, k+"="+v)
		}
	}
	sort.Strings(set)
	return set
}

// preflightOptions are what [preflight] checks.
type preflightOptions struct {
	// Environ is the process environment (os.Environ()).
	Environ []string
	// EndpointOK allows AWS_ENDPOINT_URL* variables: the run then tests the
	// endpoint they name (LocalStack, say) instead of AWS.
	EndpointOK bool
	// LoadConfig resolves the SDK configuration the way the AWS CLI does
	// (config.LoadDefaultConfig in the command).
	LoadConfig func(ctx context.Context) (aws.Config, error)
}

// target is what a run talks to, once preflight accepted it.
type target struct {
	Config aws.Config
	// Endpoints are the AWS_ENDPOINT_URL* variables in force (-endpoint-ok).
	Endpoints []string
	// AccessKey is the credentials' access key id, shortened for the plan.
	AccessKey string
}

// preflight refuses to go on without a Region or credentials, or with an
// AWS_ENDPOINT_URL* variable set unless o.EndpointOK. It creates nothing:
// the credentials are only resolved (which may call STS or SSO for a
// profile that assumes a role), never used against a service.
func preflight(ctx context.Context, o preflightOptions) (target, error) {
	eps := endpointVars(o.Environ)
	if len(eps) > 0 && !o.EndpointOK {
		return target{}, fmt.Errorf("%w (%s)", errEndpointSet, strings.Join(eps, ", "))
	}
	cfg, err := o.LoadConfig(ctx)
	if err != nil {
		return target{}, fmt.Errorf("%w: %v", errNoCredentials, err)
	}
	if strings.TrimSpace(cfg.Region) == "" {
		return target{}, errNoRegion
	}
	if cfg.Credentials == nil {
		return target{}, errNoCredentials
	}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	creds, err := cfg.Credentials.Retrieve(rctx)
	if err != nil {
		return target{}, fmt.Errorf("%w: %v", errNoCredentials, err)
	}
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		return target{}, errNoCredentials
	}
	return target{Config: cfg, Endpoints: eps, AccessKey: shortKey(creds.AccessKeyID)}, nil
}

// shortKey shows the first four and last four characters of an access key
// id: enough to tell which credentials a run used, never the secret.
func shortKey(id string) string {
	if len(id) <= 8 {
		return "****"
	}
	return id[:4] + "…" + id[len(id)-4:]
}
