// Package topology is a cluster's layout as data: Redis Cluster's hash slots
// and the topology an operator pushes to every node (CUCKOO.CLUSTER
// SETCONFIG), checked and compiled into the lookups a node's redirect check
// makes on every command.
//
// # Terminology
//
//   - A slot is one of the 16384 (Slots) hash slots of Redis Cluster. A
//     key's slot (KeySlot) is the CRC16 (XMODEM) of the key, or of its hash
//     tag (the bytes between the first '{' and the first '}' after it, if
//     not empty), mod 16384: Redis's, so that cluster clients route keys as
//     the servers do.
//   - A Config is a topology as JSON has it (cluster.json, SETCONFIG,
//     GETCONFIG): an epoch, the id of the node it is pushed to (myself), and
//     the nodes, each a primary owning slot ranges or a replica of one.
//   - A Map is a Config compiled: every check passed, and each slot's owner,
//     myself's migrating and importing slots, the nodes by id, in arrays and
//     maps. A node is named by its index in Map.Nodes.
//
// # Invariants
//
// Compile refuses a Config that does not hold together, with a message
// that names the node and the fault; a Map it returns satisfies:
//
//   - every node id is 40 hex digits, and no id is listed twice;
//   - myself is in Nodes (appended as a primary with no slots if the
//     Config does not list it: a node not yet given slots);
//   - a slot has at most one owner, a primary; Assigned counts the slots
//     with one, and Ranges(i) are exactly the slots whose Owner is i;
//   - a replica's primary is a primary listed, and a replica owns no slots
//     and migrates or imports none;
//   - a primary migrates only slots it owns, imports only slots it does
//     not, each to or from another primary listed.
//
// A Map is immutable: the node publishes a new one as a whole (an atomic
// pointer), so a command's check loads one and sees one topology. Its
// slices and maps (Nodes, Config) are shared, never to be modified.
//
// What a node does with it is internal/cluster's: where a command goes
// (-MOVED, -ASK, -TRYAGAIN, -CROSSSLOT), the addresses of a node that the
// topology leaves out (myself's, taken from the connection), the CLUSTER
// commands' replies, the slot locks, and the topology's file.
//
// It imports only the standard library, nothing of the server's; packages
// cluster and server import it.
package topology
