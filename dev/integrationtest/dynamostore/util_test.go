package dynamostore_test

import (
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func sortedKeys(m map[string]types.AttributeValue) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
