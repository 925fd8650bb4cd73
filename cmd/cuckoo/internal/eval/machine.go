package eval

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine describes where an evaluation ran; every report starts with it.
type Machine struct {
	CPU        string
	CPUs       int
	GOMAXPROCS int
	Go         string
	OS, Arch   string
}

// ThisMachine returns the machine this process runs on.
func ThisMachine() Machine {
	return Machine{
		CPU: cpuModel(), CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
	}
}

func (m Machine) String() string {
	return fmt.Sprintf("%s, %d logical CPUs, GOMAXPROCS=%d, %s %s/%s", m.CPU, m.CPUs, m.GOMAXPROCS, m.Go, m.OS, m.Arch)
}

// cpuModel returns the first "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(data)) {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown CPU"
}
