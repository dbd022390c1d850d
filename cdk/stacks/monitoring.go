package stacks

import (
	"github.com/aws/constructs-go/constructs/v10"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// The Service dimension of each example function's metrics: the value its
// main.go gives emf.Options.Service.
const (
	PaymentsMetricsService = "payments"
	OrdersMetricsService   = "orders"
)

// monitor turns on the idempotency alarms and dashboard for the function
// whose metrics carry service.
func monitor(scope constructs.Construct, idem *lambdaidemcdk.Table, service string) error {
	_, err := idem.Monitor(scope, "Idempotency", &lambdaidemcdk.MonitoringProps{Services: []string{service}})
	return err
}
