package main

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

// scWindow is claim-first inside a Powertools cutover window (issue 35):
// the claim writes the Powertools-shaped shadow too, and the commit's
// transaction holds its COMPLETED form. Outside the window a request is
// the claim-first row: not one call more (dev/integrationtest's
// TestPowertoolsWindowCalls).
const scWindow = "lambdaidem claim-first, Powertools window open"

// windowScenario is lambdaidem claim-first on a table a Powertools
// TypeScript function (keyed on the payment id) used, with the window open.
func windowScenario(client *dynamodb.Client) *goScenario {
	open := func(o *dynamostore.Options) {
		o.Powertools = dynamostore.PowertoolsWindow{
			Config: powertools.Config{Language: powertools.TypeScript, FunctionName: "bench"},
			Until:  time.Now().Add(24 * time.Hour),
		}
	}
	wrap := func(s *dynamostore.Store, h func(context.Context, payment) (receipt, error)) func(context.Context, payment) (receipt, error) {
		return dynamostore.PowertoolsHandler(s, h, func(ev payment) (any, error) { return ev.ID, nil }, nil)
	}
	return guardScenario(scWindow, client, open, wrap, func(o *lambdaidem.Options) { o.Mode = lambdaidem.ClaimFirst })
}
