package metrics

import (
	"bytes"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"strconv"
)

// addRuntime registers the Go runtime's and the process's gauges under the
// names the Prometheus client's Go and process collectors give them, so
// that dashboards built on those keep working. The process_* ones are read
// from /proc and left out where it cannot be read.
func (m *Metrics) addRuntime() {
	m.register("go_info", gauge{help: "Information about the Go environment.", kind: "gauge",
		labels: string(appendLabel(nil, "version", runtime.Version())), f: func() float64 { return 1 }})
	m.register("go_goroutines", gauge{help: "Number of goroutines that currently exist.", kind: "gauge",
		f: func() float64 { return float64(runtime.NumGoroutine()) }})
	for _, r := range []struct {
		name, help string
		sum        []string
	}{
		{"go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.",
			[]string{"/memory/classes/heap/objects:bytes"}},
		{"go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.",
			[]string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}},
		{"go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used.",
			[]string{"/memory/classes/heap/free:bytes", "/memory/classes/heap/released:bytes"}},
		{"go_memstats_heap_released_bytes", "Number of heap bytes released to OS.",
			[]string{"/memory/classes/heap/released:bytes"}},
		{"go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator.",
			[]string{"/memory/classes/heap/stacks:bytes"}},
		{"go_memstats_sys_bytes", "Number of bytes obtained from system.",
			[]string{"/memory/classes/total:bytes"}},
		{"go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.",
			[]string{"/gc/heap/goal:bytes"}},
	} {
		m.register(r.name, gauge{help: r.help, kind: "gauge", f: func() float64 { return readRuntime(r.sum) }})
	}
	stat := func(field int) func() float64 { // a number of /proc/self/stat, 1-based as proc(5) counts
		return func() float64 { v, _ := procStat(field); return v }
	}
	hasProc := func() bool { _, ok := procStat(14); return ok }
	m.register("process_cpu_seconds_total", gauge{help: "Total user and system CPU time spent in seconds.", kind: "counter",
		present: hasProc, f: func() float64 { u, _ := procStat(14); s, _ := procStat(15); return (u + s) / clockTicks }})
	m.register("process_resident_memory_bytes", gauge{help: "Resident memory size in bytes.", kind: "gauge",
		present: hasProc, f: func() float64 { v, _ := procStat(24); return v * float64(os.Getpagesize()) }})
	m.register("process_virtual_memory_bytes", gauge{help: "Virtual memory size in bytes.", kind: "gauge",
		present: hasProc, f: stat(23)})
	m.register("process_start_time_seconds", gauge{help: "Start time of the process since unix epoch in seconds.", kind: "gauge",
		present: hasProc, f: func() float64 { v, _ := procStat(22); return bootTime() + v/clockTicks }})
	m.register("process_open_fds", gauge{help: "Number of open file descriptors.", kind: "gauge",
		present: hasProc, f: func() float64 {
			fds, err := os.ReadDir("/proc/self/fd")
			if err != nil {
				return 0
			}
			return float64(len(fds))
		}})
}

// clockTicks is USER_HZ, the unit of /proc's times: 100 on every Linux
// platform Go supports (the Prometheus client assumes it too).
const clockTicks = 100

// readRuntime sums the runtime/metrics samples of names.
func readRuntime(names []string) float64 {
	s := make([]rtmetrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	rtmetrics.Read(s)
	var v float64
	for _, x := range s {
		if x.Value.Kind() == rtmetrics.KindUint64 {
			v += float64(x.Value.Uint64())
		}
	}
	return v
}

// procStat is field (1-based, as proc(5) numbers them) of /proc/self/stat.
func procStat(field int) (float64, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:]) // from field 3 on
	if field-3 < 0 || field-3 >= len(f) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(f[field-3]), 64)
	return v, err == nil
}

// bootTime is /proc/stat's btime, the boot time in Unix seconds.
func bootTime() float64 {
	b, _ := os.ReadFile("/proc/stat")
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			t, _ := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			return t
		}
	}
	return 0
}
