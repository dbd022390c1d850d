package lambdaidem

import "sync"

// waiters counts the calls waiting on each in-flight key, to bound them.
type waiters struct {
	mu sync.Mutex
	n  map[string]int
}

// enter admits one more waiter on key unless max already wait.
func (w *waiters) enter(key string, max int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n[key] >= max {
		return false
	}
	w.n[key]++
	return true
}

func (w *waiters) leave(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n[key]--; w.n[key] <= 0 {
		delete(w.n, key)
	}
}
