// Package powertools reads and writes the idempotency records of Powertools
// for AWS Lambda (Python, TypeScript, Java, .NET) as each of them does: the
// record key Powertools derives for an event, the hash it stores for payload
// validation, and the encoding of the stored response in the `data`
// attribute. It is what a service moving from Powertools to lambdaidem needs
// to honour the old version's records on the same table during a cutover
// (dynamostore's Powertools window uses it); it imports only the standard
// library.
//
// Powertools selects the hashed data with a JMESPath expression
// (event_key_jmespath / eventKeyJmesPath); here the caller selects it in Go
// and hands the selection over as JSON ([json.RawMessage], which keeps the
// event's numbers as written and its objects' member order) or as any value
// encoding/json encodes. The key is then
//
//	<prefix>#<hash of the selection in the language's canonical JSON>
//
// with the prefix "<AWS_LAMBDA_FUNCTION_NAME>.<handler>" (Python, Java,
// .NET), the function name alone (TypeScript 2.x), or the configured
// key_prefix / keyPrefix; md5 by default.
//
// What each language does, from its sources (Python 3.2, TypeScript 2.35.0,
// Java 2.x, .NET 1.x/2.x):
//
//   - Python: json.dumps(selection, sort_keys=True) with the default
//     separators (", ", ": ") and ensure_ascii, hashed and hex-encoded; the
//     response is stored in `data` as a string, json.dumps(result,
//     sort_keys=True). Checked against vectors computed with Python's json
//     and hashlib (testdata/python.json).
//   - TypeScript: JSON.stringify of the selection with object keys sorted
//     case-insensitively (deepSort; JavaScript still lists integer-like keys
//     first), hashed and base64-encoded; the response is stored in `data` as
//     a native DynamoDB value (marshall: an object is a map, a number a
//     Number). Checked against vectors computed by the real package
//     (testdata/typescript.json).
//   - Java (unverified: derived from the sources, not run against the
//     library): a string selection hashes its text, a number or boolean its
//     Java string, an object or array Jackson's compact JSON in the event's
//     order; the digest is printed as a hexadecimal number (%032x); `data`
//     holds Jackson's JSON of the result, or the result itself when it is a
//     string.
//   - .NET (unverified, likewise): JsonElement.ToString() of the selection
//     (the text of a string, the raw JSON of an object or array), hashed and
//     hex-encoded; `data` holds System.Text.Json's JSON of the result.
package powertools
