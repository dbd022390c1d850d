package e2estack

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/smithy-go"
)

// TestKinesaliteDepartures names where kinesalite 3.3.3 departs from the
// Amazon Kinesis Data Streams API Reference, checked so that a kinesalite
// that changes fails here (the harness names streams, never ARNs, for
// that reason):
//   - StreamARN, accepted by AWS on ListShards, PutRecord, GetShardIterator
//     and the rest in place of StreamName, is ignored: ListShards answers
//     InvalidArgumentException, PutRecord a ValidationException (null
//     streamName);
//   - DescribeStreamSummary has no StreamModeDetails (AWS: PROVISIONED or
//     ON_DEMAND).
func TestKinesaliteDepartures(t *testing.T) {
	root, err := ModuleRoot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	kl, err := StartKinesalite(t.Context(), root, nil)
	if errors.Is(err, ErrNoKinesalite) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer kl.Close()
	ctx := t.Context()
	c := NewKinesisClient(kl.URL)
	arn, err := CreateKinesisStream(ctx, c, "departures", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListShards(ctx, &kinesis.ListShardsInput{StreamARN: aws.String(arn)}); errorCode(err) != "InvalidArgumentException" {
		t.Errorf("ListShards by StreamARN: %v; the named departure is InvalidArgumentException", err)
	}
	if _, err := c.PutRecord(ctx, &kinesis.PutRecordInput{StreamARN: aws.String(arn), PartitionKey: aws.String("a"), Data: []byte("x")}); errorCode(err) != "ValidationException" {
		t.Errorf("PutRecord by StreamARN: %v; the named departure is ValidationException", err)
	}
	d, err := c.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("departures")})
	if err != nil {
		t.Fatal(err)
	}
	if d.StreamDescriptionSummary.StreamModeDetails != nil {
		t.Errorf("StreamModeDetails = %+v: the named departure (none) is gone", d.StreamDescriptionSummary.StreamModeDetails)
	}
}

func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}
