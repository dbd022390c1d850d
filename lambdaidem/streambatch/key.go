package streambatch

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/internal/jsonkey"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// KeyFunc returns the idempotency key of a record. It reports a record
// without a usable key with an error matching [lambdaidem.ErrMissingKey]
// or [lambdaidem.ErrInvalidKey]; the record is then a failure. Its errors
// must not quote the key or the data: they are logged.
type KeyFunc func(context.Context, Record) (string, error)

// KeyFromEventID uses the stream's ARN and the record's event id. Lambda
// sends a record again, with the same event id, after any failure of its
// batch, so the key is stable across all of Lambda's retries; a DynamoDB
// stream holds each change exactly once, so for it this is every duplicate
// there is. A Kinesis producer's retry of PutRecord writes a new record
// with a new event id: prefer [KeyFromDataField] when the producer can put
// its own key in the data.
func KeyFromEventID(_ context.Context, r Record) (string, error) {
	if r.EventID == "" {
		return "", fmt.Errorf("%w: the record has no eventID", lambdaidem.ErrMissingKey)
	}
	if r.EventSourceARN == "" {
		return r.EventID, nil
	}
	return r.EventSourceARN + "/" + r.EventID, nil
}

// KeyFromDataField uses a field of a Kinesis record's JSON data. The path
// names it with dots between object members ("transfer.id"); names
// containing dots cannot be addressed. A string is used as it is, a number
// as written; anything else, an absent field, data that is not a JSON
// object, or a record that is not from Kinesis fails Names match as
// encoding/json matches them (case-insensitively, under Unicode simple
// folding); an object naming a step twice that way fails.
func KeyFromDataField(path string) KeyFunc {
	return func(_ context.Context, r Record) (string, error) {
		if r.Kinesis == nil {
			return "", fmt.Errorf("%w: KeyFromDataField reads Kinesis data; this record is not from Kinesis", lambdaidem.ErrMissingKey)
		}
		return jsonkey.Field(r.Kinesis.Kinesis.Data, path, "the data")
	}
}

// KeyFromNewImage uses an attribute of a DynamoDB stream record's new
// image: the item as the change left it. The path names it with dots
// between map members ("request.id"). A String is used as it is, a Number
// as written, a Binary as the standard base64 of its bytes; any other
// type, an absent attribute, a record without a new image (a REMOVE, or a
// stream whose view type is KEYS_ONLY or OLD_IMAGE), or a record that is not
// from DynamoDB fails.
func KeyFromNewImage(path string) KeyFunc {
	steps := strings.Split(path, ".")
	return func(_ context.Context, r Record) (key string, err error) {
		// The accessors of DynamoDBAttributeValue panic on a value of
		// another type, and on the zero value (which says it is a Binary
		// but holds nothing): each is called after its type is checked,
		// and a value built by hand that still trips one is invalid.
		defer func() {
			if v := recover(); v != nil {
				key, err = "", fmt.Errorf("%w: attribute %q of the new image is malformed", lambdaidem.ErrInvalidKey, path)
			}
		}()
		switch {
		case path == "":
			return "", fmt.Errorf("%w: KeyFromNewImage has an empty path", lambdaidem.ErrInvalidKey)
		case r.DynamoDB == nil:
			return "", fmt.Errorf("%w: KeyFromNewImage reads a DynamoDB new image; this record is not from DynamoDB", lambdaidem.ErrMissingKey)
		case r.DynamoDB.Change.NewImage == nil:
			return "", fmt.Errorf("%w: the %s record has no NewImage (a REMOVE, or a stream view type without new images)",
				lambdaidem.ErrMissingKey, r.DynamoDB.EventName)
		}
		var av events.DynamoDBAttributeValue
		image := r.DynamoDB.Change.NewImage
		for i, step := range steps {
			a, ok := image[step]
			if !ok {
				return "", fmt.Errorf("%w: no attribute %q in the new image", lambdaidem.ErrMissingKey, path)
			}
			if i < len(steps)-1 {
				if a.DataType() != events.DataTypeMap {
					return "", fmt.Errorf("%w: no attribute %q in the new image: a parent is not a map", lambdaidem.ErrMissingKey, path)
				}
				image = a.Map()
			}
			av = a
		}
		switch av.DataType() {
		case events.DataTypeString:
			if av.String() == "" {
				return "", fmt.Errorf("%w: attribute %q is empty", lambdaidem.ErrMissingKey, path)
			}
			return av.String(), nil
		case events.DataTypeNumber:
			return av.Number(), nil
		case events.DataTypeBinary:
			if len(av.Binary()) == 0 {
				return "", fmt.Errorf("%w: attribute %q is empty", lambdaidem.ErrMissingKey, path)
			}
			return base64.StdEncoding.EncodeToString(av.Binary()), nil
		case events.DataTypeNull:
			return "", fmt.Errorf("%w: attribute %q is NULL", lambdaidem.ErrMissingKey, path)
		}
		return "", fmt.Errorf("%w: attribute %q is not a String, Number or Binary", lambdaidem.ErrInvalidKey, path)
	}
}
