package lambdaidemcdk_test

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// The payments function writes its metrics with emf.New(os.Stdout,
// func(o *emf.Options) { o.Service = "payments" }); the alarms page the
// on-call topic when a record is left UNKNOWN, the table fails, the
// function fails open, or duplicates pile up on attempts in progress.
func ExampleTable_Monitor() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Payments"), nil)
	table, err := lambdaidemcdk.NewTable(stack, "Idempotency", nil)
	if err != nil {
		panic(err)
	}
	oncall := awssns.NewTopic(stack, jsii.String("OnCall"), nil)
	m, err := table.Monitor(stack, "IdempotencyMonitoring", &lambdaidemcdk.MonitoringProps{
		Services: []string{"payments"},
		Actions:  []awscloudwatch.IAlarmAction{awscloudwatchactions.NewSnsAction(oncall)},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(m.Unknown), len(m.StoreErrors), len(m.FailOpen), len(m.ConflictRate), m.Dashboard != nil)
	// Output: 1 1 1 1 true
}
