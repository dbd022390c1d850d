package lambdaidemcdk

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// MetricOutboxSetAside is the EMF metric the outbox relay writes for each
// item it sets aside (relay.Options.Metrics; emf.Metrics.WriteSetAside).
const MetricOutboxSetAside = "OutboxSetAside"

// SetAsideAlarmProps configures [Outbox.AlarmOnSetAside]. Service is
// required.
type SetAsideAlarmProps struct {
	// Service is the Service dimension of the relay's metrics
	// (emf.Options.Service of the emf.Metrics given to relay.Options.Metrics).
	// Required.
	Service string
	// Namespace is the relay's metrics namespace. Default "lambdaidem".
	Namespace string
	// Period is the alarm's evaluation period. Default 5 minutes.
	Period awscdk.Duration
	// Actions are added to the alarm's ALARM state.
	Actions []awscloudwatch.IAlarmAction
}

// AlarmOnSetAside creates, in scope under id, an alarm that fires when the
// relay sets an outbox message aside (OutboxSetAside Sum ≥ 1 in a period):
// a message its target refuses every time, or whose deduplication window
// has passed, no longer blocks its record key but is not published until
// an operator releases it (`lambdaidem outbox list`, `release`,
// `discard`). Missing data is not breaching: EMF writes the metric only
// when it happens. It returns an error wrapping [ErrInvalidProps] for a
// Service CloudWatch cannot take as a dimension value.
func (o *Outbox) AlarmOnSetAside(scope constructs.Construct, id string, props SetAsideAlarmProps) (awscloudwatch.Alarm, error) {
	p := props
	if strings.TrimSpace(p.Service) == "" || len(p.Service) > 1024 || !printableASCII(p.Service) {
		return nil, fmt.Errorf("%w: AlarmOnSetAside needs the relay's Service dimension (emf.Options.Service): non-blank printable ASCII of at most 1024 characters, got %q", ErrInvalidProps, p.Service)
	}
	if p.Namespace == "" {
		p.Namespace = DefaultMetricsNamespace
	}
	if p.Period == nil {
		p.Period = awscdk.Duration_Minutes(jsii.Number(5))
	}
	a := awscloudwatch.NewAlarm(scope, jsii.String(id), &awscloudwatch.AlarmProps{
		Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace:     jsii.String(p.Namespace),
			MetricName:    jsii.String(MetricOutboxSetAside),
			DimensionsMap: &map[string]*string{MetricsServiceDimension: jsii.String(p.Service)},
			Statistic:     jsii.String("Sum"),
			Period:        p.Period,
		}),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		AlarmDescription: jsii.String(p.Service + ": the outbox relay set aside a message it cannot publish (refused by its target every time, or past its window); " +
			"it no longer blocks its key but is not sent until released: `lambdaidem outbox list`, then `release` or `discard`"),
	})
	if len(p.Actions) > 0 {
		a.AddAlarmAction(p.Actions...)
	}
	return a, nil
}
