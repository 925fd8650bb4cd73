package topology

import (
	"crypto/rand"
	"encoding/hex"
)

// MaxNodes bounds a topology's nodes: one a slot at most (Redis advises
// 1,000), and an index that fits Map's int16 owners.
const MaxNodes = Slots

// The roles a Node may have.
const (
	RolePrimary = "primary"
	RoleReplica = "replica"
)

// Config is the topology CUCKOO.CLUSTER SETCONFIG takes and GETCONFIG
// returns, as JSON, and cluster.json holds.
type Config struct {
	// Epoch is the topology's version: a node refuses one older than its
	// own. Redis's config epoch; CLUSTER INFO's current and own epochs.
	Epoch int64 `json:"epoch"`
	// Myself is the id of the node the topology is pushed to: a node
	// refuses one meant for another (CLUSTER MYID gives a node's id).
	Myself string `json:"myself"`
	Nodes  []Node `json:"nodes"`
}

// Node is one node of a topology.
type Node struct {
	ID   string `json:"id"` // 40 hex digits
	Host string `json:"host"`
	Port int    `json:"port"`
	Role string `json:"role"` // RolePrimary or RoleReplica
	// Primary is a replica's primary's id.
	Primary string `json:"primary,omitempty"`
	// Slots are a primary's slot ranges, first and last included.
	Slots [][2]int `json:"slots,omitempty"`
	// Migrating maps a slot this primary owns and is moving away to the
	// id of the node it moves to; Importing a slot another node owns and
	// this one is taking over to that owner's id.
	Migrating map[int]string `json:"migrating,omitempty"`
	Importing map[int]string `json:"importing,omitempty"`
}

// NewNodeID is a random 40-hex-digit node id, as Redis's.
func NewNodeID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// IsNodeID reports whether id is a node id: 40 hex digits.
func IsNodeID(id string) bool {
	if len(id) != 40 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}
