// Package tenanttest holds what the front doors' tests of Lambda tenants
// share: the context of a tenant's invocation, the environment of a
// function that declares tenants, and a rendezvous of contenders.
package tenanttest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Context is the context Lambda gives an invocation of tenant t in tenant
// isolation mode; "" gives an invocation without a tenant.
func Context(t string) context.Context {
	return lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-" + t, TenantID: t})
}

// Declared is the Getenv of a function that declares tenants.
func Declared(name string) string {
	if name == lambdaidem.TenantsEnv {
		return lambdaidem.TenantsRequired
	}
	return ""
}

// Rendezvous holds n contenders until all have arrived, so that they run
// at once: a contender told another's attempt is in progress never
// arrives, and the others give up.
type Rendezvous struct {
	arrived sync.WaitGroup
	all     chan struct{}
}

// NewRendezvous returns a Rendezvous of n contenders.
func NewRendezvous(n int) *Rendezvous {
	r := &Rendezvous{all: make(chan struct{})}
	r.arrived.Add(n)
	go func() { r.arrived.Wait(); close(r.all) }()
	return r
}

// ErrAlone: the other contenders never arrived.
var ErrAlone = errors.New("tenanttest: the other contenders never ran")

// Arrive waits until every contender has arrived (nil), or ten seconds
// (ErrAlone). Call it once per contender.
func (r *Rendezvous) Arrive() error {
	r.arrived.Done()
	select {
	case <-r.all:
		return nil
	case <-time.After(10 * time.Second):
		return ErrAlone
	}
}
