package kube

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Deletions remembers the objects a controller deleted a moment ago, so that a reconcile of a
// cached copy that does not show the deletion yet does not act on the object again (and count
// or announce the deletion twice). It is safe for concurrent use.
type Deletions struct {
	mu   sync.Mutex
	uids map[types.UID]time.Time
}

// deletionMemory is how long a deletion is remembered: far longer than a cache takes to see it.
const deletionMemory = time.Minute

// Add remembers that the object with uid was deleted at now.
func (d *Deletions) Add(uid types.UID, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.uids == nil {
		d.uids = map[types.UID]time.Time{}
	}
	for k, at := range d.uids {
		if now.Sub(at) > deletionMemory {
			delete(d.uids, k)
		}
	}
	d.uids[uid] = now
}

// Has reports whether the object with uid was deleted less than a minute before now.
func (d *Deletions) Has(uid types.UID, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.uids[uid]
	return ok && now.Sub(at) <= deletionMemory
}
