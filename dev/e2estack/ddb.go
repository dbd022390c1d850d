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

// DynamoDB is the DynamoDB-compatible endpoint of the stack: the world
// $LAMBDAIDEM_WORLD selects (ddbtest.Open: the in-process minidyn by
// default, or a Dynoxide process) behind ddbtest's fidelity proxy, behind
// a [rie.Hold], served on a loopback port that function processes reach
// through AWS_ENDPOINT_URL_DYNAMODB.
type DynamoDB struct {
	// URL is the endpoint's base URL.
	URL string
	// Proxy counts calls and injects faults (see ddbtest).
	Proxy *ddbtest.Proxy
	// Hold stalls chosen requests before they reach the proxy.
	Hold *rie.Hold
	// Client is an SDK client for the endpoint, with explicit options.
	Client *dynamodb.Client
	// World is the world behind the proxy.
	World ddbtest.World

	srv *http.Server
	ep  *ddbtest.Endpoint
}

// StartDynamoDB serves a fresh endpoint of the selected world on
// 127.0.0.1. Stop it with Close. It refuses an external endpoint
// ($AWS_ENDPOINT_URL_DYNAMODB in the test's environment): the suite's
// faults and holds need the proxy.
func StartDynamoDB(ctx context.Context) (*DynamoDB, error) {
	ep, err := ddbtest.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("e2estack: DynamoDB: %w", err)
	}
	if ep.Proxy == nil {
		ep.Close()
		return nil, fmt.Errorf("e2estack: %s points at an external endpoint: the end-to-end suite needs ddbtest's proxy (select a world with %s instead)", ddbtest.EnvEndpoint, ddbtest.EnvWorld)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ep.Close()
		return nil, fmt.Errorf("e2estack: listen for DynamoDB: %w", err)
	}
	h := rie.NewHold(ep.Proxy)
	d := &DynamoDB{
		URL:   "http://" + l.Addr().String(),
		Proxy: ep.Proxy,
		Hold:  h,
		World: ep.World,
		srv:   &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second},
		ep:    ep,
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
	d.ep.Close()
}
