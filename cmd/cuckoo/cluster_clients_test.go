package main

import (
	"github.com/cuckoohash/cuckoo/internal/prereq"
	"os/exec"
	"strings"
	"testing"
)

// TestClusterOtherTools: tools made for Redis Cluster read a cuckoo cluster
// as they read Redis's: redis-cli --cluster check finds every slot covered
// and the nodes agreeing, and redis-py's RedisCluster routes CF.ADD and
// CF.EXISTS by slot. Each part is
// skipped if its tool is not installed (.ci/run installs both: Debian's
// redis-tools and python3-redis).
func TestClusterOtherTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs server processes; skipped with -short")
	}
	addrs := startNodes(t, 3)
	if code, out, errOut := cuckoo(t, "", append([]string{"cluster", "create"}, addrs...)...); code != 0 {
		t.Fatalf("cluster create: exit %d\n%s%s", code, out, errOut)
	}
	if cli := prereq.Program(t, "redis-cli"); cli != "" {
		out, err := exec.Command(cli, "--cluster", "check", addrs[0]).CombinedOutput()
		for _, want := range []string{"[OK] All nodes agree about slots configuration.", "[OK] All 16384 slots covered."} {
			if err != nil || !strings.Contains(string(out), want) {
				t.Errorf("redis-cli --cluster check: %v, lacks %q:\n%s", err, want, out)
			}
		}
	}
	py := ""
	// The python3 on PATH, or Debian's, where python3-redis installs.
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(name); err == nil && exec.Command(p, "-c", "import redis.cluster").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Log("python3 with redis-py (Debian python3-redis) not installed: RedisCluster not run")
		return
	}
	host, port, _ := strings.Cut(addrs[0], ":")
	script := `
import sys
from redis.cluster import RedisCluster, ClusterNode
rc = RedisCluster(startup_nodes=[ClusterNode(sys.argv[1], int(sys.argv[2]))])
for i in range(300):
    rc.execute_command("CF.ADD", "urls:%d" % i, "https://example.com/%d" % i)
print(sum(rc.execute_command("CF.EXISTS", "urls:%d" % i, "https://example.com/%d" % i) for i in range(300)))
print(len({rc.get_node_from_key("urls:%d" % i).name for i in range(300)}))
`
	out, err := exec.Command(py, "-c", script, host, port).CombinedOutput()
	if err != nil || strings.Fields(string(out))[0] != "300" || strings.Fields(string(out))[1] != "3" {
		t.Errorf("redis-py RedisCluster: %v: want 300 items found on 3 nodes, got\n%s", err, out)
	}
}
