package sqsbatch

import (
	"context"
	"strconv"
	"sync"
)

// plan splits a batch into lanes: lists of items that run one after the
// other, in batch order. A FIFO queue's lane is a message group, so a group
// keeps its order; a standard queue's lane holds the messages that share a
// record key, so a duplicate in the same batch runs after the first and
// replays its outcome instead of finding it in progress. A malformed
// message of a standard queue is a lane of its own.
func plan(items []*item) [][]*item {
	var lanes [][]*item
	index := make(map[string]int)
	for i, it := range items {
		var id string
		switch {
		case it.fifo:
			id = "group\x00" + it.group
		case it.malformed != nil:
			id = "malformed\x00" + strconv.Itoa(i)
		default:
			id = "key\x00" + it.key
		}
		n, ok := index[id]
		if !ok {
			n = len(lanes)
			index[id] = n
			lanes = append(lanes, nil)
		}
		lanes[n] = append(lanes[n], it)
	}
	return lanes
}

// run processes the lanes, at most Concurrency at once, and returns when
// every item has its result.
func (w *wrapper) run(ctx context.Context, lanes [][]*item) {
	locks := &keyLocks{m: make(map[string]*sync.Mutex)}
	work := make(chan []*item)
	var wg sync.WaitGroup
	for range min(w.opts.Concurrency, len(lanes)) {
		wg.Go(func() {
			for lane := range work {
				w.runLane(ctx, lane, locks)
			}
		})
	}
	for _, lane := range lanes {
		work <- lane
	}
	close(work)
	wg.Wait()
}

// runLane processes a lane in order. In a FIFO group, the first failure
// fails every later message of the group without running it.
func (w *wrapper) runLane(ctx context.Context, lane []*item, locks *keyLocks) {
	groupFailed := false
	for _, it := range lane {
		switch {
		case it.fifo && groupFailed:
			w.skip(ctx, it, "an earlier message of its FIFO group failed in this batch")
		case ctx.Err() != nil:
			w.skip(ctx, it, "the invocation ended before the message was processed")
		default:
			w.process(ctx, it, locks)
		}
		groupFailed = groupFailed || it.failed
	}
}

// keyLocks serializes, within one batch, the messages that share a record
// key across lanes (two FIFO groups carrying the same key). A lane holds at
// most one lock, only while one message runs, so lanes cannot deadlock.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (l *keyLocks) lock(key string) (unlock func()) {
	l.mu.Lock()
	m, ok := l.m[key]
	if !ok {
		m = new(sync.Mutex)
		l.m[key] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}
