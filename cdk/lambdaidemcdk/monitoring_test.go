package lambdaidemcdk_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// dimension returns the value of an alarm's only dimension, Service.
func dimension(v any) string {
	dims, _ := v.([]any)
	if len(dims) != 1 {
		return ""
	}
	d, _ := dims[0].(map[string]any)
	if d["Name"] != "Service" {
		return ""
	}
	s, _ := d["Value"].(string)
	return s
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestMonitorAlarmsOnTheEMFMetricsOfEachService(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	topic := awssns.NewTopic(stack, jsii.String("Pager"), nil)
	m, err := table.Monitor(stack, "Monitoring", &lambdaidemcdk.MonitoringProps{
		Services: []string{"payments", "orders"},
		Actions:  []awscloudwatch.IAlarmAction{awscloudwatchactions.NewSnsAction(topic)},
	})
	require.NoError(t, err)
	require.Len(t, m.Unknown, 2)
	require.NotNil(t, m.Dashboard)

	tmpl := cdktest.Synth(t, stack)
	alarms := tmpl.OfType("AWS::CloudWatch::Alarm")
	require.Len(t, alarms, 10, "five alarms per service")
	topicID := tmpl.One(t, "AWS::SNS::Topic", "Pager").LogicalID

	single := []struct {
		metric    string
		threshold float64
	}{
		{"MarkedUnknown", 1},
		{"StoreErrors", 5},
		{"FailOpen", 1},
	}
	for _, svc := range []string{"payments", "orders"} {
		for _, want := range single {
			var found map[string]any
			for _, a := range alarms {
				if a.Properties["MetricName"] == want.metric && dimension(a.Properties["Dimensions"]) == svc {
					found = a.Properties
				}
			}
			require.NotNil(t, found, "%s alarm on %s", svc, want.metric)
			assert.Equal(t, "lambdaidem", found["Namespace"])
			assert.Equal(t, "Sum", found["Statistic"])
			assert.Equal(t, float64(300), found["Period"])
			assert.Equal(t, want.threshold, found["Threshold"])
			assert.Equal(t, "GreaterThanOrEqualToThreshold", found["ComparisonOperator"])
			assert.Equal(t, "notBreaching", found["TreatMissingData"], "EMF writes no data point in a quiet period")
			assert.Equal(t, []any{cdktest.Ref(topicID)}, found["AlarmActions"])
		}
	}

	for _, svc := range []string{"payments", "orders"} {
		var found map[string]any
		for _, a := range alarms {
			if a.Properties["MetricName"] == "UnknownAge" && dimension(a.Properties["Dimensions"]) == svc {
				found = a.Properties
			}
		}
		require.NotNil(t, found, "%s alarm on UnknownAge", svc)
		assert.Equal(t, "Maximum", found["Statistic"])
		assert.Equal(t, float64(3600), found["Threshold"], "an UNKNOWN record an hour old")
		assert.Equal(t, "notBreaching", found["TreatMissingData"])
	}

	var rates []map[string]any
	for _, a := range alarms {
		if _, ok := a.Properties["Metrics"]; ok {
			rates = append(rates, a.Properties)
		}
	}
	require.Len(t, rates, 2, "one conflict-rate alarm per service")
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(rates[0]["Metrics"]))
	q := buf.String()
	for _, want := range []string{`"MetricName":"Claims"`, `"MetricName":"RefusedInProgress"`, `FILL(busy, 0)`, `>= 20`} {
		assert.Contains(t, q, want)
	}
	assert.Equal(t, float64(20), rates[0]["Threshold"])

	dash := tmpl.One(t, "AWS::CloudWatch::Dashboard", "Monitoring")
	body, _ := json.Marshal(dash.Properties["DashboardBody"])
	for _, want := range []string{"CommitLatency", "p99", "CacheReplays", "RefusedKeyReused", "ThrottledRequests", "idempotency alarms"} {
		assert.Contains(t, string(body), want)
	}
}

func TestMonitorRefusesWhatCannotWork(t *testing.T) {
	tests := map[string]*lambdaidemcdk.MonitoringProps{
		"no service":         nil,
		"blank service":      {Services: []string{" "}},
		"service twice":      {Services: []string{"a", "a"}},
		"non-ASCII service":  {Services: []string{"zahlungen-ü"}},
		"negative threshold": {Services: []string{"a"}, StoreErrors: -1},
		"rate above 100%":    {Services: []string{"a"}, ConflictRatePercent: 120},
	}
	for name, props := range tests {
		t.Run(name, func(t *testing.T) {
			stack := newStack(t)
			table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			_, err = table.Monitor(stack, "Monitoring", props)
			assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
		})
	}
}

// TestMetricNamesAreTheEMFPackages reads the emf package's source: the
// alarms watch exactly the metrics the functions write.
func TestMetricNamesAreTheEMFPackages(t *testing.T) {
	src := filepath.Join("..", "..", "lambdaidem", "emf", "emf.go")
	f, err := parser.ParseFile(token.NewFileSet(), src, nil, 0)
	require.NoError(t, err)
	emf := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				emf[vs.Names[0].Name] = v
			}
		}
		return true
	})
	ours := map[string]string{
		"Claims": lambdaidemcdk.MetricClaims, "CacheReplays": lambdaidemcdk.MetricCacheReplays, "StoreReplays": lambdaidemcdk.MetricStoreReplays,
		"RefusedInProgress": lambdaidemcdk.MetricRefusedInProgress, "RefusedKeyReused": lambdaidemcdk.MetricRefusedKeyReused,
		"RefusedUnknown": lambdaidemcdk.MetricRefusedUnknown, "LeaseLost": lambdaidemcdk.MetricLeaseLost,
		"MarkedUnknown": lambdaidemcdk.MetricMarkedUnknown, "FailOpen": lambdaidemcdk.MetricFailOpen,
		"StoreErrors": lambdaidemcdk.MetricStoreErrors, "CommitLatency": lambdaidemcdk.MetricCommitLatency,
		"DimService": lambdaidemcdk.MetricsServiceDimension,
	}
	for name, v := range ours {
		assert.Equal(t, emf[name], v, "emf.%s", name)
	}
	assert.True(t, strings.Contains(mustRead(t, src), `o.Namespace = "`+lambdaidemcdk.DefaultMetricsNamespace+`"`), "emf's default namespace")
}
