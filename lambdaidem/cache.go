package lambdaidem

import (
	"container/list"
	"sync"
	"time"
)

// cache is a bounded LRU of completed records, safe for concurrent use (a
// Lambda Managed Instance runs several invocations in one process). A nil
// cache holds nothing.
type cache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used
	items map[string]*list.Element
}

type cached struct {
	key         string
	fingerprint string
	outcome     []byte
	expiresAt   time.Time
}

func newCache(max int) *cache {
	if max <= 0 {
		return nil
	}
	return &cache{max: max, order: list.New(), items: make(map[string]*list.Element)}
}

// get returns the live entry for key at now.
func (c *cache) get(key string, now time.Time) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return cached{}, false
	}
	e := el.Value.(cached)
	if e.expiresAt.Before(now) {
		c.order.Remove(el)
		delete(c.items, key)
		return cached{}, false
	}
	c.order.MoveToFront(el)
	return e, true
}

// put remembers a completed record.
func (c *cache) put(r Record) {
	if c == nil || r.Status != StatusCompleted {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := cached{key: r.Key, fingerprint: r.Fingerprint, outcome: r.Outcome, expiresAt: r.ExpiresAt}
	if el, ok := c.items[r.Key]; ok {
		el.Value = e
		c.order.MoveToFront(el)
		return
	}
	c.items[r.Key] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(cached).key)
	}
}
