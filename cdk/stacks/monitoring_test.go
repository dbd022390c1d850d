package stacks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/stacks"
)

// TestStacksTurnOnIdempotencyAlarms: each stack alarms on its function's
// metrics (UNKNOWN records, store errors, fail-open, conflict rate) and
// has a dashboard, keyed by the Service its main.go writes.
func TestStacksTurnOnIdempotencyAlarms(t *testing.T) {
	tests := []struct {
		name    string
		tmpl    func(t *testing.T) *cdktest.Template
		service string
		main    string
	}{
		{"payments", func(t *testing.T) *cdktest.Template {
			return newPayments(t, stacks.PaymentsProps{AllowUnauthenticated: true})
		}, stacks.PaymentsMetricsService, "api-gateway"},
		{"orders", func(t *testing.T) *cdktest.Template { return newOrders(t, stacks.OrdersProps{}) }, stacks.OrdersMetricsService, "sqs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := tc.tmpl(t)
			alarms := tmpl.OfType("AWS::CloudWatch::Alarm")
			require.Len(t, alarms, 5)
			metrics := map[string]bool{}
			for _, a := range alarms {
				if name, ok := a.Properties["MetricName"].(string); ok {
					metrics[name] = true
					assert.Equal(t, []any{map[string]any{"Name": "Service", "Value": tc.service}}, a.Properties["Dimensions"])
				}
			}
			assert.Equal(t, map[string]bool{"MarkedUnknown": true, "UnknownAge": true, "StoreErrors": true, "FailOpen": true}, metrics)
			assert.Len(t, tmpl.OfType("AWS::CloudWatch::Dashboard"), 1)

			src, err := os.ReadFile(filepath.Join("..", "..", "examples", tc.main, "main.go"))
			require.NoError(t, err)
			assert.True(t, strings.Contains(string(src), `metricsService = "`+tc.service+`"`),
				"examples/%s/main.go writes its metrics with Service %q", tc.main, tc.service)
		})
	}
}
