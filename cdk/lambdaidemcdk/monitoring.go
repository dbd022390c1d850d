package lambdaidemcdk

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The metrics the library's emf package writes (github.com/lambdaidem/
// lambdaidem/lambdaidem/emf): same namespace default, names and
// dimensions, checked against that package by this package's tests.
const (
	// DefaultMetricsNamespace is emf.Options.Namespace's default.
	DefaultMetricsNamespace = "lambdaidem"
	// MetricsServiceDimension is the dimension naming the function
	// (emf.Options.Service).
	MetricsServiceDimension = "Service"

	MetricClaims            = "Claims"
	MetricCacheReplays      = "CacheReplays"
	MetricStoreReplays      = "StoreReplays"
	MetricRefusedInProgress = "RefusedInProgress"
	MetricRefusedKeyReused  = "RefusedKeyReused"
	MetricRefusedUnknown    = "RefusedUnknown"
	MetricLeaseLost         = "LeaseLost"
	MetricMarkedUnknown     = "MarkedUnknown"
	MetricUnknownAge        = "UnknownAge"
	MetricFailOpen          = "FailOpen"
	MetricStoreErrors       = "StoreErrors"
	MetricCommitLatency     = "CommitLatency"
)

// MonitoringProps configures [Table.Monitor]. Only Services is required.
type MonitoringProps struct {
	// Services are the Service dimension values (emf.Options.Service) of
	// the functions that use the table, one set of alarms each. Required.
	Services []string
	// Namespace is the functions' metrics namespace. Default "lambdaidem".
	Namespace string
	// Period is each alarm's evaluation period. Default 5 minutes.
	Period awscdk.Duration
	// StoreErrors is how many failed store calls in one period raise the
	// store-errors alarm. Default 5.
	StoreErrors float64
	// ConflictRatePercent is the share of requests refused as in progress
	// (RefusedInProgress out of Claims + RefusedInProgress), in percent,
	// that raises the conflict-rate alarm; it is evaluated only in periods
	// with at least ConflictMinRequests such requests. Defaults 20 and 20.
	ConflictRatePercent float64
	ConflictMinRequests float64
	// UnknownAge is the age of an UNKNOWN record (emf's UnknownAge, the
	// Maximum a duplicate refused by one reports in a period, or a
	// scheduled `lambdaidem list --emf` for the oldest in the table) that
	// raises the unknown-age alarm: UNKNOWN records never expire, so an
	// old one is a recovery obligation nobody met. Default 1 hour.
	UnknownAge awscdk.Duration
	// Actions are added to every alarm's ALARM state (an SNS topic, say).
	Actions []awscloudwatch.IAlarmAction
	// DashboardName names the dashboard. Default: a name CloudFormation
	// generates. Set NoDashboard to create none.
	DashboardName string
	NoDashboard   bool
}

// Monitoring is what [Table.Monitor] created.
type Monitoring struct {
	// Unknown: a record was left UNKNOWN (MarkedUnknown ≥ 1): an operator
	// must settle it (the lambdaidem command: list --stuck, resolve).
	Unknown map[string]awscloudwatch.Alarm
	// UnknownAge: a duplicate met an UNKNOWN record older than the
	// threshold, or a scheduled `lambdaidem list --emf` found one
	// (UnknownAge Maximum ≥ MonitoringProps.UnknownAge).
	UnknownAge map[string]awscloudwatch.Alarm
	// StoreErrors: store calls failed (StoreErrors ≥ the threshold).
	StoreErrors map[string]awscloudwatch.Alarm
	// FailOpen: a request was answered without idempotency (FailOpen ≥ 1).
	FailOpen map[string]awscloudwatch.Alarm
	// ConflictRate: duplicates meeting an attempt in progress make up more
	// than the threshold share of requests.
	ConflictRate map[string]awscloudwatch.Alarm
	// Dashboard shows every metric per service, the table's throttling and
	// the alarms; nil with NoDashboard.
	Dashboard awscloudwatch.Dashboard
}

// Monitor creates, in scope under id, CloudWatch alarms on the metrics
// that the functions using the table write with the emf package, one set
// per service in props.Services, and a dashboard. Every alarm treats
// missing data as not breaching: EMF writes a metric only when its event
// happens, so a quiet period has no data point. It returns an error
// wrapping [ErrInvalidProps] for no service, a service name CloudWatch
// cannot take as a dimension value, or a negative threshold.
func (t *Table) Monitor(scope constructs.Construct, id string, props *MonitoringProps) (*Monitoring, error) {
	var p MonitoringProps
	if props != nil {
		p = *props
	}
	if len(p.Services) == 0 {
		return nil, fmt.Errorf("%w: Monitor needs the Service dimension of at least one function (emf.Options.Service)", ErrInvalidProps)
	}
	seen := map[string]bool{}
	for _, s := range p.Services {
		if strings.TrimSpace(s) == "" || len(s) > 1024 || seen[s] || !printableASCII(s) {
			return nil, fmt.Errorf("%w: service %q: want distinct, non-blank printable ASCII names of at most 1024 characters", ErrInvalidProps, s)
		}
		seen[s] = true
	}
	if p.StoreErrors < 0 || p.ConflictRatePercent < 0 || p.ConflictRatePercent > 100 || p.ConflictMinRequests < 0 {
		return nil, fmt.Errorf("%w: thresholds must not be negative, and a rate is at most 100%%", ErrInvalidProps)
	}
	if p.Namespace == "" {
		p.Namespace = DefaultMetricsNamespace
	}
	if p.Period == nil {
		p.Period = awscdk.Duration_Minutes(jsii.Number(5))
	}
	if p.StoreErrors == 0 {
		p.StoreErrors = 5
	}
	if p.ConflictRatePercent == 0 {
		p.ConflictRatePercent = 20
	}
	if p.ConflictMinRequests == 0 {
		p.ConflictMinRequests = 20
	}
	if p.UnknownAge == nil {
		p.UnknownAge = awscdk.Duration_Hours(jsii.Number(1))
	}

	c := constructs.NewConstruct(scope, jsii.String(id))
	m := &Monitoring{
		Unknown: map[string]awscloudwatch.Alarm{}, UnknownAge: map[string]awscloudwatch.Alarm{}, StoreErrors: map[string]awscloudwatch.Alarm{},
		FailOpen: map[string]awscloudwatch.Alarm{}, ConflictRate: map[string]awscloudwatch.Alarm{},
	}
	var rows []*[]awscloudwatch.IWidget
	var all []interfacesawscloudwatch.IAlarmRef
	for _, svc := range p.Services {
		metric := func(name, stat string) awscloudwatch.Metric {
			return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
				Namespace:     jsii.String(p.Namespace),
				MetricName:    jsii.String(name),
				DimensionsMap: &map[string]*string{MetricsServiceDimension: jsii.String(svc)},
				Statistic:     jsii.String(stat),
				Period:        p.Period,
			})
		}
		alarm := func(name, what string, m awscloudwatch.IMetric, threshold float64) awscloudwatch.Alarm {
			a := awscloudwatch.NewAlarm(c, jsii.String(svc+name), &awscloudwatch.AlarmProps{
				Metric:             m,
				Threshold:          jsii.Number(threshold),
				EvaluationPeriods:  jsii.Number(1),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
				AlarmDescription:   jsii.String(svc + ": " + what),
			})
			if len(p.Actions) > 0 {
				a.AddAlarmAction(p.Actions...)
			}
			all = append(all, a)
			return a
		}
		m.Unknown[svc] = alarm("Unknown", "an idempotency record was left UNKNOWN after an external effect; "+
			"find it with `lambdaidem list --stuck` and settle it with `lambdaidem resolve`", metric(MetricMarkedUnknown, "Sum"), 1)
		m.UnknownAge[svc] = alarm("UnknownAge", "a retry, or a scheduled `lambdaidem list --emf`, met an idempotency record left UNKNOWN longer ago than the threshold (UNKNOWN records never expire); "+
			"settle it with `lambdaidem resolve`", metric(MetricUnknownAge, "Maximum"), *p.UnknownAge.ToSeconds(nil))
		m.StoreErrors[svc] = alarm("StoreErrors", "calls to the idempotency table failed (requests got 503 or were redelivered)",
			metric(MetricStoreErrors, "Sum"), p.StoreErrors)
		m.FailOpen[svc] = alarm("FailOpen", "requests ran WITHOUT idempotency because the table was unavailable (FailOpen)",
			metric(MetricFailOpen, "Sum"), 1)
		rate := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf("IF((FILL(claims, 0) + FILL(busy, 0)) >= %g, 100 * FILL(busy, 0) / (FILL(claims, 0) + FILL(busy, 0)), 0)", p.ConflictMinRequests)),
			UsingMetrics: &map[string]awscloudwatch.IMetric{
				"claims": metric(MetricClaims, "Sum"),
				"busy":   metric(MetricRefusedInProgress, "Sum"),
			},
			Period: p.Period,
			Label:  jsii.String("in-progress refusals, % of requests"),
		})
		m.ConflictRate[svc] = alarm("ConflictRate", fmt.Sprintf("more than %g%% of requests met an attempt in progress (hot keys or a stalled handler)", p.ConflictRatePercent),
			rate, p.ConflictRatePercent)

		graph := func(title string, metrics ...awscloudwatch.IMetric) awscloudwatch.IWidget {
			return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String(svc + ": " + title), Left: &metrics, Width: jsii.Number(6)})
		}
		rows = append(rows, &[]awscloudwatch.IWidget{
			graph("claims and replays", metric(MetricClaims, "Sum"), metric(MetricCacheReplays, "Sum"), metric(MetricStoreReplays, "Sum")),
			graph("refusals", metric(MetricRefusedInProgress, "Sum"), metric(MetricRefusedKeyReused, "Sum"), metric(MetricRefusedUnknown, "Sum"), metric(MetricLeaseLost, "Sum")),
			graph("needs attention", metric(MetricMarkedUnknown, "Sum"), metric(MetricStoreErrors, "Sum"), metric(MetricFailOpen, "Sum")),
			graph("commit latency (ms)", metric(MetricCommitLatency, "p50"), metric(MetricCommitLatency, "p99")),
		})
	}
	if !p.NoDashboard {
		table := t.Table
		top := &[]awscloudwatch.IWidget{
			awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{Title: jsii.String("idempotency alarms"), Alarms: &all, Width: jsii.Number(12)}),
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String("idempotency table: throttled requests"),
				Left: &[]awscloudwatch.IMetric{
					table.MetricThrottledRequestsForOperations(&awsdynamodb.OperationsMetricOptions{Operations: &storeOperations, Period: p.Period}),
				},
				Width: jsii.Number(6),
			}),
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String("idempotency table: system errors"),
				Left: &[]awscloudwatch.IMetric{
					table.MetricSystemErrorsForOperations(&awsdynamodb.SystemErrorsForOperationsMetricOptions{Operations: &storeOperations, Period: p.Period}),
				},
				Width: jsii.Number(6),
			}),
		}
		widgets := append([]*[]awscloudwatch.IWidget{top}, rows...)
		dp := &awscloudwatch.DashboardProps{Widgets: &widgets}
		if p.DashboardName != "" {
			dp.DashboardName = jsii.String(p.DashboardName)
		}
		m.Dashboard = awscloudwatch.NewDashboard(c, jsii.String("Dashboard"), dp)
	}
	return m, nil
}

// storeOperations are the DynamoDB operations the store makes.
var storeOperations = []awsdynamodb.Operation{
	awsdynamodb.Operation_GET_ITEM, awsdynamodb.Operation_PUT_ITEM, awsdynamodb.Operation_UPDATE_ITEM,
	awsdynamodb.Operation_DELETE_ITEM, awsdynamodb.Operation_TRANSACT_WRITE_ITEMS,
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
