package ddbtest

import (
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// ClientOptions configure [NewClient]. The zero value is valid.
type ClientOptions struct {
	// Region is the signing region. Default "us-east-1".
	Region string
	// AccessKeyID and SecretAccessKey are static credentials. Default
	// "test" and "test", which emulators and LocalStack accept.
	AccessKeyID, SecretAccessKey string
	// MaxAttempts is how many times the SDK sends one call, retries
	// included. Default 3, the SDK's own default.
	MaxAttempts int
	// MaxBackoff caps the SDK's wait between retries. Default 20ms, so that
	// tests of throttling and 5xx run fast. Retries are never rate-limited
	// by the SDK's retry token bucket.
	MaxBackoff time.Duration
	// HTTPClient sends the requests. Default: an http.Client of its own with
	// room for 128 idle connections to the endpoint.
	HTTPClient *http.Client
}

// NewClient returns a DynamoDB client for the endpoint at url, built from
// explicit options only: it never reads the environment or shared config
// files (config.LoadDefaultConfig breaks with a custom HTTP client when a
// CA bundle variable is set).
func NewClient(url string, optFns ...func(*ClientOptions)) *dynamodb.Client {
	o := ClientOptions{Region: "us-east-1", AccessKeyID: "test", SecretAccessKey: "test", MaxAttempts: 3, MaxBackoff: 20 * time.Millisecond}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.HTTPClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 128
		tr.MaxIdleConnsPerHost = 128
		o.HTTPClient = &http.Client{Transport: tr}
	}
	return dynamodb.New(dynamodb.Options{
		BaseEndpoint: aws.String(url),
		Region:       o.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(o.AccessKeyID, o.SecretAccessKey, ""),
		HTTPClient:   o.HTTPClient,
		Retryer: retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = o.MaxAttempts
			so.MaxBackoff = o.MaxBackoff
			so.BaseDelay = o.MaxBackoff / 4
			so.RateLimiter = ratelimit.None
		}),
	})
}
