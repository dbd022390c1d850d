// Package relaymodel replays schedules of the outbox model (model/outbox.pml)
// against the real relay (dynamostore/relay) over ddbtest's endpoint: two
// relays driven call by call as a spin simulation's "EV" lines say, crashes
// included, the stored outbox item and the target's landings compared with
// the model's after every event. Its content is the test (replay_test.go).
package relaymodel
