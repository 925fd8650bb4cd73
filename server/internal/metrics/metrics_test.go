package metrics

import (
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHandler: what was observed, and the gauges registered, are served
// in the Prometheus text format.
func TestHandler(t *testing.T) {
	m := New()
	m.ObserveCommand("cf.add", time.Millisecond)
	m.ObserveCommand("cf.add", time.Millisecond)
	m.ObserveFsync(time.Millisecond)
	m.Gauge("cuckoo_keys", "Keys.", func() float64 { return 42 })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`cuckoo_commands_total{command="cf.add"} 2`,
		"cuckoo_command_duration_seconds_count 2",
		"cuckoo_fsync_duration_seconds_count 1",
		"cuckoo_keys 42",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %q", want)
		}
	}
}

// scrape returns the text Handler serves.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	return rec.Body.String()
}

// TestTextFormat: every family has its HELP and TYPE lines before its
// samples, families come sorted by name and once each, a histogram's
// buckets are cumulative up to le="+Inf", which equals its _count, and
// label values and help texts are escaped.
func TestTextFormat(t *testing.T) {
	m := New()
	for _, d := range []time.Duration{50, 500, 5000, time.Second, time.Hour} {
		m.ObserveCommand("get", d)
	}
	m.ObserveCommand(`odd"name\`, 1)
	m.Gauge("cuckoo_odd", "Two\nlines, a \\.", func() float64 { return 1.5 })
	body := scrape(t, m)
	for _, want := range []string{
		`cuckoo_commands_total{command="get"} 5`,
		`cuckoo_commands_total{command="odd\"name\\"} 1`,
		`cuckoo_command_duration_seconds_bucket{le="1e-07"} 2`, // 50 ns and 1 ns
		`cuckoo_command_duration_seconds_bucket{le="4e-07"} 2`,
		`cuckoo_command_duration_seconds_bucket{le="1.6e-06"} 3`,
		`cuckoo_command_duration_seconds_bucket{le="0.4194304"} 4`,
		`cuckoo_command_duration_seconds_bucket{le="+Inf"} 6`,
		"cuckoo_command_duration_seconds_count 6",
		`# HELP cuckoo_odd Two\nlines, a \\.`,
		"# TYPE cuckoo_odd gauge\ncuckoo_odd 1.5\n",
		"# TYPE cuckoo_commands_total counter",
		"# TYPE cuckoo_command_duration_seconds histogram",
		`go_info{version="` + runtime.Version() + `"} 1`,
		"go_goroutines ",
		"go_memstats_alloc_bytes ",
		"process_resident_memory_bytes ",
		"process_cpu_seconds_total ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %q", want)
		}
	}
	var families []string
	typed := map[string]bool{}
	var last float64
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name = strings.Fields(name)[0]
			families = append(families, name)
			typed[name] = true
			last = -1
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		base, _, _ := strings.Cut(name, "{")
		fam := families[len(families)-1]
		if base != fam && base != fam+"_bucket" && base != fam+"_sum" && base != fam+"_count" {
			t.Errorf("sample %q under family %s", line, fam)
		}
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil {
			t.Errorf("sample %q: %v", line, err)
		}
		if base == fam+"_bucket" {
			if v < last {
				t.Errorf("bucket %q below the one before (%g): not cumulative", line, last)
			}
			last = v
		}
	}
	if !slices.IsSorted(families) || len(typed) != len(families) {
		t.Errorf("families out of order or repeated: %v", families)
	}
}

// TestGaugeTwice: a name registered twice is a programming error.
func TestGaugeTwice(t *testing.T) {
	for _, name := range []string{"cuckoo_keys", "go_goroutines", "cuckoo_commands_total"} {
		m := New()
		if name == "cuckoo_keys" {
			m.Gauge(name, "", func() float64 { return 0 })
		}
		func() {
			defer func() {
				if r := recover(); r != "metrics: "+name+" is registered twice" {
					t.Errorf("Gauge(%s) twice: recovered %v", name, r)
				}
			}()
			m.Gauge(name, "", func() float64 { return 0 })
		}()
	}
}

// TestObserveAllocs: counting a command already seen allocates nothing (it
// runs on every command when metrics are on).
func TestObserveAllocs(t *testing.T) {
	m := New()
	m.ObserveCommand("cf.add", 1)
	if n := testing.AllocsPerRun(100, func() { m.ObserveCommand("cf.add", 1) }); n != 0 {
		t.Errorf("ObserveCommand allocates %v times a call", n)
	}
}

// TestConcurrent: observations racing scrapes lose nothing (run with -race).
func TestConcurrent(t *testing.T) {
	m := New()
	const goroutines, each = 4, 1000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				m.ObserveCommand([]string{"a", "b"}[(g+i)%2], time.Microsecond)
				m.ObserveFsync(time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			scrape(t, m)
		}
	})
	wg.Wait()
	body := scrape(t, m)
	for _, want := range []string{
		`cuckoo_commands_total{command="a"} 2000`, `cuckoo_commands_total{command="b"} 2000`,
		"cuckoo_command_duration_seconds_count 4000", "cuckoo_command_duration_seconds_sum 0.00",
		"cuckoo_fsync_duration_seconds_count 4000",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %q", want)
		}
	}
}

// BenchmarkObserveCommand is the cost metrics add to every command when they
// are on: counting a command already seen and timing it, from every core.
func BenchmarkObserveCommand(b *testing.B) {
	m := New()
	m.ObserveCommand("cf.add", time.Microsecond)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveCommand("cf.add", time.Microsecond)
		}
	})
}
