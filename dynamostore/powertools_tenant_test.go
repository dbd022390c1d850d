package dynamostore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

// A Powertools window fails closed for a Lambda tenant: Powertools' keys
// name no tenant, so its old record could be another tenant's.
func TestPowertoolsWindowRefusesATenant(t *testing.T) {
	s, err := dynamostore.New(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "idem", func(o *dynamostore.Options) {
		o.Powertools = dynamostore.PowertoolsWindow{Config: powertools.Config{Language: powertools.Python, FunctionName: "orders"}, Until: time.Now().Add(time.Hour)}
	})
	if err != nil {
		t.Fatal(err)
	}
	blue := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "r", TenantID: "blue"})
	if _, err := s.WithPowertools(blue, "order-1", nil); !errors.Is(err, dynamostore.ErrPowertoolsTenant) {
		t.Fatalf("WithPowertools for tenant blue: %v; want ErrPowertoolsTenant", err)
	}
	if _, err := s.WithPowertools(context.Background(), "order-1", nil); err != nil {
		t.Fatalf("WithPowertools without a tenant: %v", err)
	}
}
