// Package cutover shows a service moving from Powertools for AWS Lambda
// (TypeScript) to lambdaidem on one table: its tests (Test…Cutover…) run
// the real Powertools package (peer.mjs, with the modules dev/bench/powertools
// pins) and a lambdaidem handler with a Powertools window side by side, with
// interleaved, concurrent and crashing duplicates of the same requests, and
// count the business effects, with the window open and closed.
package cutover
