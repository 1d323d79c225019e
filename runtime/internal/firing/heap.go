package firing

// item is one schedule in the loop. at is the next fire time in Unix
// nanoseconds (8 bytes instead of a 24-byte time.Time, which matters at
// 100k schedules); index is its position in the heap, or -1 while paused.
type item struct {
	id     string
	at     int64
	next   NextFunc
	index  int
	paused bool
}

// fireHeap is a binary min-heap of entries ordered by at, keeping each
// entry's index current so any entry can be removed or fixed in O(log n).
type fireHeap []*item

func (h fireHeap) less(i, j int) bool { return h[i].at < h[j].at }

func (h fireHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *fireHeap) push(e *item) {
	e.index = len(*h)
	*h = append(*h, e)
	h.up(e.index)
}

// remove takes the entry at position i out of the heap.
func (h *fireHeap) remove(i int) *item {
	old := *h
	n := len(old) - 1
	e := old[i]
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil
	*h = old[:n]
	if i != n {
		h.fix(i)
	}
	e.index = -1
	return e
}

// fix restores the heap order after the entry at position i changed.
func (h fireHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h fireHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h fireHeap) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}
