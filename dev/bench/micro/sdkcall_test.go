package micro

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// answering is an in-process DynamoDB endpoint that reads each request
// whole and answers an empty JSON object at once: what remains of a call's
// CPU is the Go SDK's own, client side (serializing, signing, the
// middleware stack, the response's parsing), with no server and no network.
type answering struct{}

func (answering) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "Content-Length": {"2"}},
		Body:          io.NopCloser(strings.NewReader("{}")),
		ContentLength: 2, Request: r,
	}, nil
}

// BenchmarkSDKCall is the Go SDK's client-side CPU for one DynamoDB call of
// the benchmark's request: the conditional PutItem of an idempotency record
// holding the 1 KB outcome, the completion write that Powertools makes and
// claim-first lambdaidem does not (its commit carries the outcome). It is the
// reference the wrapper's CPU per first request is compared with, measured in
// the same run, so that the comparison holds on another machine.
func BenchmarkSDKCall(b *testing.B) {
	client := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://dynamodb.local"),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local", ""),
		HTTPClient:   &http.Client{Transport: answering{}},
	})
	for _, sz := range sizes() {
		b.Run("PutItem/"+sz.name, func(b *testing.B) {
			outcome := payment("pay-0", sz.n).Note
			ctx := context.Background()
			keys := ids(resetEvery)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_, err := client.PutItem(ctx, &dynamodb.PutItemInput{
					TableName: aws.String("idempotency"),
					Item: map[string]types.AttributeValue{
						"id":         &types.AttributeValueMemberS{Value: "lambdaidem#" + keys[i%len(keys)]},
						"status":     &types.AttributeValueMemberS{Value: "COMPLETED"},
						"expiration": &types.AttributeValueMemberN{Value: strconv.Itoa(1_800_000_000 + i)},
						"validation": &types.AttributeValueMemberS{Value: "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"},
						"data":       &types.AttributeValueMemberS{Value: outcome},
					},
					ConditionExpression:      aws.String("attribute_exists(#id) AND #attempt = :attempt"),
					ExpressionAttributeNames: map[string]string{"#id": "id", "#attempt": "attempt"},
					ExpressionAttributeValues: map[string]types.AttributeValue{
						":attempt": &types.AttributeValueMemberS{Value: "4b1d7c0e9f2a4e63a5d8c2f1b0e9d7a6"},
					},
				})
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
