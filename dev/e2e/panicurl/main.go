// Command panicurl is a test function for the end-to-end suite: an
// http.Handler served by lambdaurl.Start whose handler panics on its first
// run, once behind the httpidem middleware (POST /guarded) and once bare
// (POST /bare), so that the suite can check under the Runtime Interface
// Emulator what each does to the process: lambdaurl.Wrap runs the handler
// in a goroutine without a recover. Its store is in memory (the emulator
// keeps the process between invocations); every answer carries the
// process's invocation count, which a restart resets.
package main

import (
	"fmt"
	"log"
	"net/http"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

func main() {
	guard, err := lambdaidem.New(memstore.New())
	if err != nil {
		log.Fatal(err)
	}
	idem, err := httpidem.New(guard, "Charge")
	if err != nil {
		log.Fatal(err)
	}
	var invocations, guardedRuns atomic.Int32
	count := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Invocation", fmt.Sprint(invocations.Add(1)))
			next.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("POST /guarded", idem(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if guardedRuns.Add(1) == 1 {
			panic("guarded: first run")
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"charged":true}`)
	})))
	mux.HandleFunc("POST /bare", func(http.ResponseWriter, *http.Request) { panic("bare: no middleware") })
	lambdaurl.Start(count(mux))
}
