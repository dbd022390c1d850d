package e2estack

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// DynamoDB is the in-process DynamoDB-compatible endpoint: the minidyn
// emulator behind ddbtest's fidelity proxy, behind a [rie.Hold],
// served on a loopback port that function processes reach through
// AWS_ENDPOINT_URL_DYNAMODB.
type DynamoDB struct {
	// URL is the endpoint's base URL.
	URL string
	// Proxy counts calls and injects faults (see ddbtest).
	Proxy *ddbtest.Proxy
	// Hold stalls chosen requests before they reach the proxy.
	Hold *rie.Hold
	// Client is an SDK client for the endpoint, with explicit options.
	Client *dynamodb.Client

	srv *http.Server
}

// StartDynamoDB serves a fresh emulator on 127.0.0.1. Stop it with Close.
func StartDynamoDB(ctx context.Context) (*DynamoDB, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("e2estack: listen for DynamoDB: %w", err)
	}
	p := ddbtest.NewProxy(ddbtest.NewEmulator())
	h := rie.NewHold(p)
	d := &DynamoDB{
		URL:   "http://" + l.Addr().String(),
		Proxy: p,
		Hold:  h,
		srv:   &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second},
	}
	d.Client = ddbtest.NewClient(d.URL)
	go func() { _ = d.srv.Serve(l) }()
	return d, nil
}

// Close stops the server; held requests are dropped.
func (d *DynamoDB) Close() {
	d.Hold.ReleaseAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
	_ = d.srv.Close()
}
