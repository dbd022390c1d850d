package memstore_test

import (
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		s := memstore.New()
		return storetest.Harness{
			Store:         s,
			Effect:        func(id string) any { return memstore.Put{Table: "business", Key: id, Value: []byte(id)} },
			FailingEffect: func(id string) any { return memstore.Check{Table: "business", Key: id} },
			Written: func(t testing.TB, id string) bool {
				_, ok := s.Item("business", id)
				return ok
			},
		}
	})
}
