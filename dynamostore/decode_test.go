package dynamostore

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestDecodeNumbersDynamoDBRefuses: a Number attribute whose text is not a
// number is a clear ErrMalformedRecord naming the attribute. DynamoDB
// refuses to store such a value (ValidationException: "The parameter
// cannot be converted to a numeric value"), so no item read from a table
// holds one; the decoder is still total over what the SDK type allows (an
// item built by hand, a stream record from another source). The malformed
// items a table can hold are tested over the DynamoDB test endpoint in
// dev/integrationtest (TestDecodeMalformedRecords).
func TestDecodeNumbersDynamoDBRefuses(t *testing.T) {
	var o Options
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	c := codec{opts: &o}
	for _, v := range []string{"many", "", "0x10", "1_000", "Infinity", "NaN"} {
		item := map[string]types.AttributeValue{
			o.KeyAttr: &types.AttributeValueMemberS{Value: "k"}, o.StatusAttr: &types.AttributeValueMemberS{Value: "COMPLETED"},
			o.ExpirationAttr: &types.AttributeValueMemberN{Value: "1900000000"}, o.AttemptsAttr: &types.AttributeValueMemberN{Value: v},
		}
		_, err := c.decode(item)
		if !errors.Is(err, ErrMalformedRecord) || !strings.Contains(err.Error(), `"`+o.AttemptsAttr+`" is not an integer`) {
			t.Errorf("attempts N(%q): decode = %v; want ErrMalformedRecord saying %q is not an integer", v, err, o.AttemptsAttr)
		}
	}
}
