// Package stacks builds the lambdaidem example app: a payments stack (an HTTP
// API in front of the examples/api-gateway function) and an orders stack (an
// SQS queue feeding the examples/sqs function), each with its business table and
// an idempotency table from package lambdaidemcdk.
//
// The stacks are functions of plain props ([NewPaymentsStack],
// [NewOrdersStack]) so tests synthesize them directly; [Build] reads the app's
// context (see [Config]) and adds both to an app, which is all main does.
package stacks
