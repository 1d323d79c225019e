package chronos

import "testing"

func TestWeightedOrderVisitsQueuesFirstInProportionToWeight(t *testing.T) {
	s := NewServer(nil, ServerConfig{Queues: map[string]int{"critical": 6, "default": 3, "low": 1}})
	const draws = 20000
	first := map[string]int{}
	for range draws {
		o := s.order()
		if len(o) != 3 {
			t.Fatalf("order = %v", o)
		}
		first[o[0]]++
	}
	for q, want := range map[string]float64{"critical": 0.6, "default": 0.3, "low": 0.1} {
		got := float64(first[q]) / draws
		if got < want-0.03 || got > want+0.03 { // about 9 standard deviations
			t.Errorf("%s first in %.3f of fetches, want about %.1f", q, got, want)
		}
	}
}

func TestStrictOrderIsByDecreasingWeight(t *testing.T) {
	s := NewServer(nil, ServerConfig{StrictPriority: true, Queues: map[string]int{"b": 1, "a": 1, "top": 9}})
	if o := s.order(); len(o) != 3 || o[0] != "top" || o[1] != "a" || o[2] != "b" {
		t.Fatalf("order = %v, want [top a b] (ties by name)", o)
	}
}
