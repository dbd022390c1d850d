package lambdaidem

// OperationKey returns the downstream key of the operation whose record
// key is recordKey: what [Attempt.OperationKey] gave every attempt at it,
// and [Unknown.OperationKey] gives a reconcile function. An operator
// settling an UNKNOWN record by hand asks the downstream API about it.
func OperationKey(recordKey string) string { return operationKey(recordKey) }
