package metrics

// The Go runtime's and the process's standard metrics, under the names
// client_golang's Go and process collectors give them, read when
// scraped.

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runtimeFamilies are go_* and process_*.
func runtimeFamilies() []family {
	return []family{
		{name: "go_memstats", samples: writeMemStats, own: true}, // several names: see writeMemStats
		funcFamily("go_goroutines", "Number of goroutines that currently exist.", "gauge", "", func() float64 { return float64(runtime.NumGoroutine()) }),
		funcFamily("go_threads", "Number of OS threads created.", "gauge", "", func() float64 { n, _ := runtime.ThreadCreateProfile(nil); return float64(n) }),
		funcFamily("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously.", "gauge", "", func() float64 { return float64(runtime.GOMAXPROCS(0)) }),
		funcFamily("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64.", "gauge", "", func() float64 { return float64(debug.SetMemoryLimit(-1)) }),
		funcFamily("go_info", "Information about the Go environment.", "gauge", `version="`+escapeLabel(runtime.Version())+`"`, func() float64 { return 1 }),
		{name: "go_gc_duration_seconds", help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", typ: "summary", samples: writeGCPauses},
		{name: "process", samples: writeProcess, own: true}, // several names: see writeProcess
	}
}

// stat is one sample of a family of its own.
type stat struct {
	name, help, typ string
	v               float64
}

// writeStats writes each stat as a family, HELP and TYPE included, its
// name after prefix.
func writeStats(w *bufio.Writer, prefix string, stats []stat) {
	for _, m := range stats {
		w.WriteString("# HELP " + prefix + m.name + " " + escapeHelp(m.help) + "\n# TYPE " + prefix + m.name + " " + m.typ + "\n")
		sample(w, prefix+m.name, "", m.v)
	}
}

// memStats are the go_memstats_* metrics.
func memStats(ms *runtime.MemStats) []stat {
	return []stat{
		{"alloc_bytes", "Number of bytes allocated in heap and currently in use.", "gauge", float64(ms.Alloc)},
		{"alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already.", "counter", float64(ms.TotalAlloc)},
		{"buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table.", "gauge", float64(ms.BuckHashSys)},
		{"frees_total", "Total number of heap objects frees.", "counter", float64(ms.Frees)},
		{"gc_sys_bytes", "Number of bytes used for garbage collection system metadata.", "gauge", float64(ms.GCSys)},
		{"heap_alloc_bytes", "Number of heap bytes allocated and currently in use.", "gauge", float64(ms.HeapAlloc)},
		{"heap_idle_bytes", "Number of heap bytes waiting to be used.", "gauge", float64(ms.HeapIdle)},
		{"heap_inuse_bytes", "Number of heap bytes that are in use.", "gauge", float64(ms.HeapInuse)},
		{"heap_objects", "Number of currently allocated objects.", "gauge", float64(ms.HeapObjects)},
		{"heap_released_bytes", "Number of heap bytes released to OS.", "gauge", float64(ms.HeapReleased)},
		{"heap_sys_bytes", "Number of heap bytes obtained from system.", "gauge", float64(ms.HeapSys)},
		{"last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", "gauge", float64(ms.LastGC) / 1e9},
		{"mallocs_total", "Total number of heap objects allocated, both live and gc-ed.", "counter", float64(ms.Mallocs)},
		{"mcache_inuse_bytes", "Number of bytes in use by mcache structures.", "gauge", float64(ms.MCacheInuse)},
		{"mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system.", "gauge", float64(ms.MCacheSys)},
		{"mspan_inuse_bytes", "Number of bytes in use by mspan structures.", "gauge", float64(ms.MSpanInuse)},
		{"mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system.", "gauge", float64(ms.MSpanSys)},
		{"next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", "gauge", float64(ms.NextGC)},
		{"other_sys_bytes", "Number of bytes used for other system allocations.", "gauge", float64(ms.OtherSys)},
		{"stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments.", "gauge", float64(ms.StackInuse)},
		{"stack_sys_bytes", "Number of bytes obtained from system for stack allocator.", "gauge", float64(ms.StackSys)},
		{"sys_bytes", "Number of bytes obtained from system.", "gauge", float64(ms.Sys)},
	}
}

// writeMemStats writes every go_memstats_* family, each with its HELP
// and TYPE: the names sort together, so the order stays sorted.
func writeMemStats(w *bufio.Writer) bool {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	writeStats(w, "go_memstats_", memStats(&ms))
	return true
}

// writeGCPauses writes the pause summary: the quantiles of the recent
// pauses the runtime keeps, their sum and count.
func writeGCPauses(w *bufio.Writer) bool {
	var st debug.GCStats
	st.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&st)
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		v := 0.0
		if st.NumGC > 0 {
			v = st.PauseQuantiles[i].Seconds()
		}
		sample(w, "go_gc_duration_seconds", `quantile="`+q+`"`, v)
	}
	sample(w, "go_gc_duration_seconds_sum", "", st.PauseTotal.Seconds())
	sample(w, "go_gc_duration_seconds_count", "", float64(st.NumGC))
	return true
}

// writeProcess writes the process_* families from /proc (none where
// /proc is not).
func writeProcess(w *bufio.Writer) bool {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return false
	}
	// The fields after the command name, which may hold spaces: field 3
	// (state) is f[0].
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 22 {
		return false
	}
	num := func(i int) float64 { n, _ := strconv.ParseFloat(f[i-3], 64); return n }
	const ticks = 100 // USER_HZ, fixed at 100 on Linux's user interface
	page := float64(os.Getpagesize())
	fds, _ := os.ReadDir("/proc/self/fd")
	var nofile, as syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile)
	_ = syscall.Getrlimit(syscall.RLIMIT_AS, &as)
	writeStats(w, "", []stat{
		{"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter", (num(14) + num(15)) / ticks},
		{"process_max_fds", "Maximum number of open file descriptors.", "gauge", float64(nofile.Cur)},
		{"process_open_fds", "Number of open file descriptors.", "gauge", float64(len(fds))},
		{"process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", num(24) * page},
		{"process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge", bootTime() + num(22)/ticks},
		{"process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", num(23)},
		{"process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", "gauge", float64(as.Cur)},
	})
	return true
}

// bootTime is the boot time in seconds since the epoch (/proc/stat's
// btime).
func bootTime() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n
		}
	}
	return 0
}
