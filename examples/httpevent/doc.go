// Package httpevent turns a net/http request into the HTTP API (payload
// format 2.0) event API Gateway would send for it, and writes the handler's
// response back. The dev server, the end-to-end suite and the benchmarks
// use it to drive a Lambda handler over plain HTTP.
//
//	routes, _ := httpevent.NewRoutes("POST /payments", "GET /payments/{id}")
//	http.ListenAndServe(addr, httpevent.Handler(&httpevent.Translator{Routes: routes}, handler))
package httpevent
