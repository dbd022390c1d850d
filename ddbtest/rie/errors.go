package rie

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Sentinels for errors.Is.
var (
	// ErrTimeout matches the [*FunctionError] of an invocation the
	// emulator cut off at the function's timeout (Sandbox.Timedout).
	ErrTimeout = errors.New("rie: the function timed out")
	// ErrFunction matches every [*FunctionError]: the function answered
	// with an error (a handler error, a crash, a timeout).
	ErrFunction = errors.New("rie: the function failed")
	// ErrExited is returned by [Function.Invoke] once the function's
	// emulator has exited (see [Function.Exited]).
	ErrExited = errors.New("rie: the execution environment has ended (its emulator exited)")
	// ErrNotFound is returned by [Find] when no emulator binary is found.
	ErrNotFound = errors.New("rie: aws-lambda-rie not found; install it with: go install " + Module)
)

// TimedOutType is the errorType Lambda reports for an invocation cut off
// at its timeout.
const TimedOutType = "Sandbox.Timedout"

// FunctionError is a function error as the caller sees it: Lambda's error
// document (errorType, errorMessage), or, for the classic emulator's
// timeout answer (plain text, "Task timed out after N.00 seconds"), the
// same thing Lambda itself reports: Type [TimedOutType].
// errors.Is(err, [ErrTimeout]) reports a timeout; errors.Is(err,
// [ErrFunction]) any function error.
type FunctionError struct {
	// Type is the errorType: "Sandbox.Timedout", "Runtime.ExitError", the
	// handler's error type, ...
	Type string
	// Message is the errorMessage, or the emulator's plain-text answer.
	Message string
	// Status is the emulator's HTTP status.
	Status int
}

// Error implements error.
func (e *FunctionError) Error() string {
	if e.Message == "" {
		return "rie: function error " + e.Type
	}
	return "rie: function error " + e.Type + ": " + e.Message
}

// Is reports whether target is [ErrFunction], or [ErrTimeout] for a
// timeout.
func (e *FunctionError) Is(target error) bool {
	return target == ErrFunction || (target == ErrTimeout && e.Type == TimedOutType)
}

// TimedOut reports whether the function was cut off at its timeout.
func (e *FunctionError) TimedOut() bool { return e.Type == TimedOutType }

// timeoutPrefix starts the classic emulator's plain-text timeout answer.
var timeoutPrefix = []byte("Task timed out after")

// parseFunctionError recognizes the emulator's error answers and returns
// nil for a successful one: classic mode answers a timeout with 200 and a
// plain-text body, a crash with 502 and an error document; Managed
// Instances mode answers both with 200 and an error document.
func parseFunctionError(status int, body []byte) *FunctionError {
	if bytes.HasPrefix(body, timeoutPrefix) {
		return &FunctionError{Type: TimedOutType, Message: string(bytes.TrimSpace(body)), Status: status}
	}
	if t, msg := ErrorDocument(body); t != "" {
		return &FunctionError{Type: t, Message: msg, Status: status}
	}
	if status >= 300 {
		return &FunctionError{Type: "HTTP" + strconv.Itoa(status), Message: string(bytes.TrimSpace(body)), Status: status}
	}
	return nil
}

// ErrorDocument returns the errorType and errorMessage of a Lambda error
// document ({"errorType": ..., "errorMessage": ...}), or "" when body is
// not one. A document with a message and no type has type "Unhandled".
func ErrorDocument(body []byte) (errorType, message string) {
	var doc struct {
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &doc) != nil {
		return "", ""
	}
	if doc.ErrorType == "" && doc.ErrorMessage != "" {
		return "Unhandled", doc.ErrorMessage
	}
	return doc.ErrorType, doc.ErrorMessage
}

// invokeError wraps a failure to make an invocation or read its answer.
func invokeError(name, what string, err error) error {
	return fmt.Errorf("rie: invoke %s: %s: %w", name, what, err)
}
